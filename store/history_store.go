package store

import "context"

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
