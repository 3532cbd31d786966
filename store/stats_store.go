package store

import (
	"context"
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
