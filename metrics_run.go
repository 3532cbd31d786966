package plait

import (
	"context"
	"time"

	"github.com/plaitdag/plait/store"
)

// RunMetrics is implemented by a [Metrics] that wants the run-level hooks.
// The scheduler finds it by a type assertion on the value given to
// [WithMetrics], so a Metrics written before it keeps working unchanged.
// Its hooks are called like those of Metrics: synchronously, from many
// goroutines, and they must not block.
type RunMetrics interface {
	// RunSubmitted: a submit of one run returned, in the process that
	// submitted: [Scheduler.Submit], each submission of
	// [Scheduler.SubmitMany], and each run a schedule fires (in the
	// schedule leader). err is nil when the store created the run, else
	// what the submit answered for it (a refused workflow, a store
	// failure); a SubmitMany refused as a whole reports its error for
	// every submission. d is how long the call took on the scheduler's
	// clock: for SubmitMany and a schedule's pass, the whole batch. A
	// keyed submit answered with the run already there created nothing
	// and is not reported.
	RunSubmitted(l RunLabels, err error, d time.Duration)
	// RunEnded: a run ended with status (completed, failed or
	// cancelled). It is reported once in the fleet, by the process whose
	// write ended the run: the worker whose finish ended it (the store
	// answers a finish with the run's status), the process whose sweep
	// found its last task dead, or the process whose
	// [Scheduler.RunCancel] cancelled it. A replayed run that ends again
	// is reported again. An end can go unreported, never be reported
	// twice but in two rare races: two processes cancelling one run at
	// once, and a sweep and a finish elsewhere ending one run within the
	// same tick of the store's clock. Unreported: a finish whose reply was
	// lost (its resend answers stale), and a run the store ended by
	// itself (a run deleted or pruned never ends).
	RunEnded(l RunLabels, status RunStatus)
}

// RunLabels names a run for metrics: its workflow and its tenant (see
// [ForTenant]), empty for a run without one. Run ids are left out on
// purpose; the tenant can be many values, so a host caps it.
type RunLabels struct {
	Workflow string
	Tenant   string
}

// QueueDepthClearer is implemented by a [Metrics] whose queue depth
// gauges must be dropped when this process stops sampling them: it lost
// the schedule leader lease, or its Run stopped. Otherwise a scrape of a
// former leader would still show its last samples beside the new
// leader's. Found by a type assertion, like [RunMetrics].
type QueueDepthClearer interface {
	// QueueDepthClear drops every queue depth this process reported.
	QueueDepthClear()
}

// runMetrics answers the run hooks, nil when the metrics have none.
func (s *Scheduler) runMetrics() RunMetrics {
	rm, _ := s.cfg.hooks.metrics.(RunMetrics)
	return rm
}

// submitLabels names the run a submit of wf with opts makes, for its
// metrics: the options are applied to a scratch record.
func submitLabels(wf *Workflow, opts []SubmitOption) RunLabels {
	var p store.RunCreateParams
	for _, o := range opts {
		if o != nil {
			o.applySubmit(&p)
		}
	}
	l := RunLabels{Tenant: p.Tenant}
	if wf != nil {
		l.Workflow = wf.Name()
	}
	return l
}

// submitted tells the run metrics of one submit that started at start
// and answered res or err.
func (s *Scheduler) submitted(rm RunMetrics, l RunLabels, res *store.RunCreateResult, err error, start time.Time) {
	if err == nil && res.Existing {
		return
	}
	rm.RunSubmitted(l, err, s.cfg.clock.Now().Sub(start))
}

// submittedMany tells the run metrics of a batch of creates that started
// at start: each outcome of out, or err for every one of params when the
// batch failed as a whole. A create's labels are those of its params, or
// of labels where its params are nil (labels may be nil when none are).
func (s *Scheduler) submittedMany(params []*store.RunCreateParams, labels []RunLabels, out []store.RunCreateOutcome, err error, start time.Time) {
	rm := s.runMetrics()
	if rm == nil {
		return
	}
	d := s.cfg.clock.Now().Sub(start)
	for i := range params {
		var l RunLabels
		if labels != nil {
			l = labels[i]
		}
		if p := params[i]; p != nil && p.Workflow != nil {
			l = RunLabels{Workflow: p.Workflow.Name, Tenant: p.Tenant}
		}
		switch {
		case err != nil:
			rm.RunSubmitted(l, err, d)
		case out[i].Err != nil:
			rm.RunSubmitted(l, out[i].Err, d)
		case !out[i].Result.Existing:
			rm.RunSubmitted(l, nil, d)
		}
	}
}

// runBeforeCancel reads the run RunCancel is about to cancel, when there
// are run metrics: the store answers a cancel of a run already ended with
// the run as it is, so only the status before tells whether this cancel
// ended it. Nil when there are none, or the read failed (the cancel then
// reports no end).
func (s *Scheduler) runBeforeCancel(ctx context.Context, id string) *store.Run {
	if s.runMetrics() == nil {
		return nil
	}
	r, err := s.store.RunGet(ctx, &store.RunGetParams{ID: id})
	if err != nil {
		return nil
	}
	return r
}

// cancelled tells the run metrics of a cancel that ended the run: it was
// not ended before and is cancelled after.
func (s *Scheduler) cancelled(before, after *store.Run) {
	rm := s.runMetrics()
	if rm == nil || before == nil || before.Status.Terminal() || after.Status != store.RunCancelled {
		return
	}
	rm.RunEnded(RunLabels{Workflow: after.Workflow, Tenant: after.Tenant}, after.Status)
}
