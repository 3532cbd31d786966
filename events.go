package plait

import (
	"errors"
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
