package worker

import (
	"context"
	"time"

	"github.com/plaitdag/plait/store"
)

// driverCount is how many drive loops run at once. Two let the store work
// on one batch while this process prepares the next, instead of the two
// taking turns; more add little on two cores.
const driverCount = 2

// drive is the loop that talks to the store on the hot path. Each turn
// it hands back whatever outcomes have queued up and, in the same call,
// claims as many tasks as there are free slots (and, while handlers are
// quick, as many more as the prefetch allows), so a released child starts
// one round trip after its parent's handler returned. With nothing to do it
// blocks on the store's wake-up, a queued outcome, or the next due time.
// After ctx is done it only writes outcomes, until the finisher is closed
// and empty.
func (p *pool) drive(ctx, bg context.Context) {
	var batch []finishReq
	for {
		batch = p.fin.take(batch, finishBatchMax)
		claiming := ctx.Err() == nil
		free := 0
		if claiming && !p.claimsPaused.Load() && len(p.activeQueues()) > 0 {
			reserve := p.cfg.Prefetch
			if p.pace.ahead() {
				reserve = 0
			}
			free = p.nearJoinBound(p.slots.take(reserve))
		}
		if len(batch) == 0 && free == 0 {
			if !claiming && p.fin.drained() {
				return
			}
			if claiming {
				select {
				case <-p.kick:
				case <-ctx.Done():
				}
				continue
			}
			// Shutting down: wait for an outcome or for the finisher to
			// close, which every driver sees.
			select {
			case <-p.kick:
			case <-p.fin.done:
			}
			continue
		}
		sent, seq := p.cfg.Clock.Now(), p.cancelled.claimSent()
		var claimed *store.TaskClaimResult
		if len(batch) > 0 {
			claimed = p.fin.write(bg, batch, p.claimParams(free))
		} else {
			res, err := p.claim(ctx, p.claimParams(free))
			if err != nil {
				p.slots.add(free)
				if ctx.Err() == nil {
					p.pause(ctx, p.cfg.IdleWait)
				}
				continue
			}
			claimed = res
		}
		p.pace.observeCall(p.cfg.Clock.Now().Sub(sent))
		got := 0
		if claimed != nil {
			got = len(claimed.Tasks)
			p.startAll(bg, claimed, sent, seq)
		}
		// The driver gives back its own unused slots silently: a kick here
		// would end the idle wait below at once and spin the loop.
		p.slots.add(free - got)
		// A claim that came back short emptied the ready queues: wait for
		// news instead of asking again.
		if got < free && claimed != nil && !p.fin.pending() {
			p.idle(ctx, claimed)
		}
	}
}

func (p *pool) claimParams(free int) *store.TaskClaimParams {
	params := &store.TaskClaimParams{
		WorkerID:      p.cfg.NodeID, // the records name the node and its worker id (SplitWorker)
		Queues:        p.activeQueues(),
		Limit:         free,
		LeaseDuration: p.cfg.LeaseDuration,
		RequestID:     p.requests.next(),
	}
	if p.results != nil {
		params.InlineResultsMax = p.cfg.InlineResults
	}
	if p.fair != nil {
		params.Shares = p.fair.shares(free)
		params.Queues = p.fair.rotate(queueGroups(params.Queues))
	}
	if p.routes {
		params.Handlers = []string{}
		if names := p.cfg.HandlerNames(); names != nil {
			params.Handlers = names
		}
	}
	return params
}

// idle blocks until an outcome is queued, a slot frees, the store signals
// work, the next delayed task is due on the scheduler's clock, or ctx is
// done. The store wait itself runs on the waiter goroutine, so a kick never
// has to abandon a blocked store call.
func (p *pool) idle(ctx context.Context, res *store.TaskClaimResult) {
	if !res.NextDueAt.IsZero() {
		t := p.cfg.Clock.AfterFunc(res.NextDueAt.Sub(res.Now), p.wake)
		defer t.Stop()
	}
	select {
	case p.wantWait <- struct{}{}:
	default:
	}
	select {
	case <-p.kick:
	case <-ctx.Done():
	}
}

// waitForStore blocks on the store's wake-up whenever the driver went idle,
// and kicks the driver when it returns. At most one store wait is in flight
// per process.
func (p *pool) waitForStore(ctx context.Context) {
	for {
		select {
		case <-p.wantWait:
		case <-ctx.Done():
			return
		}
		wait := &store.ReadyWaitParams{Queues: p.activeQueues(), Timeout: p.cfg.IdleWait}
		if p.routes {
			wait.Handlers = p.cfg.HandlerNames()
		}
		err := p.store.ReadyWait(ctx, wait)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			p.cfg.Logger.Warn("plait: wait for work failed", "err", err)
			p.pause(ctx, p.cfg.IdleWait)
		}
		p.wake()
	}
}

// pause waits d on the scheduler's clock, or until ctx is done.
func (p *pool) pause(ctx context.Context, d time.Duration) {
	t := p.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C():
	}
}
