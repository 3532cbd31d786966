package store

import "context"

// ResultStore is the capability of reading the results of named tasks of
// one run in one call: the way a child can read its parents' results when
// it asks for them instead of inside its claim, which for a wide join
// would carry thousands of results to a handler that may read few. Both
// shipped stores implement it.
type ResultStore interface {
	// TaskResults answers the encoded results of the named tasks of run
	// params.RunID that succeeded, as a claim's
	// [ClaimedTask].ParentResults does: a task that succeeded without a
	// result is answered with nil; a name the run lacks and a task that has
	// not succeeded are left out. With params.ParentsOf set it answers only
	// parents of that task, and all of them when no task is named: how a
	// task claimed with its parents deferred reads them. It changes nothing;
	// a run that does not exist answers [ErrNotFound].
	TaskResults(ctx context.Context, params *TaskResultsParams) (*TaskResultsResult, error)
}

// TaskResultsMax bounds [TaskResultsParams].Tasks: a caller with more
// names splits them over several calls.
const TaskResultsMax = 10000

// TaskResultsParams are the arguments of [ResultStore.TaskResults].
type TaskResultsParams struct {
	// RunID is the run whose tasks are read.
	RunID string
	// Tasks names the tasks whose results are wanted, at most
	// [TaskResultsMax]; a name may repeat.
	Tasks []string
	// ParentsOf, when not empty, names a task of the run: only its parents
	// are answered (a named task that is not one is left out), and with no
	// Tasks, every parent of it that succeeded. A task the run lacks has no
	// parents.
	ParentsOf string
}

// TaskResultsResult is the answer of [ResultStore.TaskResults].
type TaskResultsResult struct {
	// Results holds the encoded result of each named task that succeeded,
	// by task name (nil for a task that succeeded without a result).
	Results map[string][]byte
}
