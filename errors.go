package plait

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/plaitdag/plait/internal/ids"
)

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
)

// Scheduler sentinels.
var (
	// ErrLeaseLost is the cause of a handler's context cancellation when its
	// lease was lost: another worker may be running the same attempt.
	ErrLeaseLost = errors.New("plait: lease lost")
	// ErrRunCancelled is the cause of a handler's context cancellation when
	// its run was cancelled or stopped by a failure elsewhere.
	ErrRunCancelled = errors.New("plait: run cancelled")
	// ErrTimeout is the cause of a handler's context cancellation when the
	// task's timeout passed, and is wrapped by the error recorded for the
	// attempt.
	ErrTimeout = errors.New("plait: task timed out")
	// ErrShutdown is the cause of a handler's context cancellation when Run
	// is stopping and the shutdown timeout passed.
	ErrShutdown = errors.New("plait: scheduler shutting down")
	// ErrUnknownHandler: Submit got a task naming a handler this process
	// has not registered (see WithRemoteHandlers). A worker that claims
	// such a task does not fail it: it hands the task back for a process
	// that has the handler.
	ErrUnknownHandler = errors.New("plait: unknown handler")
	// ErrPanic marks the error recorded when a handler panicked.
	ErrPanic = errors.New("plait: handler panicked")
	// ErrAlreadyRunning: Run was called while another Run is active.
	ErrAlreadyRunning = errors.New("plait: scheduler already running")
	// ErrInvalidOption: an option given to New is out of range (each one
	// is an [*OptionError]), New got a nil store, or Handle a nil handler.
	ErrInvalidOption = errors.New("plait: invalid option")
)

// Validation categories. Every [*ValidationError] unwraps to one of these
// and to [ErrInvalidWorkflow].
var (
	// ErrInvalidWorkflow is the parent of every validation category.
	ErrInvalidWorkflow = errors.New("plait: invalid workflow")
	// ErrInvalidID: a name is empty, longer than 128 bytes, or has a
	// character outside [A-Za-z0-9._-].
	ErrInvalidID = errors.New("invalid id")
	// ErrDuplicateTask: two tasks share a name.
	ErrDuplicateTask = errors.New("duplicate task")
	// ErrUnknownDep: a dependency names no task of the workflow.
	ErrUnknownDep = errors.New("unknown dependency")
	// ErrSelfDep: a task depends on itself.
	ErrSelfDep = errors.New("task depends on itself")
	// ErrCycle: the dependencies form a cycle; the message lists it.
	ErrCycle = errors.New("dependency cycle")
	// ErrTooManyTasks: the workflow has more tasks than the limit.
	ErrTooManyTasks = errors.New("too many tasks")
	// ErrTooManyDeps: a task has more dependencies than the fan-in limit.
	ErrTooManyDeps = errors.New("too many dependencies")
	// ErrPayloadTooLarge: an encoded payload exceeds the size limit.
	ErrPayloadTooLarge = errors.New("payload too large")
	// ErrInvalidTaskOption: a task option is out of range.
	ErrInvalidTaskOption = errors.New("invalid task option")
	// ErrEmptyWorkflow: the workflow has no task.
	ErrEmptyWorkflow = errors.New("workflow has no task")
)

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

// quoteMax is the longest part of a caller's string an error message
// quotes. It is the longest valid name, so any name that passes validation
// shows whole, while a hostile value of megabytes cannot flood logs through
// the error that rejects it.
const quoteMax = ids.MaxLen

// quote renders a caller's string for an error message: Go-quoted, and cut
// after quoteMax bytes (at a rune boundary) with its full length noted.
func quote(s string) string {
	if len(s) <= quoteMax {
		return strconv.Quote(s)
	}
	cut := quoteMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// ValidationError describes one problem found in a workflow before anything
// was written. Several are joined with errors.Join. The fields hold the
// names as given; the message quotes at most their first 128 bytes, so a
// hostile name cannot flood a log.
type ValidationError struct {
	Workflow string
	Task     string // empty for workflow-level problems
	Field    string // "name", "deps", "payload", "handler", ...
	Reason   string
	// Err is the category sentinel, such as ErrCycle.
	Err error
}

// Error implements error.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("plait: workflow ")
	b.WriteString(quote(e.Workflow))
	if e.Task != "" {
		b.WriteString(" task " + quote(e.Task))
	}
	if e.Field != "" {
		b.WriteString(" " + e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Reason != "" {
		b.WriteString(": " + e.Reason)
	}
	return b.String()
}

// Unwrap returns the category sentinel and ErrInvalidWorkflow.
func (e *ValidationError) Unwrap() []error { return []error{e.Err, ErrInvalidWorkflow} }

// Is matches any *ValidationError target, so errors.Is(err,
// &ValidationError{}) asks "is this a validation problem".
func (e *ValidationError) Is(target error) bool {
	_, ok := target.(*ValidationError)
	return ok
}

// permanentError marks a handler error that must not be retried.
type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

// Permanent wraps err so the task fails at once instead of being retried.
// Permanent(nil) returns nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or an error it wraps, came from
// [Permanent].
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// PanicError is the error recorded when a handler panics.
type PanicError struct {
	Value any
	Stack string
}

// Error implements error; the stack is included so it lands in the task's
// error record.
func (p *PanicError) Error() string {
	return fmt.Sprintf("plait: handler panicked: %v\n%s", p.Value, p.Stack)
}

// Unwrap returns ErrPanic.
func (p *PanicError) Unwrap() error { return ErrPanic }
