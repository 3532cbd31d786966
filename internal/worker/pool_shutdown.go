package worker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/plaitdag/plait/store"
)

// ShutdownWriteWindow is how long, past the shutdown timeout, the last
// writes of a stopping Run may take: the releases of handlers cut short
// and the outcomes still queued. On a healthy store they take one round
// trip; on a hanging one Run gives up on them then, and their tasks come
// back when their leases expire.
const ShutdownWriteWindow = 500 * time.Millisecond

// shutdownLoopWait is how long Run waits for its background loops to see
// that it stopped when the shutdown deadline has passed already.
const shutdownLoopWait = 50 * time.Millisecond

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// waitUntil waits for wg until the deadline on the scheduler's clock and
// reports whether wg finished. A goroutine blocked in a store call that
// ignores its context may outlive Run this way; it exits once the call
// returns.
func (p *pool) waitUntil(wg *sync.WaitGroup, deadline time.Time) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	default:
	}
	t := p.cfg.Clock.NewTimer(deadline.Sub(p.cfg.Clock.Now()))
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C():
		return false
	}
}

// writeCtx returns the context for a write on behalf of attempts: base
// while Run is working, and under the shutdown deadline once it is
// stopping, so no final write can hold Run up. The deadline is measured on
// the scheduler's clock at the call. done releases the context.
func (p *pool) writeCtx(base context.Context) (ctx context.Context, done func()) {
	stopBy := p.stopBy.Load()
	if stopBy == nil {
		return base, func() {}
	}
	return context.WithTimeout(base, stopBy.Sub(p.cfg.Clock.Now()))
}

// pastDeadline reports whether Run is stopping and its shutdown deadline
// has passed.
func (p *pool) pastDeadline() bool {
	stopBy := p.stopBy.Load()
	return stopBy != nil && !p.cfg.Clock.Now().Before(*stopBy)
}

// withdrawHeld takes back from the workers the tasks claimed ahead that
// none has begun, so they need not wait for a busy slot to go free: those
// held since cutoff or earlier, or all of them when cutoff is zero. The
// caller sends them back to their queues with sendBack. waiting counts the
// held tasks left.
func (p *pool) withdrawHeld(cutoff time.Time) (out []*Attempt, waiting int) {
	for _, e := range p.snapshot() {
		if e.begun.Load() {
			continue
		}
		if !cutoff.IsZero() && e.heldSince.After(cutoff) {
			waiting++
			continue
		}
		if e.begun.CompareAndSwap(false, true) && e.settle() {
			out = append(out, e)
		}
	}
	return out, waiting
}

// sendBack returns withdrawn tasks to the heads of their queues through
// the finisher; they never started, so no attempt is recorded.
func (p *pool) sendBack(es []*Attempt) {
	for _, e := range es {
		p.fin.submit(e, store.TaskOutcome{Lease: e.ct.Lease, Outcome: store.OutcomeReturned})
	}
}

// drain lets running handlers finish for up to the shutdown timeout, then
// cancels the rest and releases their tasks without waiting for them.
func (p *pool) drain() {
	done := make(chan struct{})
	go func() { p.handlers.Wait(); close(done) }()
	t := p.cfg.Clock.NewTimer(p.cfg.ShutdownTimeout)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C():
	}
	for _, e := range p.snapshot() {
		e.cancel(ErrShutdown)
		if e.settle() {
			p.fin.submit(e, p.shutdownOutcome(e))
		}
	}
}

// shutdownOutcome releases an attempt whose handler Run stopped under. The
// attempt record carries an error naming [ErrShutdown], so whoever reads
// the task's history sees that the attempt did not fail but was cut short,
// and by what.
func (p *pool) shutdownOutcome(e *Attempt) store.TaskOutcome {
	return store.TaskOutcome{Lease: e.ct.Lease, Outcome: store.OutcomeReleased, Error: p.shutdownErr().Error()}
}

// shutdownErr is the error of an attempt released by shutdown.
func (p *pool) shutdownErr() error {
	return fmt.Errorf("%w: the handler was still running when the shutdown timeout (%s) passed", ErrShutdown, p.cfg.ShutdownTimeout)
}
