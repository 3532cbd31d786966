package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/plaitdag/plait/internal/ids"
)

// RunFilter selects runs for [QueryStore.RunList] and [QueryStore.RunCount].
// Zero fields select everything; set fields combine with AND.
//
// A store answers a filter from one index: the end time index when
// EndedFrom or EndedTo is set, else the index of the tenant, the service
// or the workflow (in that order of preference), else the status indexes,
// else the index of all runs. What that index does not hold (a second
// name, a status, a time range of the other kind, ErrorPrefix) is checked
// run by run as the index is read: a bounded read, which on the Redis
// store reads at most [QueryReadBudget] + page entries of each shard's
// index per RunList call, and at most [RunCountParams].Limit per shard per
// RunCount call. A page cut short by that bound holds fewer runs than its
// limit, even none, and carries a cursor to go on.
type RunFilter struct {
	// Service selects the runs submitted with [ForService] of it.
	// Index-backed (one index per service).
	Service string
	// Tenant selects the runs submitted with [ForTenant] of it, of any
	// service or, with Service, of that service alone. Index-backed (one
	// index per tenant, and one per service and tenant).
	Tenant string
	// Workflow selects runs of the workflow of that name. Index-backed
	// alone; with Service (or Tenant) the store reads the smaller of the
	// two indexes, shard by shard, and checks the other name of each run:
	// a bounded read.
	Workflow string
	// Statuses, when not empty, selects runs in any of these statuses.
	// Index-backed alone (one index per status but pending, which is all
	// runs less the others); with a name, an end time range or
	// ErrorPrefix, each run's status is checked as its index is read.
	Statuses []RunStatus
	// CreatedFrom and CreatedTo, when set, select runs created at or
	// after CreatedFrom and before CreatedTo. Index-backed (every index
	// but the end time index is ordered by creation); checked run by run
	// with an end time range.
	CreatedFrom time.Time
	CreatedTo   time.Time
	// EndedFrom and EndedTo, when set, select runs that ended at or
	// after EndedFrom and before EndedTo: finished runs only, so Statuses
	// may name only completed, failed and cancelled (none means all
	// three). Index-backed: the end of a run files it in the index of its
	// final status by its end time (a replay takes it out; its next end
	// files it again). A filter with an end time lists runs by EndedAt,
	// newest first, not by CreatedAt: "failed in the last 24 hours" is
	// {Statuses: failed, EndedFrom: now - 24h}.
	EndedFrom time.Time
	EndedTo   time.Time
	// ErrorPrefix, when not empty, selects runs with a task whose error
	// (its last one: [TaskInstance].Error) starts with it, byte for byte,
	// at most [ErrorPrefixMax] bytes. Never index-backed: each run's
	// errors are read as the index the other fields choose is read, and
	// on the Redis store each run's tasks count against the read bound too
	// (a run of more tasks than the bound is still read, alone). Narrow it
	// with Statuses, a name or a time range.
	ErrorPrefix string
}

// ErrorPrefixMax is the longest [RunFilter].ErrorPrefix.
const ErrorPrefixMax = 256

// QueryReadBudget is the most index entries beyond the page that one
// RunList call reads per shard to check the fields of a [RunFilter] its
// index does not hold.
const QueryReadBudget = 1000

// ByEnd reports whether the filter selects by end time, and so lists runs
// by EndedAt rather than by CreatedAt.
func (f *RunFilter) ByEnd() bool { return !f.EndedFrom.IsZero() || !f.EndedTo.IsZero() }

// CountIndexed reports whether [QueryStore.RunCount] answers the filter
// exactly from its indexes, whatever the number of runs, with no read of
// runs: a filter of statuses and a creation time range alone, or of
// statuses and an end time range alone. Any other filter is counted by a
// bounded read.
func (f *RunFilter) CountIndexed() bool {
	if f.Service != "" || f.Tenant != "" || f.Workflow != "" || f.ErrorPrefix != "" {
		return false
	}
	return !f.ByEnd() || (f.CreatedFrom.IsZero() && f.CreatedTo.IsZero())
}

// Validate reports why the filter cannot be answered: bad names, an
// unknown status, a status that never ends with an end time range, an
// empty time range or an error prefix too long. Each problem wraps
// [ErrInvalidArgument].
func (f *RunFilter) Validate() error {
	var errs []error
	for _, n := range []struct{ field, v string }{{"service", f.Service}, {"tenant", f.Tenant}, {"workflow", f.Workflow}} {
		if n.v == "" {
			continue
		}
		if err := ids.Check(n.v); err != nil {
			errs = append(errs, fmt.Errorf("%w: filter %s %s", ErrInvalidArgument, n.field, err))
		}
	}
	for _, st := range f.Statuses {
		if !st.Valid() {
			errs = append(errs, fmt.Errorf("%w: filter status %s", ErrInvalidArgument, quote(string(st))))
		} else if f.ByEnd() && !st.Terminal() {
			errs = append(errs, fmt.Errorf("%w: filter by end time with status %s, which has not ended", ErrInvalidArgument, st))
		}
	}
	if !f.CreatedFrom.IsZero() && !f.CreatedTo.IsZero() && !f.CreatedFrom.Before(f.CreatedTo) {
		errs = append(errs, fmt.Errorf("%w: filter CreatedFrom must be before CreatedTo", ErrInvalidArgument))
	}
	if !f.EndedFrom.IsZero() && !f.EndedTo.IsZero() && !f.EndedFrom.Before(f.EndedTo) {
		errs = append(errs, fmt.Errorf("%w: filter EndedFrom must be before EndedTo", ErrInvalidArgument))
	}
	if len(f.ErrorPrefix) > ErrorPrefixMax {
		errs = append(errs, fmt.Errorf("%w: filter ErrorPrefix of %d bytes, want at most %d", ErrInvalidArgument, len(f.ErrorPrefix), ErrorPrefixMax))
	}
	return errors.Join(errs...)
}

// RunCountParams are the arguments of [QueryStore.RunCount] and of the
// Scheduler's RunCount.
type RunCountParams struct {
	// Filter selects the runs counted, as it selects those listed: a
	// count equals the length of the listing of the same filter.
	Filter RunFilter
	// Limit bounds a count that reads runs (a filter
	// [RunFilter.CountIndexed] does not name): at most Limit index entries
	// per shard, 0 to [RunCountLimitMax]; 0 means [RunCountLimitDefault].
	// A count answered from the indexes ignores it.
	Limit int
}

// Validate reports why the count cannot be answered: a limit out of range
// or a bad filter; each problem wraps [ErrInvalidArgument].
func (p *RunCountParams) Validate() error {
	var errs []error
	if p.Limit < 0 || p.Limit > RunCountLimitMax {
		errs = append(errs, fmt.Errorf("%w: count limit %d, want 0..%d", ErrInvalidArgument, p.Limit, RunCountLimitMax))
	}
	if err := p.Filter.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ReadLimit is the bound of a count that reads runs: Limit, or
// [RunCountLimitDefault] when it is 0.
func (p *RunCountParams) ReadLimit() int {
	if p.Limit == 0 {
		return RunCountLimitDefault
	}
	return p.Limit
}

// RunCountResult is the answer of [QueryStore.RunCount].
type RunCountResult struct {
	// Counts holds the number of matching runs in each status; a status
	// with none may be missing.
	Counts map[RunStatus]int64
	// Capped reports that the read bound (RunCountParams.Limit) stopped
	// the count before the matching index was over: Counts are then the
	// runs found among those read, at least that many. False means
	// Counts are exact.
	Capped bool
}

// Count limits.
const (
	// RunCountLimitDefault is the read bound of a count given no limit.
	RunCountLimitDefault = 10_000
	// RunCountLimitMax is the largest read bound of a count.
	RunCountLimitMax = 1_000_000
)
