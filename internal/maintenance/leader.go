// Package maintenance holds the services that run beside the workers where
// only one process of a fleet may act: today the schedule leader's lease.
// The store keeps one lease; whoever holds it acts, and its epoch fences
// every write made under it, so a process that lost the lease without
// noticing (paused, cut off) cannot undo what the new holder did.
package maintenance

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plaitdag/plait/internal/clock"
	"github.com/plaitdag/plait/store"
)

// Config is what a Leader runs with.
type Config struct {
	Store store.ScheduleStore
	// Holder names this process to the store's lease.
	Holder string
	Clock  clock.Clock
	Logger *slog.Logger
	// TTL is the lease's time to live; Tick how often Loop acts at most
	// (sooner when an act asks for it).
	TTL, Tick time.Duration
	// Changed is told when this process takes the lease (acquired) or
	// stops holding it, with the lease's epoch; nil tells nobody.
	Changed func(acquired bool, epoch int64)
}

// Leader is one process's side of the lease. Its acts run one at a time.
type Leader struct {
	cfg Config

	mu sync.Mutex
	// epoch is the lease's epoch while this process leads, else 0.
	epoch int64
	// validUntil is when this process stops acting as leader, on its own
	// clock: four fifths of the TTL after the renewal was sent, so it has
	// stopped before the store can see the lease expire.
	validUntil time.Time
	// renewAt is when the next act renews the lease.
	renewAt time.Time
}

// NewLeader returns the side of the lease of the process cfg.Holder names;
// it holds nothing until its first act.
func NewLeader(cfg Config) *Leader { return &Leader{cfg: cfg} }

// Holder is the name this process holds the lease under.
func (l *Leader) Holder() string { return l.cfg.Holder }

// Term is the lease as one act holds it.
type Term struct{ l *Leader }

// Epoch is the lease's epoch, which fences the act's writes.
func (t Term) Epoch() int64 { return t.l.epoch }

// Valid reports whether the act may still write: the lease is held and
// not past the point where the store could see it expire.
func (t Term) Valid() bool { return t.l.valid() }

// Lost forgets the lease: the store answered a write with a stale epoch.
func (t Term) Lost() { t.l.lost() }

// Act takes or renews the lease when due and, holding it, calls fn.
// leading reports whether this process held the lease for the act; an
// error renewing it is answered with leading true while the lease it
// held is still valid.
func (l *Leader) Act(ctx context.Context, fn func(ctx context.Context, t Term) error) (leading bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ok, err := l.ensure(ctx)
	if !ok {
		return false, err
	}
	return true, fn(ctx, Term{l})
}

// Release gives the lease up when this process holds it, so another
// process takes over at once instead of after the TTL.
func (l *Leader) Release(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epoch == 0 {
		return nil
	}
	epoch := l.epoch
	l.lost()
	return l.cfg.Store.LeaderRelease(ctx, &store.LeaderReleaseParams{Holder: l.cfg.Holder, Epoch: epoch})
}

// lost forgets the lease; called with mu held.
func (l *Leader) lost() {
	if l.epoch != 0 && l.cfg.Changed != nil {
		l.cfg.Changed(false, l.epoch)
	}
	l.epoch = 0
	l.validUntil = time.Time{}
}

// valid reports whether this process may still act as leader.
func (l *Leader) valid() bool {
	return l.epoch != 0 && l.cfg.Clock.Now().Before(l.validUntil)
}

// ensure takes or renews the lease when due; called with mu held.
func (l *Leader) ensure(ctx context.Context) (bool, error) {
	sent := l.cfg.Clock.Now()
	if l.epoch != 0 && sent.Before(l.renewAt) && l.valid() {
		return true, nil
	}
	ttl := l.cfg.TTL
	res, err := l.cfg.Store.LeaderAcquire(ctx, &store.LeaderAcquireParams{Holder: l.cfg.Holder, Epoch: l.epoch, TTL: ttl})
	if err != nil {
		if !l.valid() {
			l.lost()
		}
		return l.valid(), err
	}
	if !res.Acquired {
		l.lost()
		return false, nil
	}
	if res.Lease.Epoch != l.epoch {
		l.lost()
		l.epoch = res.Lease.Epoch
		if l.cfg.Changed != nil {
			l.cfg.Changed(true, l.epoch)
		}
	}
	l.validUntil = sent.Add(ttl * 4 / 5)
	l.renewAt = sent.Add(min(l.cfg.Tick, ttl/3))
	return true, nil
}

// Running is a Loop started by Start.
type Running struct {
	clock   clock.Clock
	window  time.Duration
	done    chan struct{}
	stopped atomic.Pointer[time.Time]
}

// Start runs Loop in a goroutine until ctx ends. Wait on the answer for it
// to stop; window bounds that wait once ctx has ended.
func (l *Leader) Start(ctx context.Context, window time.Duration, pass func(ctx context.Context) (next time.Time, err error)) *Running {
	r := &Running{clock: l.cfg.Clock, window: window, done: make(chan struct{})}
	context.AfterFunc(ctx, func() {
		at := l.cfg.Clock.Now()
		r.stopped.Store(&at)
	})
	go func() {
		defer close(r.done)
		l.Loop(ctx, window, pass)
	}()
	return r
}

// Wait waits for the loop to end, but no longer than the window after its
// context ended: an act held up by a store that does not answer ends with
// its own deadline, after the caller has moved on.
func (r *Running) Wait() {
	if r == nil {
		return
	}
	at := r.stopped.Load()
	if at == nil {
		<-r.done
		return
	}
	left := at.Add(r.window).Sub(r.clock.Now())
	if left <= 0 {
		select {
		case <-r.done:
		default:
		}
		return
	}
	t := r.clock.NewTimer(left)
	defer t.Stop()
	select {
	case <-r.done:
	case <-t.C():
	}
}

// Loop calls pass every Tick, or at the next time it answers when that is
// sooner, until ctx ends; then it releases the lease within window. A pass
// cannot outlast the lease it acts under: each gets the TTL as deadline,
// which also ends a store call that hangs.
func (l *Leader) Loop(ctx context.Context, window time.Duration, pass func(ctx context.Context) (next time.Time, err error)) {
	clk := l.cfg.Clock
	for ctx.Err() == nil {
		wait := l.cfg.Tick
		pctx, cancel := context.WithTimeout(ctx, l.cfg.TTL)
		next, err := pass(pctx)
		cancel()
		if err != nil && ctx.Err() == nil && l.cfg.Logger != nil {
			l.cfg.Logger.Warn("plait: schedule pass failed", "err", err)
		}
		if !next.IsZero() {
			if d := next.Sub(clk.Now()); d < wait {
				wait = max(d, 0)
			}
		}
		if wait > 0 {
			t := clk.NewTimer(wait)
			select {
			case <-ctx.Done():
			case <-t.C():
			}
			t.Stop()
		}
	}
	// The lease is given up under a short deadline of its own, so the
	// next process leads at once; if the store does not answer, the lease
	// expires by itself.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), window)
	defer cancel()
	_ = l.Release(rctx)
}
