package plait

import (
	"context"
	"slices"
	"time"

	"github.com/plaitdag/plait/store"
)

// Metrics receives the scheduler's metrics hooks, set with [WithMetrics]:
// a host forwards them to its metrics library, or imports a ready one
// (the modules github.com/plaitdag/plait/metrics/prometheus and
// github.com/plaitdag/plait/metrics/otel). The scheduler calls them
// synchronously from its workers and drivers, so each must be quick and
// must not block; they may be called from many goroutines at once. Embed
// [NopMetrics] to implement only some. A Metrics that also implements
// [RunMetrics] gets the run-level hooks, and one that implements
// [QueueDepthClearer] is told when its queue depth samples stop.
type Metrics interface {
	// TaskStarted: a handler is about to run an attempt.
	TaskStarted(l TaskLabels)
	// TaskFinished: an attempt's outcome was recorded: OutcomeSucceeded,
	// OutcomeRetry, OutcomeFailed, or OutcomeReleased (cut short by
	// shutdown). d is how long its handler ran, on the scheduler's clock:
	// up to the timeout and grace for one given up on, and zero for one
	// released by shutdown while its handler still ran.
	TaskFinished(l TaskLabels, o Outcome, d time.Duration)
	// TaskRetried: an attempt failed and the task runs again after delay;
	// TaskFinished reports the same attempt with OutcomeRetry.
	TaskRetried(l TaskLabels, delay time.Duration)
	// TaskDead: a task lost its worker more times than the crash limit
	// allows and is dead, as found by this process's sweep. The task may
	// have run anywhere, so only its lease is known.
	TaskDead(lease Lease)
	// LeaseLost: an attempt of this process lost its lease (another worker
	// or the sweep took the task over, or the run was cancelled or ended)
	// or could no longer vouch for it; its outcome is not recorded.
	LeaseLost(l TaskLabels)
	// QueueDepth samples how many tasks wait on a queue of the fleet:
	// ready and delayed ones. One process of the fleet samples: the one
	// holding the schedule leader lease, every sweep interval (at the
	// leader's tick at most) while its Run runs, each queue this process
	// or a live node claims from, when the store implements
	// [store.QueueDepther]. Every other process never calls it, so a gauge fed
	// from it is not summed over processes twice; a process that stops
	// leading calls [QueueDepthClearer.QueueDepthClear] when implemented.
	// A process without the leader (see [WithoutScheduleLeader]) or on a
	// store without [store.ScheduleStore] samples nothing.
	QueueDepth(queue string, ready, delayed int)
}

// TaskLabels names an attempt for metrics: low-cardinality values fit for
// labels. Run ids are left out on purpose. Tenant is the run's (see
// [ForTenant]), empty for a run without one: a host with many tenants caps
// it, as the metrics modules do.
type TaskLabels struct {
	Workflow string
	Task     string
	Handler  string
	Queue    string
	Tenant   string
}

// NopMetrics implements [Metrics] doing nothing; embed it to implement only
// the hooks you need.
type NopMetrics struct{}

// TaskStarted does nothing.
func (NopMetrics) TaskStarted(TaskLabels) {}

// TaskFinished does nothing.
func (NopMetrics) TaskFinished(TaskLabels, Outcome, time.Duration) {}

// TaskRetried does nothing.
func (NopMetrics) TaskRetried(TaskLabels, time.Duration) {}

// TaskDead does nothing.
func (NopMetrics) TaskDead(Lease) {}

// LeaseLost does nothing.
func (NopMetrics) LeaseLost(TaskLabels) {}

// QueueDepth does nothing.
func (NopMetrics) QueueDepth(string, int, int) {}

// WithMetrics sets the metrics hooks the scheduler calls (see [Metrics]).
// A nil m is an error; given twice, the last one counts.
func WithMetrics(m Metrics) Option {
	return func(c *config) {
		if m == nil {
			c.reject("WithMetrics", "nil", "needs a Metrics")
			return
		}
		c.hooks.metrics = m
	}
}

// Outcome says how an attempt ended: see [store.Outcome].
type Outcome = store.Outcome

// Outcomes of an attempt, as [Metrics.TaskFinished] gets them.
const (
	OutcomeSucceeded = store.OutcomeSucceeded
	OutcomeRetry     = store.OutcomeRetry
	OutcomeFailed    = store.OutcomeFailed
	OutcomeReleased  = store.OutcomeReleased
	OutcomeReturned  = store.OutcomeReturned
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
