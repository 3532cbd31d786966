package worker

import (
	"sync/atomic"
	"time"
)

// A wide join (a task that waits on many parents) becomes ready only once
// the outcome of its last parent is written, and that outcome waits
// behind every outcome written before it. While the driver claims ahead
// (prefetch), the last parents come in one large claim, run at once, and
// their outcomes queue up together: the join then waits for them all to
// be written, in batches that take longer the larger they are. So while a
// join is near, the driver claims fewer at a time the nearer it is: the
// last parents come a few at a time, each few written as they finish, and
// the call that writes the last one claims the join.
//
// The store tells how near (store.TaskFinishClaimResult.ParentsLeft, the
// fewest parents a join fed by the outcomes still waits on). An answer of
// more parents than this process holds at once (Concurrency + Prefetch)
// sets the bound for nearJoinHold: a claim takes at most
// ParentsLeft/nearJoinShare tasks, and never fewer than Concurrency (what
// the handlers run at once) when slots are free. Far from a join the bound
// is above what the driver claims anyway. A join on fewer parents sets
// nothing: one claim may take all it waits on whatever the bound, and a
// stream of such joins (many runs with narrow fan-ins) would otherwise
// turn claiming ahead off for good; the answers about a wide join's last
// parents refresh nothing either, the hold covers them.
const (
	// nearJoinShare: an eighth of what the join still waits on, which
	// counts the tasks held and the outcomes on their way besides those
	// still queued: the bound comes under a claim's usual size only for
	// the last few hundred parents, and each claim there is a fraction of
	// the one before. Each claim it cuts costs a store call, and the tail
	// of a fan-out runs no faster than its calls go: measured on a
	// 5,000-wide fan-out at concurrency 10, a quarter changed nothing (the
	// claims were already below it); an eighth made the join's pickup
	// about 0.65x for 1% more store calls; a sixteenth about 0.5x for 5%
	// more, which cost about 3% of the fan-out's time on a loaded machine,
	// more than the pickup gained; the free handler slots alone over the
	// last 200 parents 0.3x, for more still.
	nearJoinShare = 8
	// nearJoinHold outlasts the run of a wide join's last parents (those
	// a process holds at once take a few milliseconds), whose answers no
	// longer refresh the bound; after the join it costs claiming ahead
	// that long.
	nearJoinHold = 20 * time.Millisecond
)

// joinNear is what the last answer about a wide join said.
type joinNear struct {
	// until is the deadline, on the scheduler's clock in Unix
	// nanoseconds, of the bound; 0 before the first.
	until atomic.Int64
	// left is the ParentsLeft of that answer.
	left atomic.Int64
}

// observeJoin notes the ParentsLeft of a store answer.
func (p *pool) observeJoin(left int) {
	if left <= p.cfg.Concurrency+p.cfg.Prefetch {
		return
	}
	p.near.left.Store(int64(left))
	p.near.until.Store(p.cfg.Clock.Now().Add(nearJoinHold).UnixNano())
}

// nearJoinBound trims free, the slots a claim is about to ask for, to the
// bound while a wide join is near, and gives the rest back.
func (p *pool) nearJoinBound(free int) int {
	u := p.near.until.Load()
	if u == 0 || p.cfg.Clock.Now().UnixNano() >= u {
		return free
	}
	bound := max(int(p.near.left.Load())/nearJoinShare, p.cfg.Concurrency)
	if free <= bound {
		return free
	}
	p.slots.add(free - bound)
	return bound
}
