package plait

import (
	"errors"

	"github.com/plaitdag/plait/store"
)

// ErrFellBehind is the category of [*FellBehindError]: a reader of events
// was slower than the stream's cap, and events it had not read were
// dropped.
var ErrFellBehind = errors.New("plait: events dropped before they were read")

// FellBehindError is returned once by [Subscription.Next] when the events
// after the subscription's cursor were partly dropped by the store's cap.
// The next call delivers from the oldest event kept. It matches
// [ErrFellBehind] with errors.Is.
type FellBehindError struct {
	// After is the cursor the subscription had reached.
	After EventCursor
}

// Error says that events were lost to the reader.
func (e *FellBehindError) Error() string {
	return "plait: events after cursor " + string(e.After) + " were dropped by the store's cap before they were read"
}

// Is matches [ErrFellBehind].
func (e *FellBehindError) Is(target error) bool { return target == ErrFellBehind }

// The events a store records, as a [Subscription] answers them,
// re-exported from package store.
type (
	// StoreEvent is one recorded event: see [store.StoreEvent].
	StoreEvent = store.StoreEvent
	// StoreEventType names what a StoreEvent records.
	StoreEventType = store.StoreEventType
	// EventCursor is a position in an event stream.
	EventCursor = store.EventCursor
)

// EventTaskWaiting records that a ready task waits for something no live
// process gives (a handler, a capability, a limit).
const EventTaskWaiting = store.EventTaskWaiting

// RunEventType is the type of the event a run's move to st records.
func RunEventType(st RunStatus) StoreEventType { return store.RunEventType(st) }

// TaskEventType is the type of the event a task's move to st records.
func TaskEventType(st TaskStatus) StoreEventType { return store.TaskEventType(st) }
