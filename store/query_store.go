package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/plaitdag/plait/internal/ids"
)

// QueryStore is the capability of answering questions about stored runs:
// the repository of seed 004. Both shipped stores implement it; the
// [Scheduler]'s query methods answer an [*UnsupportedError] on a store that
// does not, and Run then prunes nothing.
//
// Every query is backed by an index the store keeps in step with the
// record, inside the same atomic step that changes the record: creating a
// run indexes it by service, by service and tenant, by workflow and by
// status, and every status change moves its status membership. Runs are
// listed newest first (by CreatedAt; runs created in the same millisecond
// in an order the store chooses and keeps), in pages: the cursor of a page
// names the position of its last run, not an offset, so it stays valid
// while new runs arrive (they sort before it) and old ones are removed.
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
	// RunCount counts runs per status without listing them.
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

// RunFilter selects runs. Zero fields select everything; set fields
// combine with AND.
type RunFilter struct {
	// Service selects the runs submitted with [ForService] of it.
	Service string
	// Tenant, which needs Service, selects that service's runs submitted
	// with [ForTenant] of it.
	Tenant string
	// Workflow selects runs of the workflow of that name. It cannot be
	// combined with Service: each is an index of its own.
	Workflow string
	// Statuses, when not empty, selects runs in any of these statuses.
	Statuses []RunStatus
	// CreatedFrom and CreatedTo, when set, select runs created at or
	// after CreatedFrom and before CreatedTo.
	CreatedFrom time.Time
	CreatedTo   time.Time
}

// Validate reports why the filter cannot be answered: bad names, a tenant
// without a service, a workflow with a service, an unknown status or an
// empty time range. Each problem wraps [ErrInvalidArgument].
func (f *RunFilter) Validate() error {
	var errs []error
	for field, v := range map[string]string{"service": f.Service, "tenant": f.Tenant, "workflow": f.Workflow} {
		if v == "" {
			continue
		}
		if err := ids.Check(v); err != nil {
			errs = append(errs, fmt.Errorf("%w: filter %s %s", ErrInvalidArgument, field, err))
		}
	}
	if f.Tenant != "" && f.Service == "" {
		errs = append(errs, fmt.Errorf("%w: filter by tenant needs a service", ErrInvalidArgument))
	}
	if f.Workflow != "" && f.Service != "" {
		errs = append(errs, fmt.Errorf("%w: filter by workflow and service together is not indexed", ErrInvalidArgument))
	}
	for _, st := range f.Statuses {
		if !st.Valid() {
			errs = append(errs, fmt.Errorf("%w: filter status %s", ErrInvalidArgument, quote(string(st))))
		}
	}
	if !f.CreatedFrom.IsZero() && !f.CreatedTo.IsZero() && !f.CreatedFrom.Before(f.CreatedTo) {
		errs = append(errs, fmt.Errorf("%w: filter CreatedFrom must be before CreatedTo", ErrInvalidArgument))
	}
	return errors.Join(errs...)
}

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

// RunCountParams are the arguments of [QueryStore.RunCount].
type RunCountParams struct {
	// CreatedFrom and CreatedTo, when set, count only runs created in
	// [CreatedFrom, CreatedTo).
	CreatedFrom time.Time
	CreatedTo   time.Time
}

// RunCountResult is the answer of [QueryStore.RunCount].
type RunCountResult struct {
	// Counts holds the number of runs in each status; a status with none
	// may be missing.
	Counts map[RunStatus]int64
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
