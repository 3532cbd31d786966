package plait

import (
	"context"
	"errors"
	"time"
)

// Store is the one boundary a storage backend implements. plait ships two:
// store/memstore (in process) and store/redisstore (Redis and Redis Cluster).
// Both pass the conformance suite in store/storetest, which is the executable
// form of this contract; a third-party Store should run it too.
//
// # Concurrency
//
// Every method is safe for concurrent use by many goroutines and, for shared
// backends, by many processes. Each method is one atomic step: another caller
// observes either none or all of its effects. A method that fails returns
// without having changed anything, except where its doc says otherwise.
//
// # Time
//
// Due times, lease deadlines and the times stamped on records come from the
// store's own clock (the Redis server's TIME, or the Clock a memory store was
// built with), never from the caller.
//
// # Fencing
//
// Every claim increments the task's epoch and returns it inside a [Lease].
// Every write made on behalf of an attempt (finish, extend, release) carries
// that lease; the store rejects it with [ErrStaleEpoch] and changes nothing
// when the task's epoch has moved on (another worker claimed it, the sweep
// recovered it, or the run was cancelled).
//
// # Errors
//
// Methods return the sentinels of this package directly, possibly wrapped:
// [ErrNotFound], [ErrStaleEpoch], [ErrStoreFull], [ErrInvalidArgument]. Anything
// else is a transport or backend failure and may be retried by the caller;
// every method is idempotent under such a retry (a finish that already
// applied answers [ErrStaleEpoch] the second time, never applies twice).
type Store interface {
	// RunCreate stores a validated workflow as a new run and makes its root
	// tasks ready (or delayed, when they have a run-at time). When
	// params.Key is set and a run with that key exists, it returns that run
	// with Existing set and writes nothing.
	RunCreate(ctx context.Context, params *RunCreateParams) (*RunCreateResult, error)
	// RunCreateMany creates each run as RunCreate would, in order, in as
	// few round trips as the backend allows, and answers one outcome per
	// params, in order: a run that cannot be created carries its error and
	// the others are created all the same. The error is for the call as a
	// whole (the context ended, the connection failed); the outcomes are
	// then nil and some of the runs may exist: runs with keys make a retry
	// of the call safe.
	RunCreateMany(ctx context.Context, params []*RunCreateParams) ([]RunCreateOutcome, error)

	// RunGet returns a run with every task instance. It returns ErrNotFound
	// for an unknown id.
	RunGet(ctx context.Context, params *RunGetParams) (*Run, error)

	// RunCancel moves a run and every task of it that has not finished to
	// cancelled; running tasks lose their lease. Cancelling a finished run
	// changes nothing and returns it as it is. ErrNotFound for an unknown id.
	RunCancel(ctx context.Context, params *RunCancelParams) (*Run, error)

	// RunWait blocks until the run reaches a terminal status and returns it,
	// or returns ctx's error. ErrNotFound for an unknown id.
	RunWait(ctx context.Context, params *RunWaitParams) (*Run, error)

	// TaskClaim first moves delayed tasks that are due to ready, then claims
	// up to params.Limit ready tasks from params.Queues, highest priority
	// first and oldest first within a priority. Each claimed task becomes
	// running with a fresh epoch and a lease of params.LeaseDuration.
	TaskClaim(ctx context.Context, params *TaskClaimParams) (*TaskClaimResult, error)

	// TaskFinish records the outcome of attempts, one per element of
	// params.Outcomes, each applied atomically on its own (a batch is not a
	// transaction). Results come back in the same order. A success or a
	// final failure releases the task's children exactly once, following
	// their dependency conditions and the run's error strategy, and finishes
	// the run when its last task finishes.
	TaskFinish(ctx context.Context, params *TaskFinishParams) ([]TaskFinishResult, error)

	// TaskFinishClaim applies params.Finish exactly as TaskFinish does, then,
	// when params.Claim.Limit is at least 1, claims exactly as TaskClaim
	// does, in one call: a worker hands back finished attempts and picks up
	// the children they released without a second round trip. Tasks claimed
	// here do not wake ReadyWait callers.
	TaskFinishClaim(ctx context.Context, params *TaskFinishClaimParams) (*TaskFinishClaimResult, error)

	// LeaseExtend pushes the deadlines of held leases out to now plus
	// params.Duration. Results come back in the same order; a lease whose
	// epoch moved on gets ErrStaleEpoch.
	LeaseExtend(ctx context.Context, params *LeaseExtendParams) ([]LeaseExtendResult, error)

	// LeaseSweep recovers up to params.Limit tasks whose lease deadline has
	// passed: each goes back to ready with its crash count incremented and
	// its epoch bumped, or, once its crash count exceeds params.CrashLimit,
	// becomes dead. Crashes never use up the retry budget. Many processes
	// may sweep at once; each expired lease is recovered once. A record that
	// cannot be read is skipped (and reported), never blocking the rest.
	LeaseSweep(ctx context.Context, params *LeaseSweepParams) (*LeaseSweepResult, error)

	// ReadyWait blocks until work may be claimable on params.Queues, until
	// params.Timeout passes, or until ctx is done, whichever comes first. It
	// returns nil in all three cases except a backend failure. It may return
	// early without work (a spurious wake-up) but must not miss work that
	// became ready after the caller's last empty claim.
	ReadyWait(ctx context.Context, params *ReadyWaitParams) error
}

// RunCreateParams are the arguments of [Store.RunCreate].
type RunCreateParams struct {
	// Workflow is the validated definition; the store keeps it with the run.
	Workflow *WorkflowSpec
	// Key, when set, makes the create idempotent: one run per key.
	Key string
	// Tenant and Service scope the run: who it runs for and which service
	// submitted it.
	Tenant  string
	Service string
	// Metadata is free-form and stored with the run.
	Metadata map[string]string
}

// RunCreateResult is the answer of [Store.RunCreate].
type RunCreateResult struct {
	// Run is the new run, or the existing one when Existing is set.
	Run *Run
	// Existing reports that a run with the same key was already there.
	Existing bool
}

// RunCreateOutcome is one run's answer from [Store.RunCreateMany]: its
// result, or the error that kept it from being created.
type RunCreateOutcome struct {
	Result *RunCreateResult
	Err    error
}

// RunGetParams are the arguments of [Store.RunGet].
type RunGetParams struct {
	ID string
}

// RunCancelParams are the arguments of [Store.RunCancel].
type RunCancelParams struct {
	ID string
	// Reason is recorded as the error of every task the cancel stops.
	Reason string
}

// RunWaitParams are the arguments of [Store.RunWait].
type RunWaitParams struct {
	ID string
}

// TaskClaimParams are the arguments of [Store.TaskClaim].
type TaskClaimParams struct {
	// WorkerID names the claiming worker; it is recorded on the task.
	WorkerID string
	// Queues lists the queues to claim from; empty means [DefaultQueue].
	Queues []string
	// Limit is the most tasks to claim; it must be at least 1.
	Limit int
	// LeaseDuration is how long the claim holds without an extension.
	LeaseDuration time.Duration
	// RequestID, when set, makes the claim safe to send again: for as long
	// as the lease lasts, a claim (or a TaskFinishClaim) with the same
	// RequestID claims nothing new and answers the tasks the first one
	// claimed that are still held under its leases, and a TaskFinishClaim
	// answers its outcomes as the first call applied them. A caller whose
	// call failed without an answer sends it again with the same RequestID
	// to learn what it holds, so a lost reply never leaves tasks held by
	// nobody. Each new claim needs a new RequestID (at most 64 bytes of
	// [A-Za-z0-9._-]); empty means no such memory.
	RequestID string
	// Handlers, when not nil, lists the handler names the claimer can run;
	// a store implementing [ClaimRouter] hands out no task whose handler is
	// not listed and sets it aside for a claimer that lists it (see
	// [ClaimRouter]). Nil means any handler; other stores ignore it.
	Handlers []string
	// Shares, when not nil, holds one count per priority level, urgent
	// first (the order of [ClaimOrder]): a store implementing
	// [FairClaimer] first takes up to Shares[i] tasks of each level i, in
	// that order, then fills what is left of Limit in strict priority
	// order. Nil claims in strict priority order.
	Shares []int
}

// TaskClaimResult is the answer of [Store.TaskClaim].
type TaskClaimResult struct {
	// Tasks are the claimed tasks, highest priority first.
	Tasks []*ClaimedTask
	// NextDueAt is when the earliest delayed task on the queues becomes
	// due, or the zero time when none is waiting. Idle workers use it to
	// wake up without polling.
	NextDueAt time.Time
	// Now is the store's clock at the claim.
	Now time.Time
}

// ClaimedTask is a task handed to a worker by [Store.TaskClaim], with
// everything the worker needs to run it without another round trip.
type ClaimedTask struct {
	// Lease identifies the attempt; every later write carries it.
	Lease Lease
	// LeaseUntil is the lease deadline on the store's clock.
	LeaseUntil time.Time
	// Spec is the task's definition as submitted.
	Spec TaskSpec
	// Attempt counts attempts against the retry budget, from 1. A crash
	// re-run or a release keeps the attempt number.
	Attempt int
	// FirstStartedAt is when the task was first claimed.
	FirstStartedAt time.Time
	// ParentResults holds the results of the parents that succeeded, by
	// task name.
	ParentResults map[string][]byte
	// Workflow, Tenant, Service and Metadata are those of the task's run,
	// as submitted, for the handler to see (see [Task.Run]). Tasks of one
	// run claimed together may share one Metadata map: it is read-only.
	Workflow string
	Tenant   string
	Service  string
	Metadata map[string]string
}

// Lease identifies one attempt of one task: the fencing token of plait.
type Lease struct {
	RunID string
	Task  string
	Epoch int64
}

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
}

// LeaseExtendParams are the arguments of [Store.LeaseExtend].
type LeaseExtendParams struct {
	WorkerID string
	Leases   []Lease
	Duration time.Duration
}

// LeaseExtendResult is the answer for one lease of [Store.LeaseExtend].
type LeaseExtendResult struct {
	// Until is the new deadline when Err is nil.
	Until time.Time
	// Err is ErrStaleEpoch when the lease was lost, ErrNotFound when the
	// run is gone.
	Err error
}

// LeaseSweepParams are the arguments of [Store.LeaseSweep].
type LeaseSweepParams struct {
	// Limit bounds the work of one call.
	Limit int
	// CrashLimit is how many lost leases a task survives; the next one
	// makes it dead.
	CrashLimit int
}

// LeaseSweepResult is the answer of [Store.LeaseSweep].
type LeaseSweepResult struct {
	// Requeued are the leases recovered back to ready.
	Requeued []Lease
	// Dead are the leases whose task hit the crash limit.
	Dead []Lease
	// Corrupt describes records that could not be read and were skipped.
	Corrupt []string
	// More reports that Limit cut the sweep short.
	More bool
}

// ReadyWaitParams are the arguments of [Store.ReadyWait].
type ReadyWaitParams struct {
	Queues  []string
	Timeout time.Duration
	// Handlers, when not nil, are the handlers the caller runs: a store
	// implementing [ClaimRouter] also wakes it for a task a claim of
	// another caller set aside for want of one of them. Nil: as before.
	Handlers []string
}

// RunStatus is the status of a run.
type RunStatus string

// Run statuses.
const (
	RunPending   RunStatus = "pending"
	RunRunning   RunStatus = "running"
	RunCompleted RunStatus = "completed"
	RunFailed    RunStatus = "failed"
	RunCancelled RunStatus = "cancelled"
)

// Terminal reports whether the status is final.
func (s RunStatus) Terminal() bool {
	return s == RunCompleted || s == RunFailed || s == RunCancelled
}

// TaskStatus is the status of a task instance.
type TaskStatus string

// Task statuses.
const (
	// TaskPending waits for its dependencies or its run-at time.
	TaskPending TaskStatus = "pending"
	// TaskReady waits in a ready queue for a worker.
	TaskReady TaskStatus = "ready"
	// TaskRunning is held by a worker under a lease.
	TaskRunning TaskStatus = "running"
	// TaskRetrying waits out its backoff before the next attempt.
	TaskRetrying TaskStatus = "retrying"
	// TaskSucceeded finished with a result.
	TaskSucceeded TaskStatus = "succeeded"
	// TaskFailed used up its attempts or failed permanently.
	TaskFailed TaskStatus = "failed"
	// TaskSkipped never ran because its dependency conditions could not be
	// met.
	TaskSkipped TaskStatus = "skipped"
	// TaskCancelled was stopped by a run cancel or the stop strategy.
	TaskCancelled TaskStatus = "cancelled"
	// TaskDead lost its worker more times than the crash limit allows.
	TaskDead TaskStatus = "dead"
)

// Terminal reports whether the status is final.
func (s TaskStatus) Terminal() bool {
	switch s {
	case TaskSucceeded, TaskFailed, TaskSkipped, TaskCancelled, TaskDead:
		return true
	}
	return false
}

// Run is one execution of a workflow: a job.
type Run struct {
	ID       string
	Key      string
	Workflow string
	Strategy ErrorStrategy
	Status   RunStatus
	Tenant   string
	Service  string
	Metadata map[string]string
	// Generation counts the replays of the run (ReplayStore): 0 as
	// created, one more each time a replay reopens it. Each generation
	// completes once; the counters below are those of the current one.
	Generation int64

	// Counters over the run's tasks.
	Total     int
	Succeeded int
	Failed    int // failed or dead
	Skipped   int
	Cancelled int

	CreatedAt time.Time
	StartedAt time.Time
	EndedAt   time.Time

	// Tasks holds every task instance in definition order.
	Tasks []TaskInstance
}

// Task returns the instance named name, or nil.
func (r *Run) Task(name string) *TaskInstance {
	for i := range r.Tasks {
		if r.Tasks[i].Name == name {
			return &r.Tasks[i]
		}
	}
	return nil
}

// TaskInstance is the state of one task of a run.
type TaskInstance struct {
	Name    string
	Handler string
	Status  TaskStatus
	// Attempt is the attempt number of the latest (or next) attempt, from 1;
	// 0 before the first claim.
	Attempt int
	// Epoch is the fencing token of the latest claim.
	Epoch int64
	// Crashes counts lost leases.
	Crashes int
	Result  []byte
	Error   string
	Worker  string
	// StartedAt is the first claim; EndedAt the terminal transition.
	StartedAt time.Time
	EndedAt   time.Time
	// WaitingFor says, for a ready task only some processes may run, what
	// it waits for: "capability gpu,region-eu" (a process with every
	// capability it [Requires]; see [WaitingForCapability]) or
	// "handler resize" (a process with that handler, after a claim by one
	// without it set the task aside; see [WaitingForHandler]). Empty for
	// any other task, and on stores that do not implement [ClaimRouter].
	WaitingFor string
	// Attempts holds one record per finished attempt, oldest first.
	Attempts []Attempt
}

// Attempt is the execution record of one attempt of a task: one per claim
// that ended, appended when it ends and never changed afterwards.
type Attempt struct {
	// Attempt is the attempt number (a crash re-run or a release keeps it).
	Attempt int
	// Epoch is the fencing token of the claim, unique per record of a task.
	Epoch int64
	// Worker is the id of the process that held the claim (WithWorkerID).
	Worker string
	// StartedAt is the claim; EndedAt the end of the attempt, both on the
	// store's clock; Duration is the time between them, in whole
	// milliseconds.
	StartedAt time.Time
	EndedAt   time.Time
	Duration  time.Duration
	// Outcome is one of "succeeded", "retry", "failed", "timed out" (the
	// task's Timeout ended the attempt, which was then retried or failed:
	// RetryDelay and the task's status tell which), "released", "crashed"
	// (the lease expired in the store: the worker died, was cut off, or saw
	// the loss itself and wrote nothing, since a lost lease fences its
	// writes) or "cancelled".
	Outcome string
	Error   string
	// RetryDelay is the backoff chosen before the next attempt, for a
	// "retry" record; zero otherwise.
	RetryDelay time.Duration
}
