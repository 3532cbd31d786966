package store

import (
	"errors"
	"fmt"
	"slices"
)

// The status machine of tasks and runs. It is one table for every store:
// memstore checks it in the one function that changes a status, and
// redisstore renders it into the Lua function that does the same, so an
// illegal change is refused the same way everywhere. docs/store-contract.md
// prints the same table; a test keeps the two equal.

// ErrIllegalTransition is the category of [*TransitionError]: a store was
// asked to move a task or a run to a status the status machine does not
// allow from where it is. It points at a bug in a store, never at bad input.
var ErrIllegalTransition = errors.New("plait: illegal status transition")

// TransitionError names a refused status change. Record is "task" or
// "run"; an empty From means the record is being created.
type TransitionError struct {
	Record string
	From   string
	To     string
}

// Error describes the refused change.
func (e *TransitionError) Error() string {
	from := e.From
	if from == "" {
		from = "(new)"
	}
	return fmt.Sprintf("plait: illegal %s transition %s -> %s", e.Record, from, e.To)
}

// Is matches [ErrIllegalTransition].
func (e *TransitionError) Is(target error) bool { return target == ErrIllegalTransition }

// The rows of the status machine. A ready or retrying task may be
// skipped only by an operator's control ([TaskControlStore]): nothing else
// skips a task that was made due. Stores check them on every move of every
// task, so they are looked up by a switch (no hashing) and never copied on
// the way; Next hands out copies.
var (
	fromNewTask  = []TaskStatus{TaskPending, TaskReady}
	fromPending  = []TaskStatus{TaskReady, TaskSkipped, TaskCancelled}
	fromReady    = []TaskStatus{TaskRunning, TaskSkipped, TaskCancelled}
	fromRunning  = []TaskStatus{TaskSucceeded, TaskFailed, TaskRetrying, TaskReady, TaskDead, TaskCancelled}
	fromRetrying = []TaskStatus{TaskReady, TaskSkipped, TaskCancelled}

	fromNewRun     = []RunStatus{RunPending}
	fromRunPending = []RunStatus{RunRunning, RunCancelled}
	fromRunRunning = []RunStatus{RunCompleted, RunFailed, RunCancelled}
)

// taskTransitions is the task table of [TaskStatus.Next].
func taskTransitions(s TaskStatus) []TaskStatus {
	switch s {
	case "":
		return fromNewTask
	case TaskPending:
		return fromPending
	case TaskReady:
		return fromReady
	case TaskRunning:
		return fromRunning
	case TaskRetrying:
		return fromRetrying
	}
	return nil
}

// runTransitions is the run table of [RunStatus.Next].
func runTransitions(s RunStatus) []RunStatus {
	switch s {
	case "":
		return fromNewRun
	case RunPending:
		return fromRunPending
	case RunRunning:
		return fromRunRunning
	}
	return nil
}

// CanBecome reports whether [TaskStatus.Next] allows a task in status s to
// move to status to.
func (s TaskStatus) CanBecome(to TaskStatus) bool {
	for _, t := range taskTransitions(s) {
		if t == to {
			return true
		}
	}
	return false
}

// CanBecome reports whether [RunStatus.Next] allows a run in status s to
// move to status to.
func (s RunStatus) CanBecome(to RunStatus) bool {
	for _, t := range runTransitions(s) {
		if t == to {
			return true
		}
	}
	return false
}

// CheckTaskTransition returns a [*TransitionError] unless a task may move
// from status from to status to.
func CheckTaskTransition(from, to TaskStatus) error {
	if from.CanBecome(to) {
		return nil
	}
	return &TransitionError{Record: "task", From: string(from), To: string(to)}
}

// CheckRunTransition returns a [*TransitionError] unless a run may move
// from status from to status to.
func CheckRunTransition(from, to RunStatus) error {
	if from.CanBecome(to) {
		return nil
	}
	return &TransitionError{Record: "run", From: string(from), To: string(to)}
}

// Next returns the statuses a task in status s may move to, in the order
// of [TaskStatuses]; the empty status is a task being created. A terminal
// status leads nowhere. A store may keep finer states inside one status
// (redisstore keeps a pending task that waits for its run-at time apart from
// one that waits for its parents); moving between them is not a status
// change.
func (s TaskStatus) Next() []TaskStatus { return slices.Clone(taskTransitions(s)) }

// Next returns the statuses a run in status s may move to, in the order of
// [RunStatuses]; the empty status is a run being created.
func (s RunStatus) Next() []RunStatus { return slices.Clone(runTransitions(s)) }

// TaskStatuses returns every task status, in the order of the status
// machine.
func TaskStatuses() []TaskStatus {
	return []TaskStatus{TaskPending, TaskReady, TaskRunning, TaskRetrying,
		TaskSucceeded, TaskFailed, TaskSkipped, TaskCancelled, TaskDead}
}

// RunStatuses returns every run status, in the order of the status machine.
func RunStatuses() []RunStatus {
	return []RunStatus{RunPending, RunRunning, RunCompleted, RunFailed, RunCancelled}
}

// The replay moves (see [ReplayStore]) lead out of terminal statuses: a
// replay moves the tasks it restarts back to pending and the run back to
// running. They are a table of their own, apart from Next, so that only a
// replay can take them: every other write checks Next, which has no row
// for a terminal status, and cannot revive a finished task or run.
var (
	replayTask = []TaskStatus{TaskPending}
	replayRun  = []RunStatus{RunRunning}
)

// ReplayNext returns the statuses a replay may move a task in status s to:
// pending from a terminal status, nothing from any other.
func (s TaskStatus) ReplayNext() []TaskStatus {
	if s.Terminal() {
		return slices.Clone(replayTask)
	}
	return nil
}

// ReplayNext returns the statuses a replay may move a run in status s to:
// running from a terminal status, nothing from any other.
func (s RunStatus) ReplayNext() []RunStatus {
	if s.Terminal() {
		return slices.Clone(replayRun)
	}
	return nil
}

// CheckTaskReplay returns a [*TransitionError] unless a replay may move a
// task from status from to status to.
func CheckTaskReplay(from, to TaskStatus) error {
	if from.Terminal() && to == TaskPending {
		return nil
	}
	return &TransitionError{Record: "task", From: string(from), To: string(to)}
}

// CheckRunReplay returns a [*TransitionError] unless a replay may move a run
// from status from to status to.
func CheckRunReplay(from, to RunStatus) error {
	if from.Terminal() && to == RunRunning {
		return nil
	}
	return &TransitionError{Record: "run", From: string(from), To: string(to)}
}
