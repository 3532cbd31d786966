package plait

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// pool is the state of one Scheduler.Run: the drivers that finish and
// claims, the worker goroutines running handlers, the lease keeper and the
// sweeper.
type pool struct {
	s     *Scheduler
	store Store
	cfg   *config

	slots *slots
	fin   *finisher
	pace  *pace
	// stopping is set once Run's context is done: tasks claimed ahead and
	// not started yet go back to their queues instead of starting. startMu
	// orders it against startAll.
	stopping atomic.Bool
	startMu  sync.Mutex
	// stopBy is the shutdown deadline on the scheduler's clock, set before
	// stopping: every write from then on must be done by it, and what is
	// not is left to the lease and the sweep. stopped is closed with it, to
	// wake writes waiting to retry.
	stopBy  atomic.Pointer[time.Time]
	stopped chan struct{}
	// claimsPaused stops the drivers claiming after a task came back for
	// want of its handler; see handBack.
	claimsPaused atomic.Bool
	// queues are the queues claims and waits name: the configured ones and
	// the routed queues of this process's capabilities (claimQueues).
	queues []string
	// routes is set when the store implements ClaimRouter: claims then
	// list the handlers registered here.
	routes bool
	// fair hands out the shares and queue turns of the weighted mode; nil
	// in strict mode.
	fair *fairness
	// cancelled holds the runs that ended early here lately, so a claim
	// that crossed their end does not start their tasks.
	cancelled *cancelledRuns
	// held wakes watchHeld: a claim handed tasks to the workers.
	held chan struct{}
	// kick wakes the driver: an outcome was queued, a slot came free, the
	// store signalled work, or a delayed task is due.
	kick chan struct{}
	// wantWait asks the waiter goroutine to block on the store's wake-up.
	wantWait chan struct{}

	mu    sync.Mutex
	execs map[Lease]*execution

	// requests names this process's claims: every claim carries a fresh
	// RequestID, so a claim whose answer was lost can be sent again and
	// answers the tasks it took instead of taking more.
	requests requestIDs

	// work feeds claimed attempts to long-lived worker goroutines; a
	// goroutine per attempt would pay for its creation and stack growth on
	// every task. Its buffer holds the tasks claimed ahead.
	work     chan *execution
	handlers sync.WaitGroup // one per attempt not yet returned from its handler

	// base is the parent of every handler context: values, no
	// cancellation (see WithBaseContext).
	base context.Context
	// health is what Run records for Scheduler.Health.
	health healthState
	// node is the node service of this Run, nil when the store keeps no
	// nodes; active holds queues less those paused for the fleet, as the
	// node's last heartbeat learned them, nil for all of them.
	node   *node
	active atomic.Pointer[[]string]
}

func newPool(s *Scheduler) *pool {
	capacity := s.cfg.concurrency + s.cfg.prefetch
	p := &pool{s: s, store: s.store, cfg: &s.cfg, execs: map[Lease]*execution{}, pace: newPace(),
		kick: make(chan struct{}, 1), wantWait: make(chan struct{}, 1), work: make(chan *execution, capacity),
		stopped: make(chan struct{})}
	p.slots = newSlots(capacity, p.wake)
	p.cancelled = newCancelledRuns(s.cfg.leaseDuration)
	p.held = make(chan struct{}, 1)
	p.fin = newFinisher(p)
	p.requests = newRequestIDs()
	p.queues = claimQueues(s.cfg.queues, s.cfg.capabilities)
	p.routes = s.routes()
	if s.cfg.weights != nil {
		p.fair = newFairness(*s.cfg.weights)
	}
	return p
}

// wake kicks the driver without blocking.
func (p *pool) wake() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *pool) run(ctx context.Context) error {
	// Writes made while shutting down (releases, last outcomes) must not be
	// cut off by the cancelled Run context; they run under the shutdown
	// deadline instead (see writeCtx).
	bg := context.WithoutCancel(ctx)
	p.base = p.cfg.baseContextFor(ctx)
	p.health.startedAt.Store(p.cfg.clock.Now().UnixNano())
	loops, stopLoops := context.WithCancel(bg)
	var wg sync.WaitGroup
	var drivers sync.WaitGroup
	for i := 0; i < driverCount; i++ {
		drivers.Add(1)
		go func() { defer drivers.Done(); p.drive(ctx, bg) }()
	}
	wg.Add(4)
	go func() { defer wg.Done(); p.waitForStore(ctx) }()
	go func() { defer wg.Done(); p.watchHeld(ctx) }()
	go func() { defer wg.Done(); p.keepLeases(loops) }()
	go func() { defer wg.Done(); p.sweep(loops) }()
	if qs, err := capability[QueryStore](p.store, "QueryStore"); err == nil {
		wg.Add(1)
		go func() { defer wg.Done(); p.janitor(loops, qs) }()
	}
	p.health.workers.Add(int64(p.cfg.concurrency))
	for i := 0; i < p.cfg.concurrency; i++ {
		go p.worker()
	}

	<-ctx.Done()
	stopBy := p.cfg.clock.Now().Add(p.cfg.shutdownTimeout + shutdownWriteWindow)
	p.stopBy.Store(&stopBy)
	close(p.stopped)
	// Under startMu, so a claim either started before (and is withdrawn or
	// drained below) or sees stopping and goes back at once.
	p.startMu.Lock()
	p.stopping.Store(true)
	p.startMu.Unlock()
	held, _ := p.withdrawHeld(time.Time{})
	p.sendBack(held)
	p.drain()
	// Workers still inside a handler that ignores its context exit once it
	// returns; Run does not wait for them.
	close(p.work)
	p.fin.close()
	if !p.waitUntil(&drivers, stopBy) {
		p.cfg.logger.Warn("plait: shutdown deadline passed with outcomes still being written; their leases will expire and the sweep will recover the tasks",
			"deadline", p.cfg.shutdownTimeout+shutdownWriteWindow)
	}
	stopLoops()
	// The loops stop at once unless a store call of theirs hangs; it is
	// not waited for past the deadline either.
	if !p.waitUntil(&wg, maxTime(stopBy, p.cfg.clock.Now().Add(shutdownLoopWait))) {
		p.cfg.logger.Warn("plait: shutdown deadline passed with a store call still in flight; Run returns without it")
	}
	return nil
}

// shutdownWriteWindow is how long, past the shutdown timeout, the last
// writes of a stopping Run may take: the releases of handlers cut short
// and the outcomes still queued. On a healthy store they take one round
// trip; on a hanging one Run gives up on them then, and their tasks come
// back when their leases expire.
const shutdownWriteWindow = 500 * time.Millisecond

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
	t := p.cfg.clock.NewTimer(deadline.Sub(p.cfg.clock.Now()))
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
	return context.WithTimeout(base, stopBy.Sub(p.cfg.clock.Now()))
}

// pastDeadline reports whether Run is stopping and its shutdown deadline
// has passed.
func (p *pool) pastDeadline() bool {
	stopBy := p.stopBy.Load()
	return stopBy != nil && !p.cfg.clock.Now().Before(*stopBy)
}

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
	for {
		batch := p.fin.take(finishBatchMax)
		claiming := ctx.Err() == nil
		free := 0
		if claiming && !p.claimsPaused.Load() && len(p.activeQueues()) > 0 {
			reserve := p.cfg.prefetch
			if p.pace.ahead() {
				reserve = 0
			}
			free = p.slots.take(reserve)
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
		sent := p.cfg.clock.Now()
		var claimed *TaskClaimResult
		if len(batch) > 0 {
			claimed = p.fin.write(bg, batch, p.claimParams(free))
		} else {
			res, err := p.claim(ctx, p.claimParams(free))
			if err != nil {
				p.slots.add(free)
				if ctx.Err() == nil {
					p.pause(ctx, p.cfg.idleWait)
				}
				continue
			}
			claimed = res
		}
		p.pace.observeCall(p.cfg.clock.Now().Sub(sent))
		got := 0
		if claimed != nil {
			got = len(claimed.Tasks)
			p.startAll(bg, claimed, sent)
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

func (p *pool) claimParams(free int) *TaskClaimParams {
	params := &TaskClaimParams{
		WorkerID:      p.cfg.workerID,
		Queues:        p.activeQueues(),
		Limit:         free,
		LeaseDuration: p.cfg.leaseDuration,
		RequestID:     p.requests.next(),
	}
	if p.fair != nil {
		params.Shares = p.fair.shares(free)
		params.Queues = p.fair.rotate(queueGroups(params.Queues))
	}
	if p.routes {
		params.Handlers = []string{}
		if names := p.s.handlerNames.Load(); names != nil {
			params.Handlers = *names
		}
	}
	return params
}

// idle blocks until an outcome is queued, a slot frees, the store signals
// work, the next delayed task is due on the scheduler's clock, or ctx is
// done. The store wait itself runs on the waiter goroutine, so a kick never
// has to abandon a blocked store call.
func (p *pool) idle(ctx context.Context, res *TaskClaimResult) {
	if !res.NextDueAt.IsZero() {
		t := p.cfg.clock.AfterFunc(res.NextDueAt.Sub(res.Now), p.wake)
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
		wait := &ReadyWaitParams{Queues: p.activeQueues(), Timeout: p.cfg.idleWait}
		if p.routes {
			if names := p.s.handlerNames.Load(); names != nil {
				wait.Handlers = *names
			}
		}
		err := p.store.ReadyWait(ctx, wait)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			p.cfg.logger.Warn("plait: wait for work failed", "err", err)
			p.pause(ctx, p.cfg.idleWait)
		}
		p.wake()
	}
}

// pause waits d on the scheduler's clock, or until ctx is done.
func (p *pool) pause(ctx context.Context, d time.Duration) {
	t := p.cfg.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C():
	}
}

func (p *pool) track(e *execution) {
	p.mu.Lock()
	p.execs[e.ct.Lease] = e
	p.mu.Unlock()
}

// untrack forgets an attempt that left this process: its outcome was
// written or given up, or its lease is gone.
func (p *pool) untrack(e *execution) {
	p.mu.Lock()
	if p.execs[e.ct.Lease] == e {
		delete(p.execs, e.ct.Lease)
	}
	p.mu.Unlock()
	e.end()
}

func (p *pool) snapshot() []*execution {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*execution, 0, len(p.execs))
	for _, e := range p.execs {
		out = append(out, e)
	}
	return out
}

// cancelRun cancels every local handler of the run.
func (p *pool) cancelRun(runID string, cause error) {
	p.cancelled.add(runID, p.cfg.clock.Now())
	for _, e := range p.snapshot() {
		if e.ct.Lease.RunID == runID {
			e.cancel(cause)
		}
	}
}

// withdrawHeld takes back from the workers the tasks claimed ahead that
// none has begun, so they need not wait for a busy slot to go free: those
// held since cutoff or earlier, or all of them when cutoff is zero. The
// caller sends them back to their queues with sendBack. waiting counts the
// held tasks left.
func (p *pool) withdrawHeld(cutoff time.Time) (out []*execution, waiting int) {
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
func (p *pool) sendBack(es []*execution) {
	for _, e := range es {
		p.fin.submit(e, TaskOutcome{Lease: e.ct.Lease, Outcome: OutcomeReturned})
	}
}

// drain lets running handlers finish for up to the shutdown timeout, then
// cancels the rest and releases their tasks without waiting for them.
func (p *pool) drain() {
	done := make(chan struct{})
	go func() { p.handlers.Wait(); close(done) }()
	t := p.cfg.clock.NewTimer(p.cfg.shutdownTimeout)
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
func (p *pool) shutdownOutcome(e *execution) TaskOutcome {
	return TaskOutcome{Lease: e.ct.Lease, Outcome: OutcomeReleased, Error: p.shutdownErr().Error()}
}

// shutdownErr is the error of an attempt released by shutdown.
func (p *pool) shutdownErr() error {
	return fmt.Errorf("%w: the handler was still running when the shutdown timeout (%s) passed", ErrShutdown, p.cfg.shutdownTimeout)
}

// slots counts free handler slots.
type slots struct {
	mu    sync.Mutex
	free  int
	freed func() // called after slots come free
}

func newSlots(n int, freed func()) *slots { return &slots{free: n, freed: freed} }

// take takes every free slot but reserve and returns how many.
func (s *slots) take(reserve int) int {
	s.mu.Lock()
	n := s.free - reserve
	if n < 0 {
		n = 0
	}
	s.free -= n
	s.mu.Unlock()
	return n
}

// add frees n slots without waking the driver.
func (s *slots) add(n int) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	s.free += n
	s.mu.Unlock()
}

func (s *slots) release(n int) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	s.free += n
	s.mu.Unlock()
	s.freed()
}
