package worker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plaitdag/plait/store"
)

// keepLeases extends the leases of every running attempt of this process
// every third of the lease duration, on its own goroutine so a busy handler
// cannot starve it. An attempt whose lease was lost, or whose lease this
// process can no longer vouch for, has its context cancelled with
// ErrLeaseLost; its later writes would be refused by the store anyway.
//
// Each round first gives every attempt that has none its own lease timer
// (see watchLease), then extends on another goroutine, so a store call that
// hangs holds up neither the timers nor the next round; while one hangs no
// other is started, so calls cannot pile up behind it. Each round also
// sends the progress reports the attempts made since the last one
// (flushProgress), on a goroutine of its own under the same rule.
func (p *pool) keepLeases(ctx context.Context) {
	interval := p.cfg.LeaseDuration / 3
	var calls sync.WaitGroup
	defer calls.Wait()
	var busy atomic.Bool
	// sendingProgress is busy for the progress reports, sent beside the
	// extension so that a slow one never holds up a lease.
	var sendingProgress atomic.Bool
	for {
		p.pause(ctx, interval)
		if ctx.Err() != nil {
			return
		}
		execs := p.snapshot()
		if len(execs) == 0 {
			p.health.extendedAt.Store(p.cfg.Clock.Now().UnixNano())
			continue
		}
		now := p.cfg.Clock.Now()
		for _, e := range execs {
			p.watchLease(e, now)
		}
		if p.progressWaiting(execs) && !sendingProgress.Swap(true) {
			calls.Add(1)
			go func() {
				defer calls.Done()
				defer sendingProgress.Store(false)
				p.flushProgress(ctx, execs)
			}()
		}
		if busy.Swap(true) {
			p.cfg.Logger.Warn("plait: lease extension still in flight from the last round; this round skips it", "leases", len(execs))
			continue
		}
		calls.Add(1)
		go func() {
			defer calls.Done()
			defer busy.Store(false)
			p.extendLeases(ctx, execs)
		}()
	}
}

// leaseMargin is how long before the known lease deadline a handler is
// cancelled when extensions keep failing: it must stop before another
// worker can have taken over.
func (p *pool) leaseMargin() time.Duration { return p.cfg.LeaseDuration / 6 }

func (p *pool) extendLeases(ctx context.Context, execs []*Attempt) {
	leases := make([]store.Lease, len(execs))
	for i, e := range execs {
		leases[i] = e.ct.Lease
	}
	sent := p.cfg.Clock.Now()
	// The next round is due in a third of the lease: a call still hanging
	// by then is given up. Handlers do not depend on it returning; see
	// watchLease.
	cctx, cancel := context.WithTimeout(ctx, p.cfg.LeaseDuration/3)
	res, err := p.store.LeaseExtend(cctx, &store.LeaseExtendParams{WorkerID: p.cfg.NodeID, Leases: leases, Duration: p.cfg.LeaseDuration})
	cancel()
	if err != nil || len(res) != len(execs) {
		if ctx.Err() == nil {
			p.cfg.Logger.Warn("plait: lease extension failed", "err", err, "leases", len(leases))
		}
		p.expireUnvouched(p.cfg.Clock.Now(), execs)
		return
	}
	p.health.extendedAt.Store(sent.UnixNano())
	for i, r := range res {
		e := execs[i]
		if r.Err != nil {
			if errors.Is(r.Err, store.ErrStaleEpoch) || errors.Is(r.Err, store.ErrNotFound) {
				e.cancel(ErrLeaseLost)
				continue
			}
			p.cfg.Logger.Warn("plait: lease extension refused", "run", e.ct.Lease.RunID, "task", e.ct.Lease.Task, "err", r.Err)
			continue
		}
		e.setDeadline(sent.Add(p.cfg.LeaseDuration))
	}
	p.expireUnvouched(p.cfg.Clock.Now(), execs)
}

// expireUnvouched cancels attempts whose lease may have run out by now.
func (p *pool) expireUnvouched(now time.Time, execs []*Attempt) {
	for _, e := range execs {
		if !now.Before(e.leaseDeadline().Add(-p.leaseMargin())) {
			e.cancel(ErrLeaseLost)
		}
	}
}

// watchLease gives the attempt its own lease timer, unless it has one: at
// the known deadline minus the margin the handler's context is cancelled
// with ErrLeaseLost, before the lease can have expired in the store,
// whatever the lease keeper's store call is doing meanwhile (it may hang on
// a cut-off connection for far longer than the lease). now is the local
// time.
//
// The keeper arms it at its first round after the claim, at most a third
// of the lease after it and well before the margin; a quick attempt is over
// by then and never pays for a timer. An attempt whose claim took half the
// lease to come back is armed at once by startAll instead.
func (p *pool) watchLease(e *Attempt, now time.Time) {
	e.mu.Lock()
	if !e.over && e.leaseTimer == nil {
		p.armLeaseLocked(e, now)
	}
	e.mu.Unlock()
}

func (p *pool) armLeaseLocked(e *Attempt, now time.Time) {
	e.leaseTimer = p.cfg.Clock.AfterFunc(e.deadline.Add(-p.leaseMargin()).Sub(now), func() { p.checkLease(e) })
}

// checkLease runs when an attempt's lease timer fires. An extension that
// moved the deadline since the timer was armed re-arms it for the new one,
// so extensions never touch timers; otherwise the lease can no longer be
// vouched for.
func (p *pool) checkLease(e *Attempt) {
	now := p.cfg.Clock.Now()
	e.mu.Lock()
	if e.over {
		e.mu.Unlock()
		return
	}
	if now.Before(e.deadline.Add(-p.leaseMargin())) {
		p.armLeaseLocked(e, now)
		e.mu.Unlock()
		return
	}
	e.mu.Unlock()
	e.cancel(ErrLeaseLost)
}

// vouched reports whether the attempt's lease is known to hold at now with
// the margin to spare, so a write for it can still land before another
// worker could have taken the task over.
func (p *pool) vouched(e *Attempt, now time.Time) bool {
	return now.Before(e.leaseDeadline().Add(-p.leaseMargin()))
}
