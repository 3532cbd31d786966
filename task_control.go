package plait

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// Task controls, re-exported from package store.
type (
	// TaskControlError says why a task control was refused: the task is in
	// a status the action does not apply to. It matches
	// [ErrInvalidArgument].
	TaskControlError = store.TaskControlError
	// TaskControlAction names a task control.
	TaskControlAction = store.TaskControlAction
)

// TaskRunNow makes a task that waits on a delay, a run-at time or a retry
// backoff ready now, its attempt number kept, and answers the run after
// the change. reason (at most [store.TaskControlReasonMax] bytes) is
// recorded as the Error of the task_ready event. A task in another status
// (running, finished, or pending on its parents) answers a
// [*TaskControlError]; an unknown run or task [ErrNotFound]; a store
// without [store.TaskControlStore] ErrUnsupported.
func (s *Scheduler) TaskRunNow(ctx context.Context, runID, task, reason string) (*Run, error) {
	return s.taskControl(ctx, runID, task, store.TaskRunNow, reason)
}

// TaskSkip skips a task that has not started its attempt (pending, ready
// or retrying): its children are released by their conditions as for any
// skipped parent, and the run ends if it was its last open task. reason
// becomes the task's error and the event's. Errors as for
// [Scheduler.TaskRunNow].
func (s *Scheduler) TaskSkip(ctx context.Context, runID, task, reason string) (*Run, error) {
	return s.taskControl(ctx, runID, task, store.TaskSkip, reason)
}

// TaskCancel cancels one task that has not finished, a running one too:
// the running attempt loses its lease (the process running it learns so at
// its next lease extension, cancels the handler's context with
// ErrLeaseLost, and what the handler returns changes nothing) and the
// task's children are settled as for a cancelled parent: a cancelled
// parent meets no condition, so they are skipped. reason becomes the
// task's error and the event's. Errors as for [Scheduler.TaskRunNow].
func (s *Scheduler) TaskCancel(ctx context.Context, runID, task, reason string) (*Run, error) {
	return s.taskControl(ctx, runID, task, store.TaskCancel, reason)
}

func (s *Scheduler) taskControl(ctx context.Context, runID, task string, action store.TaskControlAction, reason string) (*Run, error) {
	tc, err := capability[store.TaskControlStore](s.store, "TaskControlStore")
	if err != nil {
		return nil, err
	}
	p := &store.TaskControlParams{RunID: runID, Task: task, Action: action, Reason: reason}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	res, err := tc.TaskControl(ctx, p)
	if err != nil {
		return nil, err
	}
	return res.Run, nil
}
