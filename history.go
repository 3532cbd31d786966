package plait

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait/store"
)

// RunHistory answers the attempt history of every task of a run, in
// definition order. It returns an [*UnsupportedError] when the store does
// not implement [HistoryStore], and ErrNotFound for an unknown run.
func (s *Scheduler) RunHistory(ctx context.Context, runID string) ([]TaskHistory, error) {
	h, err := capability[store.HistoryStore](s.store, "HistoryStore")
	if err != nil {
		return nil, err
	}
	res, err := h.AttemptHistory(ctx, &store.AttemptHistoryParams{RunID: runID})
	if err != nil {
		return nil, err
	}
	return res.Tasks, nil
}

// TaskHistory answers the attempt records of one task of a run, oldest
// first. It returns an [*UnsupportedError] when the store does not
// implement [HistoryStore], and ErrNotFound for an unknown run or task.
func (s *Scheduler) TaskHistory(ctx context.Context, runID, task string) ([]Attempt, error) {
	h, err := capability[store.HistoryStore](s.store, "HistoryStore")
	if err != nil {
		return nil, err
	}
	if task == "" {
		return nil, fmt.Errorf("plait: task history needs a task name: %w", ErrInvalidArgument)
	}
	res, err := h.AttemptHistory(ctx, &store.AttemptHistoryParams{RunID: runID, Task: task})
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
