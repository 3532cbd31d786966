package main

import (
	"context"
	"time"

	"github.com/plaitdag/plait/store"
)

// phaseExtend: lease extensions of batch running attempts, one
// LeaseExtend call per round carrying all of them, as the lease keeper of
// a worker running batch long handlers sends them every third of the
// lease. The figure is per lease; a call with one lease costs the call's
// overhead on top.
func phaseExtend(ctx context.Context, e *env, ph phase, ops int) (result, error) {
	p, err := e.open(ctx)
	if err != nil {
		return result{}, err
	}
	defer p.client.Close()
	res, err := runningBatch(ctx, e, p, "extend.1")
	if err != nil {
		return result{}, err
	}
	leases := make([]store.Lease, len(res.Tasks))
	for i, t := range res.Tasks {
		leases[i] = t.Lease
	}
	send := func(n int) error {
		for done := 0; done < n; done += batch {
			out, err := p.store.LeaseExtend(ctx, &store.LeaseExtendParams{WorkerID: p.NodeID(), Leases: leases, Duration: time.Minute})
			if err != nil {
				return err
			}
			for _, r := range out {
				if r.Err != nil {
					return r.Err
				}
			}
		}
		return nil
	}
	if err := send(warmup * batch); err != nil {
		return result{}, err
	}
	ops = max(batch, ops/batch*batch) // whole calls only
	return e.count(ctx, ph, ops, func() error { return send(ops) })
}
