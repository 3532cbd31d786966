package plait

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// sweep recovers expired leases every sweep interval. Every process sweeps;
// the store makes each recovery happen once, so no leader is needed.
func (p *pool) sweep(ctx context.Context) {
	for {
		p.pause(ctx, p.cfg.sweepInterval)
		if ctx.Err() != nil {
			return
		}
		p.sweepOnce(ctx)
	}
}

func (p *pool) sweepOnce(ctx context.Context) {
	total := 0
	for {
		res, err := p.store.LeaseSweep(ctx, &store.LeaseSweepParams{Limit: SweepLimitDefault, CrashLimit: p.cfg.crashLimit})
		if err != nil {
			if ctx.Err() == nil {
				p.cfg.logger.Warn("plait: lease sweep failed", "err", err)
			}
			break
		}
		for _, c := range res.Corrupt {
			p.cfg.logger.Error("plait: skipped unreadable record in sweep", "record", c)
		}
		for _, l := range res.Dead {
			p.cfg.logger.Warn("plait: task dead-lettered after too many lost leases", "run", l.RunID, "task", l.Task)
			if m := p.cfg.hooks.metrics; m != nil {
				m.TaskDead(l)
			}
		}
		total += len(res.Requeued) + len(res.Dead)
		if !res.More {
			p.health.sweptAt.Store(p.cfg.clock.Now().UnixNano())
			break
		}
	}
	p.s.emit(Event{Type: EventLeasesSwept, Count: total})
	p.sampleDepth(ctx)
}
