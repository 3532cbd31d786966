package worker

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// janitor prunes the index entries of expired runs every janitor interval,
// and, on a store that lists running tasks, in the process that audits for
// the fleet (Config.Audits), looks for running tasks that lost their lease
// entry (leaseAuditOnce), until Run stops.
func (p *pool) janitor(ctx context.Context, qs store.QueryStore) {
	ts, audit := p.store.(store.TaskSearchStore)
	for {
		p.pause(ctx, p.cfg.JanitorInterval)
		if ctx.Err() != nil {
			return
		}
		p.pruneOnce(ctx, qs)
		if audit && (p.cfg.Audits == nil || p.cfg.Audits()) {
			p.leaseAuditOnce(ctx, qs, ts)
		}
	}
}

// pruneOnce is one pass of the janitor: prune calls until the store has
// nothing due or the pass has removed JanitorPassMax runs. It reports the
// count as EventRunsPruned.
func (p *pool) pruneOnce(ctx context.Context, qs store.QueryStore) {
	total := 0
	for total < JanitorPassMax {
		res, err := qs.RunPrune(ctx, &store.RunPruneParams{Limit: JanitorBatch})
		if err != nil {
			if ctx.Err() == nil {
				p.cfg.Logger.Warn("plait: pruning expired runs failed", "err", err)
			}
			break
		}
		total += res.Pruned
		if !res.More {
			break
		}
	}
	p.emit(Event{Type: EventRunsPruned, Count: total})
}
