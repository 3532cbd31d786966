package store

// The arguments and answers of a finish: the outcome of each attempt.

import (
	"errors"
	"time"
)

// Outcome says how an attempt ended.
type Outcome int

const (
	// OutcomeSucceeded: the handler returned a result.
	OutcomeSucceeded Outcome = iota + 1
	// OutcomeRetry: the attempt failed and the task runs again after
	// TaskOutcome.RetryDelay; the attempt number goes up by one.
	OutcomeRetry
	// OutcomeFailed: the attempt failed for good; the task is failed and
	// dead-lettered, and its children are released as failures.
	OutcomeFailed
	// OutcomeReleased: the attempt was given back unfinished (shutdown);
	// the task is ready again at once, with the same attempt number.
	OutcomeReleased
	// OutcomeReturned: the claim is given back before the handler started
	// (a task claimed ahead that waited too long, or a stopping process):
	// the task is ready again at the head of its queue, with a new epoch,
	// no attempt record, and the attempt number and first start time it had
	// before the claim.
	OutcomeReturned
)

// String returns the outcome's name.
func (o Outcome) String() string {
	switch o {
	case OutcomeSucceeded:
		return "succeeded"
	case OutcomeRetry:
		return "retry"
	case OutcomeFailed:
		return "failed"
	case OutcomeReleased:
		return "released"
	case OutcomeReturned:
		return "returned"
	}
	return "unknown"
}

// TaskOutcome is one element of [TaskFinishParams].
type TaskOutcome struct {
	Lease   Lease
	Outcome Outcome
	// Result is stored for OutcomeSucceeded and read by the children.
	Result []byte
	// Error says why the attempt ended without success (OutcomeRetry,
	// OutcomeFailed, and OutcomeReleased at shutdown); it is kept in the
	// attempt record, and for OutcomeRetry and OutcomeFailed on the task.
	Error string
	// RetryDelay is how long after now the task becomes ready again, for
	// OutcomeRetry.
	RetryDelay time.Duration
	// TimedOut says an OutcomeRetry or OutcomeFailed attempt was ended by
	// the task's Timeout: the attempt record's outcome is then "timed out"
	// rather than "retry" or "failed" (the task moves all the same). It is
	// ignored for the other outcomes.
	TimedOut bool
}

// ErrResultTooLarge is answered for one outcome of [Store.TaskFinish] (or
// [Store.TaskFinishClaim]) whose result is larger than the store keeps: that
// outcome changes nothing, its lease still holds, and the other outcomes of
// the batch apply as usual. The Scheduler then fails the attempt with it.
var ErrResultTooLarge = errors.New("plait: result too large")

// TaskFinishParams are the arguments of [Store.TaskFinish].
type TaskFinishParams struct {
	WorkerID string
	Outcomes []TaskOutcome
}

// TaskFinishResult is the answer for one outcome of [Store.TaskFinish].
type TaskFinishResult struct {
	// Err is nil when the outcome applied, ErrStaleEpoch when the lease had
	// moved on, ErrNotFound when the run is gone, ErrResultTooLarge when
	// the result is over the store's limit (nothing applied).
	Err error
	// RunStatus is the run's status after the outcome applied.
	RunStatus RunStatus
}

// TaskFinishClaimParams are the arguments of [Store.TaskFinishClaim].
type TaskFinishClaimParams struct {
	Finish TaskFinishParams
	// Claim.Limit of 0 means finish only.
	Claim TaskClaimParams
}

// TaskFinishClaimResult is the answer of [Store.TaskFinishClaim].
type TaskFinishClaimResult struct {
	// Finished holds one result per outcome, in order.
	Finished []TaskFinishResult
	// Claimed is the claim's answer; nil when no claim was asked for.
	Claimed *TaskClaimResult
	// ParentsLeft is, among the tasks these outcomes brought closer to
	// ready without making them ready (a task that waits on all its
	// parents: not JoinAny), the fewest parents one still waits on; 0 when
	// there is none, or when the call was a resend answered from memory.
	// A worker claims fewer tasks ahead while a wide join is about to
	// become ready, so that the join's last parents do not all come in one
	// large claim whose outcomes it then waits for together. A hint: a
	// store may always answer 0.
	ParentsLeft int
}
