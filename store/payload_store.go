package store

import "context"

// PayloadStore is the capability of reading the payloads of named tasks of
// one run in one call, as they were submitted, whatever their status: what
// inspecting a dead letter shows beside its error and attempts. Both
// shipped stores implement it; redisstore keeps a long payload of a small
// run in a key of its own, dropped when its task succeeds (see
// docs/redis-schema.md), so a succeeded task may be answered without one.
type PayloadStore interface {
	// TaskPayloads answers the encoded payloads of the named tasks of run
	// params.RunID: nil for a task without one, a name the run lacks left
	// out. It changes nothing; a run that does not exist answers
	// [ErrNotFound]; more than [TaskResultsMax] names answer
	// [ErrInvalidArgument].
	TaskPayloads(ctx context.Context, params *TaskPayloadsParams) (*TaskPayloadsResult, error)
}

// TaskPayloadsParams are the arguments of [PayloadStore.TaskPayloads].
type TaskPayloadsParams struct {
	RunID string
	// Tasks names the tasks whose payloads are wanted, at most
	// [TaskResultsMax].
	Tasks []string
}

// TaskPayloadsResult is the answer of [PayloadStore.TaskPayloads].
type TaskPayloadsResult struct {
	// Payloads holds the encoded payload of each named task of the run, by
	// task name (nil for a task without one).
	Payloads map[string][]byte
}
