package plait

import (
	"context"
	"fmt"
	"time"

	"github.com/plaitdag/plait/store"
)

// RunList lists runs matching params.Filter, newest first, one page per call; pass
// the answered Cursor back for the next page. A Limit of 0 means
// [QueryLimitDefault]. It answers [ErrInvalidArgument] for a bad filter or
// limit and an [*UnsupportedError] when the store does not implement
// [QueryStore].
func (s *Scheduler) RunList(ctx context.Context, params RunListParams) (*RunListResult, error) {
	qs, err := capability[store.QueryStore](s.store, "QueryStore")
	if err != nil {
		return nil, err
	}
	if params.Limit == 0 {
		params.Limit = QueryLimitDefault
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	return qs.RunList(ctx, &params)
}

// RunGetMany returns the runs of ids in the order given, nil for each id
// with no run, in one round trip. It answers an [*UnsupportedError] when the
// store does not implement [QueryStore].
func (s *Scheduler) RunGetMany(ctx context.Context, ids ...string) ([]*Run, error) {
	qs, err := capability[store.QueryStore](s.store, "QueryStore")
	if err != nil {
		return nil, err
	}
	if len(ids) > store.GetManyMax {
		return nil, fmt.Errorf("%w: %d ids, want at most %d", ErrInvalidArgument, len(ids), store.GetManyMax)
	}
	res, err := qs.RunGetMany(ctx, &store.RunGetManyParams{IDs: ids})
	if err != nil {
		return nil, err
	}
	return res.Runs, nil
}

// RunCount counts runs per status, created in [from, to) when those are
// set. It answers an [*UnsupportedError] when the store does not implement
// [QueryStore].
func (s *Scheduler) RunCount(ctx context.Context, from, to time.Time) (map[RunStatus]int64, error) {
	qs, err := capability[store.QueryStore](s.store, "QueryStore")
	if err != nil {
		return nil, err
	}
	res, err := qs.RunCount(ctx, &store.RunCountParams{CreatedFrom: from, CreatedTo: to})
	if err != nil {
		return nil, err
	}
	return res.Counts, nil
}

// RunDelete removes a finished run with everything it owns. It answers
// [ErrRunActive] for a run that has not finished (cancel it first),
// [ErrNotFound] for an unknown one, and an [*UnsupportedError] when the
// store does not implement [QueryStore].
func (s *Scheduler) RunDelete(ctx context.Context, id string) error {
	qs, err := capability[store.QueryStore](s.store, "QueryStore")
	if err != nil {
		return err
	}
	return qs.RunDelete(ctx, &store.RunDeleteParams{ID: id})
}

// TaskList returns the tasks of run id in the given statuses (every task when
// none is given), in definition order. It answers [ErrNotFound] for an
// unknown run and an [*UnsupportedError] when the store does not implement
// [QueryStore].
func (s *Scheduler) TaskList(ctx context.Context, id string, statuses ...TaskStatus) ([]TaskInstance, error) {
	qs, err := capability[store.QueryStore](s.store, "QueryStore")
	if err != nil {
		return nil, err
	}
	res, err := qs.TaskList(ctx, &store.TaskListParams{RunID: id, Statuses: statuses})
	if err != nil {
		return nil, err
	}
	return res.Tasks, nil
}

// Run queries, re-exported from package store.
type (
	// RunFilter selects runs: see [store.RunFilter].
	RunFilter = store.RunFilter
	// RunListParams select a page of runs: see [store.RunListParams].
	RunListParams = store.RunListParams
	// RunListResult is a page of runs.
	RunListResult = store.RunListResult
)

// Page sizes of [Scheduler.RunList]: the size given no limit, and the
// largest.
const (
	QueryLimitDefault = store.QueryLimitDefault
	QueryLimitMax     = store.QueryLimitMax
)

// RunGet returns the run's current state with every task.
func (s *Scheduler) RunGet(ctx context.Context, runID string) (*Run, error) {
	return s.store.RunGet(ctx, &store.RunGetParams{ID: runID})
}
