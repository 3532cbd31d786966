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
	return Labels{Workflow: ct.Workflow, Task: ct.Spec.Name, Handler: ct.Spec.Handler, Queue: q}
}

// sampleDepth reports the depth of this scheduler's queues to the metrics
// hooks, when there are hooks and the store can count.
func (p *pool) sampleDepth(ctx context.Context) {
	m := p.cfg.Metrics
	if m == nil {
		return
	}
	qd, ok := p.store.(store.QueueDepther)
	if !ok {
		return
	}
	res, err := qd.QueueDepth(ctx, &store.QueueDepthParams{Queues: p.cfg.Queues})
	if err != nil {
		if ctx.Err() == nil {
			p.cfg.Logger.Warn("plait: queue depth sample failed", "err", err)
		}
		return
	}
	for _, q := range res.Queues {
		m.QueueDepth(q.Queue, q.Ready, q.Delayed)
	}
}
