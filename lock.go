package plait

import (
	"context"
	"errors"
	"time"
)

// keepLeases extends the leases of every running attempt of this process
// every third of the lease duration, on its own goroutine so a busy handler
// cannot starve it. An attempt whose lease was lost, or whose lease this
// process can no longer vouch for, has its context cancelled with
// ErrLeaseLost; its later writes would be refused by the store anyway.
func (p *pool) keepLeases(ctx context.Context) {
	interval := p.cfg.leaseDuration / 3
	for {
		p.pause(ctx, interval)
		if ctx.Err() != nil {
			return
		}
		p.extendLeases(ctx)
	}
}

// leaseMargin is how long before the known lease deadline a handler is
// cancelled when extensions keep failing: it must stop before another
// worker can have taken over.
func (p *pool) leaseMargin() time.Duration { return p.cfg.leaseDuration / 6 }

func (p *pool) extendLeases(ctx context.Context) {
	execs := p.snapshot()
	if len(execs) == 0 {
		return
	}
	leases := make([]Lease, len(execs))
	for i, e := range execs {
		leases[i] = e.ct.Lease
	}
	sent := p.cfg.clock.Now()
	res, err := p.store.LeaseExtend(ctx, &LeaseExtendParams{WorkerID: p.cfg.workerID, Leases: leases, Duration: p.cfg.leaseDuration})
	if err != nil || len(res) != len(execs) {
		if ctx.Err() == nil {
			p.cfg.logger.Warn("plait: lease extension failed", "err", err, "leases", len(leases))
		}
		p.expireUnvouched(p.cfg.clock.Now(), execs)
		return
	}
	for i, r := range res {
		e := execs[i]
		if r.Err != nil {
			if errors.Is(r.Err, ErrStaleEpoch) || errors.Is(r.Err, ErrNotFound) {
				e.cancel(ErrLeaseLost)
				continue
			}
			p.cfg.logger.Warn("plait: lease extension refused", "run", e.ct.Lease.RunID, "task", e.ct.Lease.Task, "err", r.Err)
			continue
		}
		e.setDeadline(sent.Add(p.cfg.leaseDuration))
	}
	p.expireUnvouched(p.cfg.clock.Now(), execs)
}

// expireUnvouched cancels attempts whose lease may have run out by now.
func (p *pool) expireUnvouched(now time.Time, execs []*execution) {
	for _, e := range execs {
		if !now.Before(e.leaseDeadline().Add(-p.leaseMargin())) {
			e.cancel(ErrLeaseLost)
		}
	}
}
