package plait

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// StatsSeries answers the tasks that succeeded, failed (or died) and were
// retried, and the runs that completed and failed, per minute of [From,
// To), oldest first, a minute with nothing a point of zeros: at most a day
// of minutes per call, NextCursor going on with the rest. The store keeps
// the minutes of at least the last [store.StatsSeriesKeep] while its
// stats are on (WithStats on either store; off by default). It returns an
// [*UnsupportedError] when the store does not implement
// [store.StatsSeriesStore] or its stats are off.
func (s *Scheduler) StatsSeries(ctx context.Context, params StatsSeriesParams) (*StatsSeriesResult, error) {
	st, err := capability[store.StatsSeriesStore](s.store, "StatsSeriesStore")
	if err != nil {
		return nil, err
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	return st.StatsSeries(ctx, &params)
}

// The per-minute series as a store answers it, re-exported from package
// store.
type (
	// StatsSeriesParams select the minutes of StatsSeries.
	StatsSeriesParams = store.StatsSeriesParams
	// StatsSeriesResult is a page of minutes.
	StatsSeriesResult = store.StatsSeriesResult
	// StatsPoint counts the transitions of one minute.
	StatsPoint = store.StatsPoint
)
