package worker

import (
	"fmt"
	"time"

	"github.com/plaitdag/plait/store"
)

// A task's Timeout is enforced in two steps, armed by the [EnforceTimeout]
// middleware. At the timeout the handler's
// context is cancelled with ErrTimeout; a handler that honours it returns,
// and its attempt is finished as usual. A handler still running a grace
// period later ignores its context: the attempt is finished as timed out
// without it, the lease is no longer extended, the slot goes to other work,
// and whatever the handler returns later is dropped. Go cannot stop a
// goroutine, so the handler's keeps running until it returns; it is logged
// and counted by Scheduler.AbandonedHandlers meanwhile.

// guardTimeout arms the attempt's timeout, which arms the grace after it.
func (p *pool) guardTimeout(e *Attempt, started time.Time) {
	e.mu.Lock()
	e.guard = p.cfg.Clock.AfterFunc(e.ct.Spec.Timeout, func() { p.timedOut(e, started) })
	e.mu.Unlock()
}

// timedOut cancels the handler and gives it the grace to return.
func (p *pool) timedOut(e *Attempt, started time.Time) {
	e.cancel(ErrTimeout)
	e.mu.Lock()
	if !e.returned {
		e.guard = p.cfg.Clock.AfterFunc(p.cfg.TimeoutGrace, func() { p.abandon(e, started) })
	}
	e.mu.Unlock()
}

// handlerReturned stops the attempt's timeout guard and reports whether
// the attempt was abandoned before the handler returned.
func (p *pool) handlerReturned(e *Attempt) (abandoned bool) {
	e.mu.Lock()
	e.returned = true
	if e.guard != nil {
		e.guard.Stop()
	}
	abandoned = e.abandoned
	e.mu.Unlock()
	if abandoned {
		n := p.cfg.Shared.Abandoned.Add(-1)
		ct := e.ct
		p.cfg.Logger.Info("plait: abandoned handler returned; its result is ignored",
			"run", ct.Lease.RunID, "task", ct.Spec.Name, "attempt", ct.Attempt, "epoch", ct.Lease.Epoch, "abandoned", n)
	}
	return abandoned
}

// abandon finishes the attempt as timed out without waiting for its
// handler, which ignored its context for the whole grace. The worker stuck
// in the handler is replaced, so the pool keeps its concurrency.
func (p *pool) abandon(e *Attempt, started time.Time) {
	e.mu.Lock()
	if e.returned || !e.settle() {
		// The handler returned after all, or shutdown or a lost lease
		// decided the attempt's outcome first.
		e.mu.Unlock()
		return
	}
	e.abandoned = true
	e.mu.Unlock()
	ct := e.ct
	n := p.cfg.Shared.Abandoned.Add(1)
	p.cfg.Logger.Warn("plait: handler ignored its context past the timeout and grace; the attempt is finished as timed out and the handler left running",
		"run", ct.Lease.RunID, "task", ct.Spec.Name, "handler", ct.Spec.Handler, "attempt", ct.Attempt, "epoch", ct.Lease.Epoch,
		"timeout", ct.Spec.Timeout, "grace", p.cfg.TimeoutGrace, "abandoned", n)
	p.handlers.Done()
	go p.worker()
	e.ran = p.cfg.Clock.Now().Sub(started)
	p.slots.add(1)
	p.fin.submit(e, p.outcome(e, started, nil, p.timeoutErr(ct)))
}

// timeoutErr is the error of an attempt that ran past its timeout.
func (p *pool) timeoutErr(ct *store.ClaimedTask) error {
	return fmt.Errorf("%w after %s", ErrTimeout, ct.Spec.Timeout)
}
