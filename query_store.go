package plait

import (
	"context"
	"fmt"
	"time"
)

// Runs lists runs matching q.Filter, newest first, one page per call; pass
// the answered Cursor back for the next page. A Limit of 0 means
// [QueryLimitDefault]. It answers [ErrInvalidArgument] for a bad filter or
// limit and an [*UnsupportedError] when the store does not implement
// [QueryStore].
func (s *Scheduler) Runs(ctx context.Context, q RunQueryParams) (*RunQueryResult, error) {
	qs, err := capability[QueryStore](s.store, "QueryStore")
	if err != nil {
		return nil, err
	}
	if q.Limit == 0 {
		q.Limit = QueryLimitDefault
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	return qs.RunQuery(ctx, &q)
}

// RunsByID returns the runs of ids in the order given, nil for each id
// with no run, in one round trip. It answers an [*UnsupportedError] when the
// store does not implement [QueryStore].
func (s *Scheduler) RunsByID(ctx context.Context, ids ...string) ([]*Run, error) {
	qs, err := capability[QueryStore](s.store, "QueryStore")
	if err != nil {
		return nil, err
	}
	if len(ids) > GetManyMax {
		return nil, fmt.Errorf("%w: %d ids, want at most %d", ErrInvalidArgument, len(ids), GetManyMax)
	}
	res, err := qs.RunGetMany(ctx, &RunGetManyParams{IDs: ids})
	if err != nil {
		return nil, err
	}
	return res.Runs, nil
}

// RunCounts counts runs per status, created in [from, to) when those are
// set. It answers an [*UnsupportedError] when the store does not implement
// [QueryStore].
func (s *Scheduler) RunCounts(ctx context.Context, from, to time.Time) (map[RunStatus]int64, error) {
	qs, err := capability[QueryStore](s.store, "QueryStore")
	if err != nil {
		return nil, err
	}
	res, err := qs.RunCount(ctx, &RunCountParams{CreatedFrom: from, CreatedTo: to})
	if err != nil {
		return nil, err
	}
	return res.Counts, nil
}

// DeleteRun removes a finished run with everything it owns. It answers
// [ErrRunActive] for a run that has not finished (cancel it first),
// [ErrNotFound] for an unknown one, and an [*UnsupportedError] when the
// store does not implement [QueryStore].
func (s *Scheduler) DeleteRun(ctx context.Context, id string) error {
	qs, err := capability[QueryStore](s.store, "QueryStore")
	if err != nil {
		return err
	}
	return qs.RunDelete(ctx, &RunDeleteParams{ID: id})
}

// Tasks returns the tasks of run id in the given statuses (every task when
// none is given), in definition order. It answers [ErrNotFound] for an
// unknown run and an [*UnsupportedError] when the store does not implement
// [QueryStore].
func (s *Scheduler) Tasks(ctx context.Context, id string, statuses ...TaskStatus) ([]TaskInstance, error) {
	qs, err := capability[QueryStore](s.store, "QueryStore")
	if err != nil {
		return nil, err
	}
	res, err := qs.TaskQuery(ctx, &TaskQueryParams{RunID: id, Statuses: statuses})
	if err != nil {
		return nil, err
	}
	return res.Tasks, nil
}
