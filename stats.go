package plait

import (
	"context"
	"slices"
	"time"

	"github.com/plaitdag/plait/store"
)

// DurationStats summarizes the recent attempt durations of one task name.
type DurationStats struct {
	// Count is the number of durations in the window.
	Count int
	P50   time.Duration
	P95   time.Duration
	P99   time.Duration
}

// NewDurationStats summarizes a window of durations with the nearest-rank
// percentiles. It sorts window in place.
func NewDurationStats(window []time.Duration) DurationStats {
	n := len(window)
	if n == 0 {
		return DurationStats{}
	}
	slices.Sort(window)
	rank := func(p int) time.Duration {
		i := (p*n + 99) / 100 // ceil(p/100 * n), from 1
		if i < 1 {
			i = 1
		}
		return window[i-1]
	}
	return DurationStats{Count: n, P50: rank(50), P95: rank(95), P99: rank(99)}
}

// Stats is the answer of [Scheduler.Stats].
type Stats struct {
	Queues    map[string]store.StatCounters
	Workflows map[string]store.StatCounters
	// Tasks holds the duration percentiles of each task name over its
	// window of recent attempts.
	Tasks map[string]DurationStats
}

// Stats returns the store's counters per queue and per workflow and the
// duration percentiles per task name. It costs one store call whatever the
// number of runs, so it suits a dashboard polling every second. It returns
// an [*UnsupportedError] when the store does not implement [StatsStore].
func (s *Scheduler) Stats(ctx context.Context) (*Stats, error) {
	st, err := capability[store.StatsStore](s.store, "StatsStore")
	if err != nil {
		return nil, err
	}
	res, err := st.StoreStats(ctx, &store.StoreStatsParams{})
	if err != nil {
		return nil, err
	}
	out := &Stats{Queues: res.Queues, Workflows: res.Workflows, Tasks: make(map[string]DurationStats, len(res.Durations))}
	for name, w := range res.Durations {
		out.Tasks[name] = NewDurationStats(w)
	}
	return out, nil
}
