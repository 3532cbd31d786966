package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/plaitdag/plait/store"
)

// phaseProgress: progress reports of batch running attempts, one
// TaskProgress call per round carrying a report of each, as the lease
// keeper of a worker with batch handlers that all reported sends them.
// The figure is per report; a call with one report costs the call's
// overhead on top.
func phaseProgress(ctx context.Context, e *env, ph phase, ops int) (result, error) {
	p, err := e.open(ctx)
	if err != nil {
		return result{}, err
	}
	defer p.client.Close()
	res, err := runningBatch(ctx, e, p, "progress.1")
	if err != nil {
		return result{}, err
	}
	round := 0
	send := func(n int) error {
		for done := 0; done < n; done += batch {
			round++
			reps := make([]store.ProgressReport, len(res.Tasks))
			for i, t := range res.Tasks {
				reps[i] = store.ProgressReport{Lease: t.Lease, Value: float64(round) / 100, Note: "round " + strconv.Itoa(round)}
			}
			out, err := p.store.TaskProgress(ctx, &store.TaskProgressParams{Reports: reps})
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

// runningBatch submits batch one-task runs and claims them all, with
// request id rid: the running attempts the progress and extend phases
// report on.
func runningBatch(ctx context.Context, e *env, p *plaitEnv, rid string) (*store.TaskClaimResult, error) {
	if err := e.submitMany(ctx, p.sched, batch); err != nil {
		return nil, err
	}
	params := workerClaim(p.NodeID(), batch, rid)
	res, err := p.store.TaskClaim(ctx, &params)
	if err != nil {
		return nil, err
	}
	if len(res.Tasks) != batch {
		return nil, fmt.Errorf("claimed %d of %d tasks", len(res.Tasks), batch)
	}
	return res, nil
}
