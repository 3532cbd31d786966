package plait

import "fmt"

// Priority orders ready tasks: a ready urgent task is claimed before a ready
// high one, and so on. Within a priority, tasks go oldest first.
// The zero value is PriorityNormal.
type Priority int8

// Priorities, lowest first.
const (
	PriorityLow    Priority = -1
	PriorityNormal Priority = 0
	PriorityHigh   Priority = 1
	PriorityUrgent Priority = 2
)

// DefaultQueue is the queue tasks go to unless [OnQueue] names another.
const DefaultQueue = "default"

// Priorities lists every priority, highest first: the claim order.
var priorities = [...]Priority{PriorityUrgent, PriorityHigh, PriorityNormal, PriorityLow}

// ClaimOrder returns the priorities in the order a claim serves them.
func ClaimOrder() []Priority { return append([]Priority(nil), priorities[:]...) }

// String returns the priority's name.
func (p Priority) String() string {
	switch p {
	case PriorityLow:
		return "low"
	case PriorityNormal:
		return "normal"
	case PriorityHigh:
		return "high"
	case PriorityUrgent:
		return "urgent"
	}
	return fmt.Sprintf("priority(%d)", int8(p))
}

func (p Priority) valid() bool { return p >= PriorityLow && p <= PriorityUrgent }
