package worker

import (
	"context"
	"sync/atomic"
	"time"
)

// pace decides whether claiming ahead of free handler slots pays. A task
// claimed ahead waits for a handler to return; that wait is short, and the
// larger batches worth it, only while handlers return faster than a store
// call takes. With slower handlers the store calls overlap the handlers
// anyway, and a task held here could have started sooner in another
// process, so the driver then claims only for free slots.
type pace struct {
	// handler and call are moving averages in nanoseconds of a handler's
	// run time and of a driver's store call; handler is -1 until the
	// first handler returned, so a process claims ahead only once it has
	// seen its handlers.
	handler atomic.Int64
	call    atomic.Int64
}

func newPace() *pace {
	p := &pace{}
	p.handler.Store(-1)
	return p
}

// paceWeight is the share of a new sample in the moving averages, as a
// shift: 1/8, so a change of workload shows within a few batches.
const paceWeight = 3

func (p *pace) observeHandler(d time.Duration) { average(&p.handler, d) }

func (p *pace) observeCall(d time.Duration) { average(&p.call, d) }

// average folds a sample into a moving average. Concurrent updates may lose
// a sample, which an estimate can afford.
func average(a *atomic.Int64, d time.Duration) {
	v := int64(d)
	if v < 0 {
		v = 0
	}
	old := a.Load()
	if old < 0 {
		a.Store(v)
		return
	}
	a.Store(old + (v-old)>>paceWeight)
}

// forget drops what is known of the handlers' speed: the driver claims
// ahead again only after the next handler returned quickly.
func (p *pace) forget() { p.handler.Store(-1) }

// ahead reports whether the driver may claim beyond its free slots now.
func (p *pace) ahead() bool {
	h := p.handler.Load()
	return h >= 0 && h <= p.call.Load()
}

// HoldMax is how long a task claimed ahead may wait for a slot. Behind
// quick handlers it waits well under a millisecond; one that waits longer
// sits behind handlers that turned slow (a quick task released a batch of
// slow ones, say), while another process may have a slot free.
const HoldMax = 20 * time.Millisecond

// watchHeld sends back to their queues the tasks claimed ahead that waited
// HoldMax for a slot, and stops claiming ahead until a handler returns
// quickly again. It sleeps until a claim hands tasks to the workers, then
// looks every HoldMax while any task is held.
func (p *pool) watchHeld(ctx context.Context) {
	for {
		select {
		case <-p.held:
		case <-ctx.Done():
			return
		}
		for {
			p.pause(ctx, HoldMax)
			if ctx.Err() != nil {
				return
			}
			stale, waiting := p.withdrawHeld(p.cfg.Clock.Now().Add(-HoldMax))
			if len(stale) > 0 {
				// Before the call that sends them back, which would
				// otherwise claim them straight back.
				p.pace.forget()
				p.sendBack(stale)
			}
			if waiting == 0 {
				break
			}
		}
	}
}
