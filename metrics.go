package plait

import (
	"context"
	"time"

	"github.com/plaitdag/plait/store"
)

// Metrics receives the scheduler's metrics hooks, set with [WithMetrics]:
// a host forwards them to its metrics library (see examples/prometheus).
// The scheduler calls them synchronously from its workers and drivers, so
// each must be quick and must not block; they may be called from many
// goroutines at once. Embed [NopMetrics] to implement only some.
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
	// QueueDepth samples how many tasks wait on a queue this scheduler
	// claims from: ready and delayed ones. It is called every sweep
	// interval while Run runs, when the store implements [QueueDepther].
	QueueDepth(queue string, ready, delayed int)
}

// TaskLabels names an attempt for metrics: low-cardinality values fit for
// labels. Run ids are left out on purpose.
type TaskLabels struct {
	Workflow string
	Task     string
	Handler  string
	Queue    string
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

// labelsOf names a claimed task for metrics.
func labelsOf(ct *store.ClaimedTask) TaskLabels {
	q := ct.Spec.Queue
	if q == "" {
		q = DefaultQueue
	}
	return TaskLabels{Workflow: ct.Workflow, Task: ct.Spec.Name, Handler: ct.Spec.Handler, Queue: q}
}

// sampleDepth reports the depth of this scheduler's queues to the metrics
// hooks, when there are hooks and the store can count.
func (p *pool) sampleDepth(ctx context.Context) {
	m := p.cfg.hooks.metrics
	if m == nil {
		return
	}
	qd, ok := p.store.(store.QueueDepther)
	if !ok {
		return
	}
	res, err := qd.QueueDepth(ctx, &store.QueueDepthParams{Queues: p.cfg.queues})
	if err != nil {
		if ctx.Err() == nil {
			p.cfg.logger.Warn("plait: queue depth sample failed", "err", err)
		}
		return
	}
	for _, q := range res.Queues {
		m.QueueDepth(q.Queue, q.Ready, q.Delayed)
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
