package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plaitdag/plait/store"
)

// Attempt is one claimed attempt running in this process.
type Attempt struct {
	ct   *store.ClaimedTask
	pool *pool
	// claimedAt is the store's clock at the claim.
	claimedAt time.Time
	// heldSince is the local time the task was handed to the workers.
	heldSince time.Time
	ctx       context.Context
	cancel    context.CancelCauseFunc

	// settled is set by whoever decides the attempt's outcome first: the
	// handler's return, the shutdown release, a lost lease, or the timeout
	// guard giving up on a handler that ignores its context.
	settled atomic.Bool
	// begun is set by whoever decides first whether a task claimed ahead
	// starts: the worker about to run it, or Run's stop withdrawing it.
	begun atomic.Bool

	mu sync.Mutex
	// deadline is the local monotonic time until which the lease is known
	// to hold: the send time of the last successful claim or extension plus
	// the lease duration.
	deadline time.Time
	// leaseTimer cancels the handler at deadline minus the lease margin,
	// whatever the lease keeper's store call is doing; see watchLease.
	leaseTimer store.Timer
	// over is set once the attempt left this process (its outcome written
	// or given up): its timers must not fire any more.
	over bool
	// guard is the timeout timer, then the grace timer after it; returned
	// is set when the handler returned, and abandoned when the grace
	// passed first and the attempt was finished without it.
	guard     store.Timer
	returned  bool
	abandoned bool

	// ext holds the task log buffer and the progress report, made at
	// the handler's first Logger or Progress call; extEnded is set once
	// the handler returned, after which none is made (attempt_extras.go).
	ext      *attemptExtras
	extEnded bool

	// ran is how long the handler ran, set before its outcome is queued,
	// for the metrics hooks.
	ran time.Duration
}

// settle claims the right to report the attempt's outcome.
func (e *Attempt) settle() bool { return e.settled.CompareAndSwap(false, true) }

// setDeadline moves the known lease deadline out. The lease timer is not
// touched here: when it fires it finds the later deadline and re-arms
// itself, which costs an extension nothing on the hot path.
func (e *Attempt) setDeadline(t time.Time) {
	e.mu.Lock()
	if t.After(e.deadline) {
		e.deadline = t
	}
	e.mu.Unlock()
}

func (e *Attempt) leaseDeadline() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.deadline
}

// end stops the attempt's timers once it left this process.
func (e *Attempt) end() {
	e.mu.Lock()
	e.over = true
	if e.leaseTimer != nil {
		e.leaseTimer.Stop()
		e.leaseTimer = nil
	}
	e.mu.Unlock()
}

// startAll hands claimed tasks to the worker goroutines. sent is the local
// time the claim was sent, the conservative start of the lease. Tasks whose
// claim returned after Run began stopping go straight back to their queues,
// written by the calling driver itself: the finisher may be closing.
func (p *pool) startAll(ctx context.Context, res *store.TaskClaimResult, sent time.Time, seq uint64) {
	var late []finishReq
	now := p.cfg.Clock.Now()
	// A claim that took half the lease to come back leaves less than the
	// keeper's round before the margin: its attempts get their lease
	// timers now (see watchLease).
	slow := now.Sub(sent) >= p.cfg.LeaseDuration/2
	// One allocation for the claim's attempts rather than one each; an
	// attempt still running keeps only its claim's block alive.
	attempts := make([]Attempt, len(res.Tasks))
	p.startMu.Lock()
	for i, ct := range res.Tasks {
		ectx, cancel := context.WithCancelCause(p.base)
		e := &attempts[i]
		e.ct, e.pool, e.claimedAt, e.heldSince = ct, p, res.Now, now
		e.ctx, e.cancel, e.deadline = ectx, cancel, sent.Add(p.cfg.LeaseDuration)
		p.track(e)
		if slow {
			p.watchLease(e, now)
		}
		if p.cancelled.has(ct.Lease.RunID, now, seq) {
			cancel(ErrRunCancelled) // its worker skips it
		}
		if p.stopping.Load() {
			e.begun.Store(true)
			e.settle()
			cancel(ErrShutdown)
			late = append(late, finishReq{e: e, o: store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeReturned}})
			continue
		}
		p.handlers.Add(1)
		p.work <- e // never blocks: slots bound the attempts in flight
	}
	p.startMu.Unlock()
	if len(res.Tasks) > len(late) {
		select {
		case p.held <- struct{}{}:
		default:
		}
	}
	if len(late) > 0 {
		p.fin.write(ctx, late, nil)
		p.slots.add(len(late))
	}
}

// worker runs attempts until the work channel is closed. A worker whose
// handler was abandoned past its timeout exits once the handler returns:
// a new worker took its place when the attempt was given up.
func (p *pool) worker() {
	for e := range p.work {
		if p.execute(e) {
			// Abandoned: the worker that replaced this one took its
			// place in the count as well.
			return
		}
		p.handlers.Done()
	}
	p.health.workers.Add(-1)
}

// execute runs one attempt and reports whether its handler was abandoned
// (see abandon), in which case the caller's place is taken already.
func (p *pool) execute(e *Attempt) (abandoned bool) {
	ct := e.ct
	defer e.cancel(context.Canceled)
	if !e.begun.CompareAndSwap(false, true) {
		p.slots.release(1)
		return false // withdrawn unstarted by Run's stop, which wrote the release
	}
	if p.stopping.Load() || e.ctx.Err() != nil {
		p.skip(e)
		return false
	}
	fn, ok := p.cfg.Handler(ct.Spec.Handler)
	if !ok {
		p.handBack(e)
		return false
	}
	p.emit(Event{Type: EventTaskStarted, RunID: ct.Lease.RunID, Task: ct.Spec.Name, Attempt: ct.Attempt, Epoch: ct.Lease.Epoch})
	if m := p.cfg.Metrics; m != nil {
		m.TaskStarted(labelsOf(ct))
	}
	started := p.cfg.Clock.Now()
	p.health.busy.Add(1)
	result, err := fn(e.ctx, e)
	p.health.busy.Add(-1)
	// The attempt's lines reach the store before its outcome: after it, a
	// retry's next claim would make them stale.
	e.endExtras()
	if ct.Spec.Timeout > 0 && p.handlerReturned(e) {
		return true
	}
	ran := p.cfg.Clock.Now().Sub(started)
	p.pace.observeHandler(ran)
	if !e.settle() {
		p.slots.release(1)
		return false // released by the shutdown path already
	}
	e.ran = ran // only once settled: the shutdown path may have reported the attempt
	cause := context.Cause(e.ctx)
	if e.ctx.Err() != nil {
		switch {
		case errors.Is(cause, ErrLeaseLost), errors.Is(cause, ErrRunCancelled):
			// The store already moved on; any write would be refused.
			p.untrack(e)
			p.slots.release(1)
			p.emit(Event{Type: EventTaskLeaseLost, RunID: ct.Lease.RunID, Task: ct.Spec.Name, Attempt: ct.Attempt, Epoch: ct.Lease.Epoch, Err: cause})
			if m := p.cfg.Metrics; m != nil {
				m.LeaseLost(labelsOf(ct))
			}
			return false
		case errors.Is(cause, ErrShutdown):
			p.slots.add(1)
			p.fin.submit(e, p.shutdownOutcome(e))
			return false
		case errors.Is(cause, ErrTimeout):
			err = p.timeoutErr(ct)
		}
	}
	// The slot is free once the handler returned. It is handed over
	// together with the outcome, so the driver claims the children this
	// outcome releases in the same store call.
	p.slots.add(1)
	p.fin.submit(e, p.outcome(e, started, result, err))
	return false
}

// skip disposes of a task claimed ahead that will not start here: its run
// was cancelled or its lease lost while it waited (nothing to write), or Run
// is stopping (it goes back to its queue unstarted).
func (p *pool) skip(e *Attempt) {
	if !e.settle() {
		p.slots.release(1)
		return // released by the shutdown path already
	}
	cause := context.Cause(e.ctx)
	if errors.Is(cause, ErrLeaseLost) || errors.Is(cause, ErrRunCancelled) {
		p.untrack(e)
		p.slots.release(1)
		ct := e.ct
		p.emit(Event{Type: EventTaskLeaseLost, RunID: ct.Lease.RunID, Task: ct.Lease.Task, Attempt: ct.Attempt, Epoch: ct.Lease.Epoch, Err: cause})
		if m := p.cfg.Metrics; m != nil {
			m.LeaseLost(labelsOf(ct))
		}
		return
	}
	p.slots.add(1)
	p.fin.submit(e, store.TaskOutcome{Lease: e.ct.Lease, Outcome: store.OutcomeReturned})
}

// outcome turns a handler's return into what the store records.
func (p *pool) outcome(e *Attempt, started time.Time, result any, err error) store.TaskOutcome {
	ct := e.ct
	o := store.TaskOutcome{Lease: ct.Lease}
	if err == nil {
		b, encErr := p.cfg.Encode(result)
		if encErr == nil {
			o.Outcome, o.Result = store.OutcomeSucceeded, b
			return o
		}
		err = Permanent(fmt.Errorf("plait: encode result: %w", encErr))
	}
	o.Error = err.Error()
	o.TimedOut = errors.Is(err, ErrTimeout)
	if IsPermanent(err) {
		o.Outcome = store.OutcomeFailed
		return o
	}
	policy := MergedRetry(ct.Spec.Retry, p.cfg.DefaultRetry)
	// Time before this attempt is measured on the store's clock, this
	// attempt's own run time on ours: no cross-clock subtraction.
	elapsed := p.cfg.Clock.Now().Sub(started)
	if !ct.FirstStartedAt.IsZero() && e.claimedAt.After(ct.FirstStartedAt) {
		elapsed += e.claimedAt.Sub(ct.FirstStartedAt)
	}
	if d, ok := retryNext(policy, ct.Attempt, elapsed, err); ok {
		o.Outcome, o.RetryDelay = store.OutcomeRetry, d
		return o
	}
	o.Outcome = store.OutcomeFailed
	return o
}
