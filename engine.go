package plait

import (
	"context"
	"time"

	"github.com/plaitdag/plait/internal/worker"
	"github.com/plaitdag/plait/store"
)

// The seam between the Scheduler and its engine, internal/worker: the
// engine runs claimed attempts through the handlers registered here and
// reports what it did as events, knowing nothing of Task, HandlerFunc,
// Codec or Event.

// workerConfig is the engine's configuration for one Run.
func (s *Scheduler) workerConfig() *worker.Config {
	c := &s.cfg
	wc := &worker.Config{
		Store: s.store, Clock: c.clock, Logger: c.logger, NodeID: s.nodeID, WorkerID: c.workerID,
		Concurrency: c.concurrency, Prefetch: c.prefetch, Queues: c.queues, Capabilities: c.capabilities,
		Routes:        s.routes(),
		LeaseDuration: c.leaseDuration, SweepInterval: c.sweepInterval, JanitorInterval: c.janitorInterval,
		ShutdownTimeout: c.shutdownTimeout, TimeoutGrace: c.timeoutGrace, IdleWait: c.idleWait,
		TaskLogFlush: c.taskLogFlush, CrashLimit: c.crashLimit, InlineResults: c.inlineResults,
		DefaultRetry:  c.defaultRetry,
		NodeHeartbeat: c.node.heartbeat, NodeTTL: c.node.ttl, NodeHistory: c.node.history,
		BaseContext: c.baseContextFor,
		Handler:     s.attemptHandler,
		HandlerNames: func() []string {
			if names := s.handlerNames.Load(); names != nil {
				return *names
			}
			return nil
		},
		Encode: func(v any) ([]byte, error) { return encodeValue(c.codec, v) },
		Emit:   s.emitEngine,
		Shared: &s.engine,
	}
	if ss, err := s.scheduleStore(); err == nil && ss != nil && !c.sched.off {
		// one process audits the fleet's leases: the schedule leader's
		wc.Audits = s.leading.Load
	}
	if c.weights != nil {
		w := c.weights.ordered()
		wc.Weights = &w
	}
	if c.hooks.metrics != nil {
		wc.Metrics = metricsHooks{c.hooks.metrics}
		if rm, ok := c.hooks.metrics.(RunMetrics); ok {
			wc.RunMetrics = runMetricsHooks{rm}
		}
	}
	return wc
}

// attemptHandler finds the engine's form of the handler registered as
// name (see runner).
func (s *Scheduler) attemptHandler(name string) (worker.Handler, bool) {
	s.mu.RLock()
	run, ok := s.runners[name]
	s.mu.RUnlock()
	return run, ok
}

// runner runs the handler chain fn for an attempt, as the Task a handler
// sees.
func (s *Scheduler) runner(fn HandlerFunc) worker.Handler {
	return func(ctx context.Context, a *worker.Attempt) (any, error) {
		ct := a.Claimed()
		t := &Task{
			RunID:   ct.Lease.RunID,
			Name:    ct.Spec.Name,
			Handler: ct.Spec.Handler,
			Attempt: ct.Attempt,
			Epoch:   ct.Lease.Epoch,
			Payload: ct.Spec.Payload,
			parents: ct.ParentResults,
			deps:    depNames(ct.Spec.Deps),
			lazy:    newLazyParents(ct, a.Results(), s.store),
			codec:   s.cfg.codec,
			exec:    a,
		}
		return call(ctx, fn, t)
	}
}

// emitEngine hands an engine event to the observers as an Event.
func (s *Scheduler) emitEngine(e worker.Event) {
	s.emit(Event{Type: EventType(e.Type), RunID: e.RunID, Task: e.Task, Attempt: e.Attempt, Epoch: e.Epoch,
		Err: e.Err, RetryIn: e.RetryIn, RunStatus: e.RunStatus, Count: e.Count, Node: e.Node, At: e.At})
}

// metricsHooks passes the engine's metrics to the user's [Metrics].
type metricsHooks struct{ m Metrics }

func (h metricsHooks) TaskStarted(l worker.Labels) { h.m.TaskStarted(TaskLabels(l)) }
func (h metricsHooks) TaskFinished(l worker.Labels, o store.Outcome, d time.Duration) {
	h.m.TaskFinished(TaskLabels(l), o, d)
}
func (h metricsHooks) TaskRetried(l worker.Labels, d time.Duration) {
	h.m.TaskRetried(TaskLabels(l), d)
}
func (h metricsHooks) TaskDead(lease store.Lease) { h.m.TaskDead(lease) }
func (h metricsHooks) LeaseLost(l worker.Labels)  { h.m.LeaseLost(TaskLabels(l)) }

// runMetricsHooks passes the engine's run ends to the user's [RunMetrics].
type runMetricsHooks struct{ m RunMetrics }

func (h runMetricsHooks) RunEnded(l worker.Labels, st store.RunStatus) {
	h.m.RunEnded(RunLabels{Workflow: l.Workflow, Tenant: l.Tenant}, st)
}
