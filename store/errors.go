package store

import (
	"errors"

	"github.com/plaitdag/plait/internal/ids"
)

// ErrUnsupported is the category of [*UnsupportedError]: the store does not
// implement a capability the call needs.
var ErrUnsupported = errors.New("plait: unsupported by the store")

// UnsupportedError names the capability a store lacks. It matches
// [ErrUnsupported] with errors.Is.
type UnsupportedError struct {
	// Capability is the name of the missing interface, such as "Pinger".
	Capability string
}

// Error names the missing capability.
func (e *UnsupportedError) Error() string {
	return "plait: the store does not implement " + e.Capability
}

// Is matches [ErrUnsupported].
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// OptionError reports one option given to [New] out of range. New joins
// one per problem with errors.Join. It matches [ErrInvalidOption] with
// errors.Is.
type OptionError struct {
	// Option is the option's name, such as "WithConcurrency".
	Option string
	// Value is the value given, as text. A string value is quoted and cut
	// as every caller's string in an error is (see [ValidationError]).
	Value string
	// Reason says what the value breaks, such as "must be at least 1".
	Reason string
}

// Error reads like the call that was made: "plait: invalid option
// WithConcurrency(0): must be at least 1".
func (e *OptionError) Error() string {
	return "plait: invalid option " + e.Option + "(" + e.Value + "): " + e.Reason
}

// Unwrap returns [ErrInvalidOption].
func (e *OptionError) Unwrap() error { return ErrInvalidOption }

// Store-facing sentinels. Stores return them directly (possibly wrapped), so
// callers test with errors.Is regardless of the backend.
var (
	// ErrNotFound: no run with that id (or it expired by retention).
	ErrNotFound = errors.New("plait: not found")
	// ErrStaleEpoch: the write carried a lease whose epoch has moved on; the
	// store changed nothing.
	ErrStaleEpoch = errors.New("plait: stale epoch")
	// ErrStoreFull: the backend refused a write for lack of memory (Redis
	// OOM); nothing was half-written.
	ErrStoreFull = errors.New("plait: store is full")
	// ErrInvalidArgument: a store method got arguments it cannot act on.
	ErrInvalidArgument = errors.New("plait: invalid argument")
	// ErrRejected: the backend refused the call as a whole for what it
	// carries (a Redis error reply such as "Protocol error: invalid bulk
	// length" for an argument over the server's proto-max-bulk-len, or a
	// script error), so that sending it again unchanged meets the same
	// refusal; nothing was half-written. A batch call may go through split
	// in parts: the Scheduler's finisher halves a rejected batch of outcomes
	// down to single outcomes and fails an attempt whose outcome is still
	// rejected on its own. Stores wrap it around the backend's error.
	ErrRejected = errors.New("plait: call rejected by the store")
)

var (
	// ErrInvalidOption: an option given to New is out of range (each one
	// is an [*OptionError]), New got a nil store, or Handle a nil handler.
	ErrInvalidOption = errors.New("plait: invalid option")
)

// quote renders a caller's string for an error message (see [ids.Quote]).
func quote(s string) string { return ids.Quote(s) }
