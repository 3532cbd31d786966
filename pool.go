package plait

import (
	"context"
	"sync"
	"time"
)

// pool is the state of one Scheduler.Run: the claim loop, the executions it
// started, the finisher that writes their outcomes, the lease keeper and the
// sweeper.
type pool struct {
	s     *Scheduler
	store Store
	cfg   *config

	slots *slots
	fin   *finisher

	mu    sync.Mutex
	execs map[Lease]*execution

	// work feeds claimed attempts to long-lived worker goroutines; a
	// goroutine per attempt would pay for its creation and stack growth on
	// every task.
	work     chan *execution
	handlers sync.WaitGroup // one per attempt not yet returned from its handler
}

func newPool(s *Scheduler) *pool {
	p := &pool{s: s, store: s.store, cfg: &s.cfg, slots: newSlots(s.cfg.concurrency), execs: map[Lease]*execution{},
		work: make(chan *execution, s.cfg.concurrency)}
	p.fin = newFinisher(p)
	return p
}

func (p *pool) run(ctx context.Context) error {
	// Writes made while shutting down (releases, last outcomes) must not be
	// cut off by the cancelled Run context.
	bg := context.WithoutCancel(ctx)
	loops, stopLoops := context.WithCancel(bg)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); p.fin.run(bg) }()
	go func() { defer wg.Done(); p.keepLeases(loops) }()
	go func() { defer wg.Done(); p.sweep(loops) }()

	for i := 0; i < p.cfg.concurrency; i++ {
		go p.worker()
	}
	p.claimLoop(ctx)
	p.drain()
	// Workers still inside a handler that ignores its context exit once it
	// returns; Run does not wait for them.
	close(p.work)
	stopLoops()
	p.fin.close()
	wg.Wait()
	return nil
}

// claimLoop claims as many tasks as there are free slots, starts them, and
// blocks on the store's wake-up when there is nothing to claim.
func (p *pool) claimLoop(ctx context.Context) {
	for {
		n := p.slots.acquire(ctx)
		if n == 0 {
			return // ctx done
		}
		sent := p.cfg.clock.Now()
		res, err := p.store.TaskClaim(ctx, &TaskClaimParams{
			WorkerID:      p.cfg.workerID,
			Queues:        p.cfg.queues,
			Limit:         n,
			LeaseDuration: p.cfg.leaseDuration,
		})
		if err != nil {
			p.slots.release(n)
			if ctx.Err() != nil {
				return
			}
			p.cfg.logger.Warn("plait: claim failed", "err", err)
			p.pause(ctx, p.cfg.idleWait)
			continue
		}
		p.slots.release(n - len(res.Tasks))
		for _, ct := range res.Tasks {
			p.start(ct, sent, res.Now)
		}
		if len(res.Tasks) > 0 {
			continue
		}
		p.idle(ctx, res)
	}
}

// idle blocks until the store signals new work, the next delayed task is
// due on the scheduler's clock, or ctx is done.
func (p *pool) idle(ctx context.Context, res *TaskClaimResult) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	timeout := p.cfg.idleWait
	if !res.NextDueAt.IsZero() {
		due := res.NextDueAt.Sub(res.Now)
		t := p.cfg.clock.AfterFunc(due, cancel)
		defer t.Stop()
		// A backend blocked in a server-side wait may only notice the
		// cancel when its own timeout ends, so the timeout ends at the due
		// time too.
		if due < timeout {
			timeout = max(due, time.Millisecond)
		}
	}
	err := p.store.ReadyWait(wctx, &ReadyWaitParams{Queues: p.cfg.queues, Timeout: timeout})
	if err != nil && ctx.Err() == nil {
		p.cfg.logger.Warn("plait: wait for work failed", "err", err)
		p.pause(ctx, p.cfg.idleWait)
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

func (p *pool) untrack(e *execution) {
	p.mu.Lock()
	if p.execs[e.ct.Lease] == e {
		delete(p.execs, e.ct.Lease)
	}
	p.mu.Unlock()
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
	for _, e := range p.snapshot() {
		if e.ct.Lease.RunID == runID {
			e.cancel(cause)
		}
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
			p.fin.submit(e, TaskOutcome{Lease: e.ct.Lease, Outcome: OutcomeReleased})
		}
	}
}

// slots counts free handler slots.
type slots struct {
	mu   sync.Mutex
	free int
	wake chan struct{}
}

func newSlots(n int) *slots { return &slots{free: n, wake: make(chan struct{}, 1)} }

// acquire waits for at least one free slot and takes all free ones; it
// returns 0 when ctx is done.
func (s *slots) acquire(ctx context.Context) int {
	for {
		if ctx.Err() != nil {
			return 0
		}
		s.mu.Lock()
		n := s.free
		s.free = 0
		s.mu.Unlock()
		if n > 0 {
			return n
		}
		select {
		case <-ctx.Done():
			return 0
		case <-s.wake:
		}
	}
}

func (s *slots) release(n int) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	s.free += n
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
