package store

import (
	"context"
	"errors"
	"fmt"
)

// QueryStore is the capability of answering questions about stored runs:
// the repository of seed 004. Both shipped stores implement it; the
// [Scheduler]'s query methods answer an [*UnsupportedError] on a store that
// does not, and Run then prunes nothing.
//
// Every query is backed by an index the store keeps in step with the
// record, inside the same atomic step that changes the record: creating a
// run indexes it by service, by service and tenant, by workflow and by
// status and by tenant, every status change moves its status membership,
// and the end of a run files it by its end time under its final status.
// Runs are listed newest first (by CreatedAt, or by EndedAt for a filter
// with an end time range; runs of the same millisecond in an order the
// store chooses and keeps), in pages: the cursor of a page names the
// position of its last run, not an offset, so it stays valid while new
// runs arrive or end (they sort before it) and old ones are removed.
// [RunFilter] says for each of its fields whether an index answers it or a
// bounded read of one.
type QueryStore interface {
	// RunList lists runs matching params.Filter, newest first, at most
	// params.Limit of them, after params.Cursor. A page may hold fewer
	// runs than the limit (even none) and still carry a cursor: a store
	// bounds the work of one call, and a run removed between its index
	// entry being read and its record being read is left out. The listing
	// is over when the answered cursor is empty.
	RunList(ctx context.Context, params *RunListParams) (*RunListResult, error)
	// RunGetMany returns the runs of params.IDs in the order asked, in one
	// round trip; an id with no run (never created, expired, deleted, or
	// not an id of this store) answers nil in its place, not an error.
	RunGetMany(ctx context.Context, params *RunGetManyParams) (*RunGetManyResult, error)
	// RunCount counts the runs matching params.Filter per status without
	// listing them: exactly from the indexes for the filters
	// [RunFilter.CountIndexed] names, whatever their number; by reading
	// the matching index, at most params.Limit entries per shard, for the
	// others, answering Capped when that bound stopped the count.
	RunCount(ctx context.Context, params *RunCountParams) (*RunCountResult, error)
	// RunDelete removes a finished run with everything it owns (its
	// tasks, results, payloads, idempotency key, dead letters and index
	// entries) in one atomic step. A run that has not finished is refused
	// with [ErrRunActive] and left as it is (cancel it first); an unknown
	// id answers [ErrNotFound].
	RunDelete(ctx context.Context, params *RunDeleteParams) error
	// RunPrune removes the index entries of runs whose retention is over,
	// at most params.Limit of them. A store whose records expire on their
	// own (Redis TTLs) needs it to keep its indexes and counts exact; many
	// processes may prune at once, each entry is removed once.
	RunPrune(ctx context.Context, params *RunPruneParams) (*RunPruneResult, error)
	// TaskList lists the task instances of one run, optionally only those
	// in given statuses, in definition order.
	TaskList(ctx context.Context, params *TaskListParams) (*TaskListResult, error)
}

// ErrRunActive is answered by [QueryStore.RunDelete] for a run that has not
// reached a terminal status: deleting it would pull its tasks from under
// the workers holding them.
var ErrRunActive = errors.New("plait: run has not finished")

// RunListParams are the arguments of [QueryStore.RunList] and of the
// Scheduler's RunList.
type RunListParams struct {
	Filter RunFilter
	// Cursor is the cursor of the previous page, empty for the first. It
	// is opaque, and only the store (and filter) that gave it reads it.
	Cursor string
	// Limit is the most runs of the page, 1 to [QueryLimitMax]; the
	// Scheduler turns 0 into [QueryLimitDefault].
	Limit int
}

// RunListResult is a page of runs.
type RunListResult struct {
	// Runs are the page's runs, newest first, each with its tasks.
	Runs []*Run
	// NextCursor reads the next page; empty when there is none.
	NextCursor string
}

// RunGetManyParams are the arguments of [QueryStore.RunGetMany].
type RunGetManyParams struct {
	// IDs are at most [GetManyMax] run ids.
	IDs []string
}

// RunGetManyResult is the answer of [QueryStore.RunGetMany].
type RunGetManyResult struct {
	// Runs has one element per id asked, nil for a missing run.
	Runs []*Run
}

// RunDeleteParams are the arguments of [QueryStore.RunDelete].
type RunDeleteParams struct {
	ID string
}

// RunPruneParams are the arguments of [QueryStore.RunPrune].
type RunPruneParams struct {
	// Limit bounds the entries removed by one call; at least 1.
	Limit int
}

// RunPruneResult is the answer of [QueryStore.RunPrune].
type RunPruneResult struct {
	// Pruned counts the runs whose index entries were removed.
	Pruned int
	// More reports that Limit cut the pass short.
	More bool
}

// TaskListParams are the arguments of [QueryStore.TaskList].
type TaskListParams struct {
	RunID string
	// Statuses, when not empty, keeps only tasks in one of them.
	Statuses []TaskStatus
}

// TaskListResult is the answer of [QueryStore.TaskList].
type TaskListResult struct {
	// Tasks are the matching tasks in definition order.
	Tasks []TaskInstance
}

// Validate reports why the query cannot be answered: a limit out of range
// or a bad filter; each problem wraps [ErrInvalidArgument]. Stores call it
// before their first read.
func (q *RunListParams) Validate() error {
	var errs []error
	if q.Limit < 1 || q.Limit > QueryLimitMax {
		errs = append(errs, fmt.Errorf("%w: query limit %d, want 1..%d", ErrInvalidArgument, q.Limit, QueryLimitMax))
	}
	if err := q.Filter.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Query limits.
const (
	// QueryLimitDefault is the page size of a query given no limit.
	QueryLimitDefault = 50
	// QueryLimitMax is the largest page a query answers.
	QueryLimitMax = 1000
	// GetManyMax is the most ids one RunGetMany call takes.
	GetManyMax = 1000
)
