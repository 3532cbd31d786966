package worker

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// sweep recovers expired leases every sweep interval. Every process sweeps;
// the store makes each recovery happen once, so no leader is needed.
func (p *pool) sweep(ctx context.Context) {
	for {
		p.pause(ctx, p.cfg.SweepInterval)
		if ctx.Err() != nil {
			return
		}
		p.sweepOnce(ctx)
	}
}

func (p *pool) sweepOnce(ctx context.Context) {
	total := 0
	for {
		res, err := p.store.LeaseSweep(ctx, &store.LeaseSweepParams{Limit: SweepLimitDefault, CrashLimit: p.cfg.CrashLimit})
		if err != nil {
			if ctx.Err() == nil {
				p.cfg.Logger.Warn("plait: lease sweep failed", "err", err)
			}
			break
		}
		for _, c := range res.Corrupt {
			p.cfg.Logger.Error("plait: skipped unreadable record in sweep", "record", c)
		}
		for _, l := range res.Dead {
			p.cfg.Logger.Warn("plait: task dead-lettered after too many lost leases", "run", l.RunID, "task", l.Task)
			if m := p.cfg.Metrics; m != nil {
				m.TaskDead(l)
			}
			p.runEndedBySweep(ctx, l)
		}
		total += len(res.Requeued) + len(res.Dead)
		if !res.More {
			p.health.sweptAt.Store(p.cfg.Clock.Now().UnixNano())
			break
		}
	}
	p.emit(Event{Type: EventLeasesSwept, Count: total})
}
