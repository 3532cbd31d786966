package plait

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/internal/worker"
	"github.com/plaitdag/plait/store"
)

// Scheduler sentinels.
var (
	// ErrLeaseLost is the cause of a handler's context cancellation when its
	// lease was lost: another worker may be running the same attempt.
	ErrLeaseLost = worker.ErrLeaseLost
	// ErrRunCancelled is the cause of a handler's context cancellation when
	// its run was cancelled or stopped by a failure elsewhere.
	ErrRunCancelled = worker.ErrRunCancelled
	// ErrTimeout is the cause of a handler's context cancellation when the
	// task's timeout passed, and is wrapped by the error recorded for the
	// attempt.
	ErrTimeout = worker.ErrTimeout
	// ErrShutdown is the cause of a handler's context cancellation when Run
	// is stopping and the shutdown timeout passed.
	ErrShutdown = worker.ErrShutdown
	// ErrUnknownHandler: Submit got a task naming a handler this process
	// has not registered (see WithRemoteHandlers) or, under
	// WithHandlerCheck, that no live node registers; the error is an
	// [*UnknownHandlerError]. A worker that claims such a task does not
	// fail it: it hands the task back for a process that has the handler.
	ErrUnknownHandler = errors.New("plait: unknown handler")
	// ErrDuplicateHandler: Handle or HandleWith got a handler name
	// already registered. Nothing is replaced: the first handler stays.
	ErrDuplicateHandler = errors.New("plait: duplicate handler")
	// ErrNotAParent: a handler asked for the result of a task that is not
	// a parent of its task; the error is a [*ParentError].
	ErrNotAParent = errors.New("plait: not a parent")
	// ErrDecode: a payload or a result did not decode into the Go value
	// asked for; the error is a [*DecodeError].
	ErrDecode = errors.New("plait: cannot decode")
	// ErrPanic marks the error recorded when a handler panicked.
	ErrPanic = errors.New("plait: handler panicked")
	// ErrAlreadyRunning: Run was called while another Run is active.
	ErrAlreadyRunning = errors.New("plait: scheduler already running")
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

// quote renders a caller's string for an error message (see [ids.Quote]).
func quote(s string) string { return ids.Quote(s) }

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
// Permanent wraps err so the task fails at once instead of being retried.
// Permanent(nil) returns nil.
func Permanent(err error) error { return worker.Permanent(err) }

// IsPermanent reports whether err, or an error it wraps, came from
// [Permanent].
func IsPermanent(err error) bool { return worker.IsPermanent(err) }

// UnknownHandlerError says Submit or SubmitMany refused a task whose
// handler is not registered: by this process, or, under
// [WithHandlerCheck], by any live node. It matches [ErrUnknownHandler] and
// [ErrInvalidWorkflow]; nothing was written.
type UnknownHandlerError struct {
	Workflow, Task, Handler string
	// Near are the registered names nearest to Handler, nearest first, at
	// most three; empty when none is registered.
	Near []string
	// Fleet is set when Handler was checked against the handlers of the
	// live nodes ([WithHandlerCheck]), not this process's.
	Fleet bool
}

// Error implements error.
func (e *UnknownHandlerError) Error() string {
	msg := "plait: workflow " + quote(e.Workflow) + " task " + quote(e.Task) + ": unknown handler " + quote(e.Handler)
	switch {
	case e.Fleet && len(e.Near) == 0:
		return msg + ": no live node registers it, nor any handler"
	case e.Fleet:
		msg += ": no live node registers it"
	case len(e.Near) == 0:
		return msg + ": this process has not registered it, nor any handler (see WithRemoteHandlers)"
	default:
		msg += ": this process has not registered it (see WithRemoteHandlers)"
	}
	return msg + "; nearest: " + quoteAll(e.Near)
}

// Unwrap returns ErrUnknownHandler and ErrInvalidWorkflow.
func (e *UnknownHandlerError) Unwrap() []error { return []error{ErrUnknownHandler, ErrInvalidWorkflow} }

// nearest answers the three names closest to name in edit distance,
// ignoring case, nearest first.
func nearest(name string, names []string) []string {
	type scored struct {
		name string
		d    int
	}
	all := make([]scored, len(names))
	for i, n := range names {
		all[i] = scored{n, editDistance(strings.ToLower(name), strings.ToLower(n))}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].d < all[j].d })
	var out []string
	for i := 0; i < len(all) && i < 3; i++ {
		out = append(out, all[i].name)
	}
	return out
}

// editDistance counts the edits (a byte inserted, deleted or replaced, or
// two adjacent bytes swapped) that turn a into b: the optimal string
// alignment distance, so a swap, the commonest typo, counts one.
func editDistance(a, b string) int {
	before, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], before[j-2]+1)
			}
		}
		before, prev, cur = prev, cur, before
	}
	return prev[len(b)]
}

// ParentError says a handler asked for the result of a task that is not
// a parent of its own ([ParentValue], [Task.ParentResult]). It matches
// [ErrNotAParent] and comes wrapped with [Permanent]: the task's parents
// do not change, so the attempt fails without a retry.
type ParentError struct {
	// Task is the task whose handler asked, Parent the name it asked for.
	Task, Parent string
	// Parents are the task's parents, sorted. For a task claimed without
	// them (a wide join, see [WithInlineResults]) they are those that
	// succeeded, and Deferred is set.
	Parents  []string
	Deferred bool
}

// Error implements error: it names at most the first 10 parents, and how
// many more there are.
func (e *ParentError) Error() string {
	msg := "plait: task " + quote(e.Task) + " has no parent " + quote(e.Parent)
	switch {
	case len(e.Parents) == 0 && e.Deferred:
		return msg + "; none of its parents succeeded"
	case len(e.Parents) == 0:
		return msg + "; it has no parents"
	case e.Deferred:
		return msg + "; its parents that succeeded: " + quoteSome(e.Parents)
	}
	return msg + "; its parents: " + quoteSome(e.Parents)
}

// Is matches [ErrNotAParent].
func (e *ParentError) Is(target error) bool { return target == ErrNotAParent }

// listMax is how many names an error message lists before it says how
// many more there are.
const listMax = 10

// quoteSome quotes the first listMax names, and says how many it left out.
func quoteSome(names []string) string {
	n := min(len(names), listMax)
	s := quoteAll(names[:n])
	if len(names) > n {
		s += fmt.Sprintf(" and %d more", len(names)-n)
	}
	return s
}

// DecodeError says a payload or a result did not decode into the Go value
// asked for ([Task.Decode], [Typed], [ParentValue], [Task.ParentResult],
// [ResultValue]). It matches [ErrDecode], unwraps to the codec's error, and
// comes wrapped with [Permanent]: the bytes do not change, so the attempt
// fails without a retry.
type DecodeError struct {
	// Task is the task whose payload or result was decoded; Parent, when
	// set, the parent of Task whose result was.
	Task, Parent string
	// Result is set when a result was decoded, not a payload.
	Result bool
	// Type is the Go type decoded into, as %T prints it.
	Type string
	// Err is why: the codec's error, or that there was nothing to decode.
	Err error
}

// Error implements error.
func (e *DecodeError) Error() string {
	what := "payload"
	switch {
	case e.Parent != "":
		what = "the result of parent " + quote(e.Parent)
	case e.Result:
		what = "the result"
	}
	return "plait: task " + quote(e.Task) + ": decode " + what + " into " + e.Type + ": " + e.Err.Error()
}

// Is matches [ErrDecode].
func (e *DecodeError) Is(target error) bool { return target == ErrDecode }

// Unwrap returns the codec's error.
func (e *DecodeError) Unwrap() error { return e.Err }

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

// Sentinels a store returns, re-exported from package store: test for them
// with errors.Is, whatever the backend.
var (
	// ErrNotFound: no run with that id (or it expired by retention).
	ErrNotFound = store.ErrNotFound
	// ErrStaleEpoch: a write carried a lease whose epoch has moved on.
	ErrStaleEpoch = store.ErrStaleEpoch
	// ErrStoreFull: the backend refused a write for lack of memory.
	ErrStoreFull = store.ErrStoreFull
	// ErrInvalidArgument: a call got arguments it cannot act on.
	ErrInvalidArgument = store.ErrInvalidArgument
	// ErrUnsupported: the store does not implement a capability the call
	// needs; the error is an [*UnsupportedError] naming it.
	ErrUnsupported = store.ErrUnsupported
	// ErrInvalidOption: an option is out of range (each one an
	// [*OptionError]), New got a nil store, or Handle a nil handler.
	ErrInvalidOption = store.ErrInvalidOption
	// ErrResultTooLarge: a handler's result is over the store's limit.
	ErrResultTooLarge = store.ErrResultTooLarge
	// ErrRunActive: a run that has not finished cannot be deleted.
	ErrRunActive = store.ErrRunActive
	// ErrReplayConflict: a replay named a generation that has moved on.
	ErrReplayConflict = store.ErrReplayConflict
	// ErrIllegalTransition: a status change the transition table forbids.
	ErrIllegalTransition = store.ErrIllegalTransition
	// ErrRejected: the store refused a call as a whole for what it carried
	// (a value over Redis's proto-max-bulk-len); resending it unchanged
	// would meet the same answer.
	ErrRejected = store.ErrRejected
	// ErrAdmission: a submit refused because it would take a queue or a
	// tenant over its cap on pending tasks ([Scheduler.AdmissionSet]); the
	// error is an [*AdmissionError].
	ErrAdmission = store.ErrAdmission
)

// Errors with details, re-exported from package store.
type (
	// UnsupportedError names the capability a store lacks.
	UnsupportedError = store.UnsupportedError
	// OptionError names an option given out of range and why.
	OptionError = store.OptionError
	// ReplayError says why a run cannot be replayed.
	ReplayError = store.ReplayError
	// EventStartError says that a subscription was given more than one
	// place to start.
	EventStartError = store.EventStartError
	// AdmissionError names the queue or tenant whose cap refused a
	// submit, with its cap and counts.
	AdmissionError = store.AdmissionError
)
