package plait

import "github.com/plaitdag/plait/store"

// Priority orders ready tasks: see [store.Priority]. The zero value is
// PriorityNormal.
type Priority = store.Priority

// Priorities, lowest first, and the queue tasks go to unless [OnQueue]
// names another.
const (
	PriorityLow    = store.PriorityLow
	PriorityNormal = store.PriorityNormal
	PriorityHigh   = store.PriorityHigh
	PriorityUrgent = store.PriorityUrgent
	DefaultQueue   = store.DefaultQueue
)
