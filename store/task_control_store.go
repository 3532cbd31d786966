package store

import (
	"context"
	"fmt"
)

// TaskControlStore is the capability of acting on one task of a run from
// outside its handler: an operator's controls. [TaskRunNow] makes a task
// that waits on a delay, a run-at time or a retry backoff ready now (its
// attempt number kept); [TaskSkip] skips a task that has not started its
// attempt (pending, ready or retrying), its children released by their
// conditions as for any skipped parent, the run ending if it was its last
// open task; [TaskCancel] cancels a task that has not finished, a
// running one too: the running attempt loses its lease (its epoch moves
// on, so its finish answers [ErrStaleEpoch]) and its children are settled
// as for a cancelled parent. Each action is one atomic step that goes
// through the store's one status transition function, so indexes,
// counters and events stay in step. Both shipped stores implement it:
// memstore, and redisstore in one script call (task_control).
type TaskControlStore interface {
	// TaskControl applies params.Action to one task. A task in a status
	// the action does not apply to answers a [*TaskControlError] (it
	// matches [ErrInvalidArgument]) and changes nothing; an unknown run
	// or task answers [ErrNotFound]. Sent again after a lost reply, it
	// answers a [*TaskControlError] for the status the first call left
	// (a skipped task cannot be skipped again), having changed nothing
	// more. One call reads one run and its tasks.
	TaskControl(ctx context.Context, params *TaskControlParams) (*TaskControlResult, error)
}

// TaskControlAction names what [TaskControlStore.TaskControl] does to a
// task.
type TaskControlAction string

// The task controls.
const (
	// TaskRunNow makes a pending task that waits only for its run-at time
	// (a delay), or a retrying task waiting out its backoff, ready now.
	// Its attempt number is kept. A pending task that waits for its
	// parents is refused: running it early would break the graph.
	TaskRunNow TaskControlAction = "run_now"
	// TaskSkip moves a pending, ready or retrying task to skipped.
	TaskSkip TaskControlAction = "skip"
	// TaskCancel moves a task that has not finished to cancelled,
	// fencing off a running attempt.
	TaskCancel TaskControlAction = "cancel"
)

// TaskControlReasonMax is the longest [TaskControlParams].Reason accepted,
// in bytes.
const TaskControlReasonMax = 1024

// TaskControlParams are the arguments of [TaskControlStore.TaskControl].
type TaskControlParams struct {
	RunID string
	Task  string
	// Action is one of [TaskRunNow], [TaskSkip], [TaskCancel].
	Action TaskControlAction
	// Reason, at most [TaskControlReasonMax] bytes, is kept as the task's
	// error (for a skip or a cancel) and as the Error of the event the
	// change records. May be empty.
	Reason string
}

// Validate reports why the call cannot be made: an empty run id or task
// name, an unknown action, a reason too long. Each problem wraps
// [ErrInvalidArgument].
func (p *TaskControlParams) Validate() error {
	switch {
	case p.RunID == "":
		return fmt.Errorf("%w: task control needs a run id", ErrInvalidArgument)
	case p.Task == "":
		return fmt.Errorf("%w: task control needs a task name", ErrInvalidArgument)
	case len(p.Reason) > TaskControlReasonMax:
		return fmt.Errorf("%w: task control reason of %d bytes, want at most %d", ErrInvalidArgument, len(p.Reason), TaskControlReasonMax)
	}
	switch p.Action {
	case TaskRunNow, TaskSkip, TaskCancel:
		return nil
	}
	return fmt.Errorf("%w: task control action %s, want run_now, skip or cancel", ErrInvalidArgument, quote(string(p.Action)))
}

// TaskControlResult is the answer of [TaskControlStore.TaskControl].
type TaskControlResult struct {
	// Run is the run after the change, with its tasks.
	Run *Run
}

// TaskControlError says why a task control was refused: the task is in a
// status the action does not apply to (a running task cannot be run now
// or skipped, a finished one cannot be acted on, a pending task waiting
// for its parents cannot be run now). Nothing was changed. It matches
// [ErrInvalidArgument].
type TaskControlError struct {
	RunID  string
	Task   string
	Action TaskControlAction
	// Status is the task's status when the action was refused.
	Status TaskStatus
}

// Error describes the refusal.
func (e *TaskControlError) Error() string {
	return fmt.Sprintf("plait: run %s: task %s is %s, %s does not apply", quote(e.RunID), quote(e.Task), e.Status, e.Action)
}

// Is matches [ErrInvalidArgument].
func (e *TaskControlError) Is(target error) bool { return target == ErrInvalidArgument }
