package plait

import (
	"context"
	"time"
)

// RunInfo is what a handler can learn about the run its task belongs to and
// about the attempt it is running, from [Task.Run].
type RunInfo struct {
	// ID, Workflow, Tenant and Service are those of the run, as submitted.
	ID       string
	Workflow string
	Tenant   string
	Service  string
	// Metadata is the run's metadata, as submitted (see [WithMetadata] and
	// [WithTraceContext]); a copy the handler may keep or change. Nil when
	// the run has none.
	Metadata map[string]string
	// Task, Handler and Queue name the task, its handler and the queue it
	// was claimed from.
	Task    string
	Handler string
	Queue   string
	// Attempt is the record of the attempt being run, as far as it is known
	// while it runs: its number, epoch, this worker, and its start (the
	// store's clock at the claim). Duration, Outcome and Error are empty.
	Attempt Attempt
	// FirstStartedAt is when the task was first claimed, on the store's
	// clock.
	FirstStartedAt time.Time
	// LeaseUntil is the lease deadline the claim gave, on the store's clock;
	// extensions move the real one out.
	LeaseUntil time.Time
}

// TraceContext returns the W3C trace context the run was submitted with
// (see [WithTraceContext]): its traceparent and tracestate, each empty when
// absent, and traceparent empty when malformed.
func (r RunInfo) TraceContext() (traceparent, tracestate string) {
	tp := r.Metadata[TraceParentKey]
	if !validTraceParent(tp) {
		return "", ""
	}
	return tp, r.Metadata[TraceStateKey]
}

// Run returns what the handler can learn about the task's run and its
// attempt. Each call builds a fresh value, the metadata copied; call it once
// per attempt. A Task built by hand, in a handler's unit test, answers its
// own fields and nothing else.
func (t *Task) Run() RunInfo {
	info := RunInfo{ID: t.RunID, Task: t.Name, Handler: t.Handler,
		Attempt: Attempt{Attempt: t.Attempt, Epoch: t.Epoch}}
	e := t.exec
	if e == nil {
		return info
	}
	ct := e.Claimed()
	info.Workflow, info.Tenant, info.Service = ct.Workflow, ct.Tenant, ct.Service
	if ct.Metadata != nil {
		info.Metadata = make(map[string]string, len(ct.Metadata))
		for k, v := range ct.Metadata {
			info.Metadata[k] = v
		}
	}
	info.Queue = ct.Spec.Queue
	if info.Queue == "" {
		info.Queue = DefaultQueue
	}
	info.Attempt.StartedAt = e.ClaimedAt()
	info.Attempt.Worker, info.Attempt.Node = e.WorkerID(), e.NodeID()
	info.FirstStartedAt = ct.FirstStartedAt
	info.LeaseUntil = ct.LeaseUntil
	return info
}

// Timeout returns the task's Timeout (see the Timeout task option), zero
// when it has none or the Task was built by hand.
func (t *Task) Timeout() time.Duration {
	if t.exec == nil {
		return 0
	}
	return t.exec.Claimed().Spec.Timeout
}

// WithBaseContext sets where handler contexts take their values from: fn is
// called once when Run starts, and every handler's context inherits the
// values of the context it returns, not its cancellation or deadline (a
// handler's context is cancelled only for the reasons [HandlerFunc] gives).
// Without it handlers inherit the values of Run's context, again without
// its cancellation. A nil fn is an error.
func WithBaseContext(fn func() context.Context) Option {
	return func(c *config) {
		if fn == nil {
			c.reject("WithBaseContext", "nil", "needs a function")
			return
		}
		c.hooks.baseContext = fn
	}
}

// baseContextFor is the parent of every handler context of one Run: the
// values of the host's base context (or of Run's), never its cancellation.
func (c *config) baseContextFor(run context.Context) context.Context {
	if c.hooks.baseContext != nil {
		if b := c.hooks.baseContext(); b != nil {
			return context.WithoutCancel(b)
		}
		return context.Background()
	}
	return context.WithoutCancel(run)
}
