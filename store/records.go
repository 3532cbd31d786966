package store

// The records a store answers about runs: their statuses, their tasks and
// the attempts of each task.

import (
	"time"
)

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
	// Queue is the queue the task was submitted to ([DefaultQueue] when
	// none was named), without the capabilities it requires.
	Queue  string
	Status TaskStatus
	// Attempt is the attempt number of the latest (or next) attempt, from 1;
	// 0 before the first claim.
	Attempt int
	// Epoch is the fencing token of the latest claim.
	Epoch int64
	// Crashes counts lost leases.
	Crashes int
	Result  []byte
	Error   string
	// Worker is the worker id of the process that held the latest claim
	// ([WithWorkerID]); Node its node id ([Scheduler.NodeID]), empty for a
	// claim made outside a Scheduler.
	Worker string
	Node   string
	// StartedAt is the first claim; EndedAt the terminal transition.
	StartedAt time.Time
	EndedAt   time.Time
	// WaitingFor says, for a ready task only some processes may run, what
	// it waits for: "capability gpu,region-eu" (a process with every
	// capability it [Requires]; see [WaitingForCapability]) or
	// "handler resize" (a process with that handler, after a claim by one
	// without it set the task aside; see [WaitingForHandler]). Empty for
	// any other task, and on stores that do not implement [ClaimRouter].
	// plait's Scheduler adds, when it reads a run, what the fleet holds a
	// ready task back by: a paused queue ([WaitingForQueuePaused]), a queue
	// no live node serves ([WaitingForQueueNotServed]) or a handler no
	// live node has ([WaitingForHandler]).
	WaitingFor string
	// Progress is the latest progress report of the task, of whichever
	// attempt made it (see [ProgressStore]); nil when none was made, when
	// a replay reset the task since, and on stores that do not implement
	// [ProgressStore].
	Progress *TaskProgress
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
	// Generation is the run's generation the attempt ran in ([Run].
	// Generation): the records of a replayed task read as one sequence per
	// generation, each with its attempts from 1. Records written by a store
	// before it kept generations read as 0.
	Generation int64
	// Worker is the worker id of the process that held the claim
	// ([WithWorkerID]), and Node its node id ([Scheduler.NodeID]): two
	// processes given one worker id are two nodes. Node is empty for a
	// claim made outside a Scheduler.
	Worker string
	Node   string
	// QueuedAt is when the task became ready to run for this attempt: when
	// it entered its ready queue (at creation, when its parents let it, or
	// when its previous attempt was released or its lease lost), or the
	// due time of a delayed task (a delayed root or child, a retry after
	// its backoff), whenever a claim took it off the delayed set. A claim
	// given back unstarted keeps it. StartedAt less QueuedAt is the time
	// the attempt waited. It is zero in records a store wrote before it
	// kept it.
	QueuedAt time.Time
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
	// Progress is the last progress report of this attempt (see
	// [ProgressStore]); nil when it made none.
	Progress *TaskProgress
}

// Valid reports whether s is one of plait's run statuses.
func (s RunStatus) Valid() bool {
	switch s {
	case RunPending, RunRunning, RunCompleted, RunFailed, RunCancelled:
		return true
	}
	return false
}

// Replayable reports whether a replay restarts a task in status s when it is
// asked for by name or chosen by default: failed, dead, cancelled, skipped.
func (s TaskStatus) Replayable() bool {
	switch s {
	case TaskFailed, TaskDead, TaskCancelled, TaskSkipped:
		return true
	}
	return false
}
