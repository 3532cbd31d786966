package worker

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plaitdag/plait/store"
)

// pool is the state of one Scheduler.Run: the drivers that finish and
// claims, the worker goroutines running handlers, the lease keeper and the
// sweeper.
type pool struct {
	store store.Store
	cfg   *Config

	slots *slots
	fin   *finisher
	pace  *pace
	// near says whether a wide join is about to be ready (join_near.go).
	near joinNear
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
	// results reads the parents' results a claim left out (a wide join);
	// nil for a store without ResultStore, whose claims carry them all.
	results store.ResultStore
	// held wakes watchHeld: a claim handed tasks to the workers.
	held chan struct{}
	// kick wakes the driver: an outcome was queued, a slot came free, the
	// store signalled work, or a delayed task is due.
	kick chan struct{}
	// wantWait asks the waiter goroutine to block on the store's wake-up.
	wantWait chan struct{}

	// execs holds the attempts in this process, keyed by themselves: each
	// claim makes a new epoch, so no two hold the same lease, and a pointer
	// hashes for less than a lease's two strings, on every task.
	mu    sync.Mutex
	execs map[*Attempt]struct{}

	// requests names this process's claims: every claim carries a fresh
	// RequestID, so a claim whose answer was lost can be sent again and
	// answers the tasks it took instead of taking more.
	requests requestIDs

	// work feeds claimed attempts to long-lived worker goroutines; a
	// goroutine per attempt would pay for its creation and stack growth on
	// every task. Its buffer holds the tasks claimed ahead.
	work     chan *Attempt
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
	// progress is the state of Task.Progress reports (progress.go).
	progress progressState
}

func newPool(cfg *Config) *pool {
	capacity := cfg.Concurrency + cfg.Prefetch
	p := &pool{store: cfg.Store, cfg: cfg, execs: map[*Attempt]struct{}{}, pace: newPace(),
		kick: make(chan struct{}, 1), wantWait: make(chan struct{}, 1), work: make(chan *Attempt, capacity),
		stopped: make(chan struct{})}
	p.slots = newSlots(capacity, p.wake)
	p.cancelled = newCancelledRuns(cfg.LeaseDuration)
	p.held = make(chan struct{}, 1)
	p.fin = newFinisher(p)
	p.requests = newRequestIDs()
	p.queues = claimQueues(cfg.Queues, cfg.Capabilities)
	p.routes = cfg.Routes
	if rs, ok := cfg.Store.(store.ResultStore); ok && cfg.InlineResults > 0 {
		p.results = rs
	}
	if cfg.Weights != nil {
		p.fair = newFairness(*cfg.Weights)
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
	p.base = p.cfg.BaseContext(ctx)
	p.health.startedAt.Store(p.cfg.Clock.Now().UnixNano())
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
	if qs, ok := p.store.(store.QueryStore); ok {
		wg.Add(1)
		go func() { defer wg.Done(); p.janitor(loops, qs) }()
	}
	p.health.workers.Add(int64(p.cfg.Concurrency))
	for i := 0; i < p.cfg.Concurrency; i++ {
		go p.worker()
	}

	<-ctx.Done()
	stopBy := p.cfg.Clock.Now().Add(p.cfg.ShutdownTimeout + ShutdownWriteWindow)
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
		p.cfg.Logger.Warn("plait: shutdown deadline passed with outcomes still being written; their leases will expire and the sweep will recover the tasks",
			"deadline", p.cfg.ShutdownTimeout+ShutdownWriteWindow)
	}
	stopLoops()
	// The loops stop at once unless a store call of theirs hangs; it is
	// not waited for past the deadline either.
	if !p.waitUntil(&wg, maxTime(stopBy, p.cfg.Clock.Now().Add(shutdownLoopWait))) {
		p.cfg.Logger.Warn("plait: shutdown deadline passed with a store call still in flight; Run returns without it")
	}
	return nil
}

func (p *pool) track(e *Attempt) {
	p.mu.Lock()
	p.execs[e] = struct{}{}
	p.mu.Unlock()
}

// untrack forgets an attempt that left this process: its outcome was
// written or given up, or its lease is gone.
func (p *pool) untrack(e *Attempt) {
	p.mu.Lock()
	delete(p.execs, e)
	p.mu.Unlock()
	e.end()
}

func (p *pool) snapshot() []*Attempt {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*Attempt, 0, len(p.execs))
	for e := range p.execs {
		out = append(out, e)
	}
	return out
}

// cancelRun cancels every local handler of the run.
func (p *pool) cancelRun(runID string, cause error) {
	p.cancelled.add(runID, p.cfg.Clock.Now())
	for _, e := range p.snapshot() {
		if e.ct.Lease.RunID == runID {
			e.cancel(cause)
		}
	}
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
