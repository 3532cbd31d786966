package plait

import (
	"context"
	"slices"
	"time"
)

// StatsStore is the capability of keeping counters and attempt durations,
// updated inside the status transitions themselves, so that reading them
// costs the same however many runs the store holds.
type StatsStore interface {
	// StoreStats returns the counters and duration windows as they are.
	StoreStats(ctx context.Context, params *StoreStatsParams) (*StoreStatsResult, error)
}

// StoreStatsParams are the arguments of [StatsStore.StoreStats]. It has no
// field yet; it exists so fields can be added.
type StoreStatsParams struct{}

// StoreStatsResult is the answer of [StatsStore.StoreStats].
type StoreStatsResult struct {
	// Queues holds the counters of each queue that has seen a task.
	Queues map[string]StatCounters
	// Workflows holds the counters of each workflow that has seen a run,
	// where the store keeps them (see each store's documentation).
	Workflows map[string]StatCounters
	// Durations holds, per task name, the durations of its most recent
	// finished attempts (the store's window), in no particular order.
	Durations map[string][]time.Duration
}

// StatCounters counts the task transitions of one queue or one workflow
// since the store's counters began. Running is a gauge: the tasks running
// now.
type StatCounters struct {
	// Submitted counts tasks made due for the first time (a queue) or
	// runs created (a workflow).
	Submitted int64
	// Running is the number of tasks running now.
	Running   int64
	Succeeded int64
	Failed    int64
	Dead      int64
	// Retried counts attempts that ended in a retry.
	Retried int64
	// Crashed counts leases the sweep recovered.
	Crashed int64
}

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
	Queues    map[string]StatCounters
	Workflows map[string]StatCounters
	// Tasks holds the duration percentiles of each task name over its
	// window of recent attempts.
	Tasks map[string]DurationStats
}

// Stats returns the store's counters per queue and per workflow and the
// duration percentiles per task name. It costs one store call whatever the
// number of runs, so it suits a dashboard polling every second. It returns
// an [*UnsupportedError] when the store does not implement [StatsStore].
func (s *Scheduler) Stats(ctx context.Context) (*Stats, error) {
	st, err := capability[StatsStore](s.store, "StatsStore")
	if err != nil {
		return nil, err
	}
	res, err := st.StoreStats(ctx, &StoreStatsParams{})
	if err != nil {
		return nil, err
	}
	out := &Stats{Queues: res.Queues, Workflows: res.Workflows, Tasks: make(map[string]DurationStats, len(res.Durations))}
	for name, w := range res.Durations {
		out.Tasks[name] = NewDurationStats(w)
	}
	return out, nil
}
