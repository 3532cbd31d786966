package worker

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// labelsOf names a claimed task for metrics.
func labelsOf(ct *store.ClaimedTask) Labels {
	q := ct.Spec.Queue
	if q == "" {
		q = store.DefaultQueue
	}
	return Labels{Workflow: ct.Workflow, Task: ct.Spec.Name, Handler: ct.Spec.Handler, Queue: q, Tenant: ct.Tenant}
}

// runEndedBySweep tells the run metrics of a run this process's sweep
// ended by making lease's task dead. The sweep's answer names the dead
// lease, not its run's status, so the run is read back, only when there
// are run metrics and only for a dead task, which is rare. The sweep
// ended the run when the run ended at the very instant the task died: the
// store ends a run in the step that ends its last task, on one clock
// reading. A run that another process ended later, or that is still
// going, is not this process's to tell. The one case told twice: under
// the continue strategy, another worker's finish ending the run within
// the same tick of the store's clock (a millisecond on Redis) as the
// sweep that killed one of its tasks.
func (p *pool) runEndedBySweep(ctx context.Context, lease store.Lease) {
	rm := p.cfg.RunMetrics
	if rm == nil {
		return
	}
	r, err := p.store.RunGet(ctx, &store.RunGetParams{ID: lease.RunID})
	if err != nil {
		if ctx.Err() == nil {
			p.cfg.Logger.Warn("plait: reading a swept run for its metrics failed", "run", lease.RunID, "err", err)
		}
		return
	}
	t := r.Task(lease.Task)
	if !r.Status.Terminal() || t == nil || t.Status != store.TaskDead || !r.EndedAt.Equal(t.EndedAt) {
		return
	}
	rm.RunEnded(Labels{Workflow: r.Workflow, Tenant: r.Tenant}, r.Status)
}
