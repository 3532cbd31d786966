package plait

import (
	"context"
	"fmt"
)

// HistoryStore is the capability of reading the attempt history of a run:
// one [Attempt] record per claim that ended (succeeded, retried, failed,
// released, crashed or cancelled), appended when the claim ends and never
// changed afterwards. The records live with the run and go when it goes
// (its retention, or a delete). Both shipped stores implement it.
type HistoryStore interface {
	// AttemptHistory answers the attempt records of one run, per task in
	// definition order, each task's oldest first; params.Task limits the
	// answer to one task. ErrNotFound for an unknown run or task.
	AttemptHistory(ctx context.Context, params *AttemptHistoryParams) (*AttemptHistoryResult, error)
}

// AttemptHistoryParams are the arguments of [HistoryStore.AttemptHistory].
type AttemptHistoryParams struct {
	// RunID names the run.
	RunID string
	// Task, when set, names the one task whose attempts are answered.
	Task string
}

// AttemptHistoryResult is the answer of [HistoryStore.AttemptHistory].
type AttemptHistoryResult struct {
	// Tasks holds one entry per task asked for, in definition order, a
	// task that never ended an attempt with no records.
	Tasks []TaskHistory
}

// TaskHistory is the attempt history of one task of a run.
type TaskHistory struct {
	// Task is the task's name.
	Task string
	// Attempts are its records, oldest first.
	Attempts []Attempt
}

// RunHistory answers the attempt history of every task of a run, in
// definition order. It returns an [*UnsupportedError] when the store does
// not implement [HistoryStore], and ErrNotFound for an unknown run.
func (s *Scheduler) RunHistory(ctx context.Context, runID string) ([]TaskHistory, error) {
	h, err := capability[HistoryStore](s.store, "HistoryStore")
	if err != nil {
		return nil, err
	}
	res, err := h.AttemptHistory(ctx, &AttemptHistoryParams{RunID: runID})
	if err != nil {
		return nil, err
	}
	return res.Tasks, nil
}

// TaskHistory answers the attempt records of one task of a run, oldest
// first. It returns an [*UnsupportedError] when the store does not
// implement [HistoryStore], and ErrNotFound for an unknown run or task.
func (s *Scheduler) TaskHistory(ctx context.Context, runID, task string) ([]Attempt, error) {
	h, err := capability[HistoryStore](s.store, "HistoryStore")
	if err != nil {
		return nil, err
	}
	if task == "" {
		return nil, fmt.Errorf("plait: task history needs a task name: %w", ErrInvalidArgument)
	}
	res, err := h.AttemptHistory(ctx, &AttemptHistoryParams{RunID: runID, Task: task})
	if err != nil {
		return nil, err
	}
	for _, th := range res.Tasks {
		if th.Task == task {
			return th.Attempts, nil
		}
	}
	return nil, fmt.Errorf("plait: run %s task %s: %w", runID, task, ErrNotFound)
}
