package worker

import "github.com/plaitdag/plait/store"

// A process that has no handler for a task it claimed hands the task back
// at once, unstarted: in a rolling deploy the process that lacks a new
// handler is an old one, and another process (or this one, upgraded) can
// run the task. The return wakes the other processes; this one stops
// claiming for a while, so it does not spin on a task at the head of a
// queue that it cannot run. A task no live process can run stays ready.
// This is the fallback for stores without ClaimRouter: a store that
// routes never hands a process a task whose handler it lacks (claims list
// the handlers, see routing.go), so nothing comes back this way.

// handBack returns a task whose handler is not registered here, with no
// attempt record and no crash charged.
func (p *pool) handBack(e *Attempt) {
	if !e.settle() {
		p.slots.release(1)
		return // released by the shutdown path already
	}
	ct := e.ct
	if _, seen := p.cfg.Shared.unknown.LoadOrStore(ct.Spec.Handler, struct{}{}); !seen {
		p.cfg.Logger.Warn("plait: no handler registered here for a claimed task; it goes back to its queue for a process that has one",
			"handler", ct.Spec.Handler, "run", ct.Lease.RunID, "task", ct.Spec.Name, "pause", p.cfg.IdleWait)
	}
	// Before the outcome is queued: the driver writing it must not claim
	// the task straight back in the same call.
	p.pauseClaims()
	p.slots.add(1)
	p.fin.submit(e, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeReturned})
}

// pauseClaims stops the drivers claiming for the idle wait; outcomes are
// still written meanwhile.
func (p *pool) pauseClaims() {
	if p.claimsPaused.Swap(true) {
		return
	}
	p.cfg.Clock.AfterFunc(p.cfg.IdleWait, func() {
		p.claimsPaused.Store(false)
		p.wake()
	})
}
