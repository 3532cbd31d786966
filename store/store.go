package store

import (
	"context"
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
// Every time a store returns is in UTC and a whole millisecond, whatever
// the nanoseconds of its clock: the times stamped on records ([Run],
// [TaskInstance], [Attempt] with its QueuedAt, [DeadLetter], [StoreEvent],
// [NodeRecord], [ScheduleRecord]), the deadlines and due times it answers
// ([ClaimedTask].LeaseUntil and FirstStartedAt, [LeaseExtendResult].Until,
// [TaskClaimResult].Now and NextDueAt, [LeaderLease].Until) and the clock
// readings ([StorePingResult].Now, [NodeHeartbeatResult].Now); only a
// task's definition, which a claim hands back as submitted
// ([ClaimedTask].Spec), keeps the RunAt it was given. The store reads its
// clock cut down to the millisecond. A time the caller gives to be kept
// ([LogLine].Time, [NodeTask] times, a schedule's NextFire and LastFire) is
// kept cut down to it too. A due time or deadline made of a duration from
// now (a lease, a retry delay, a Delay, a TTL, a rate window) adds the
// duration rounded up to the millisecond, and a task's RunAt makes it due
// at that time rounded up, so none comes earlier than asked. The time
// bounds of a listing ([RunFilter] and [RunCountParams] CreatedFrom and
// CreatedTo, [DeadLetterListParams] Since and Until,
// [ScheduleListParams].DueBy) are read cut down to the millisecond.
// Records of one millisecond are told apart by the order each listing
// documents, never by finer digits.
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
// [ErrNotFound], [ErrStaleEpoch], [ErrStoreFull], [ErrInvalidArgument],
// [ErrRejected]. Anything else is a transport or backend failure and may be
// retried by the caller; every method is idempotent under such a retry (a
// finish that already applied answers [ErrStaleEpoch] the second time, never
// applies twice).
//
// [ErrRejected] is for a call the backend refuses as a whole for what it
// carries, deterministically: the same call sent again meets the same
// refusal, so it is not retried unchanged. A store answers it only for a
// refusal it cannot put on one member of a batch (what it can, such as
// [ErrResultTooLarge], it answers for that member alone), and never for a
// failure of the transport, a timeout, a lack of memory ([ErrStoreFull]) or
// a missing script. A caller holding a batch sends it again in parts: the
// Scheduler halves a rejected batch of outcomes down to single outcomes, and
// an outcome rejected on its own fails its attempt as [ErrResultTooLarge]
// does. A store without such a failure (memstore) never answers it.
//
// Every method checks its context before its first write: called with a
// context that is already done, it writes nothing and answers the context's
// error (errors.Is matches [context.Canceled] or
// [context.DeadlineExceeded]), for a backend in memory as for one across
// the network. A method that only reads may answer that error too, but for
// [Store.ReadyWait], whose doc says what it does. A context that ends while
// a call is under way may cut it off as a transport failure does, and the
// retry above is then safe.
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
