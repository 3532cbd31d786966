package plait

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// execution is one claimed attempt running in this process.
type execution struct {
	ct *ClaimedTask
	// claimedAt is the store's clock at the claim.
	claimedAt time.Time
	// heldSince is the local time the task was handed to the workers.
	heldSince time.Time
	ctx       context.Context
	cancel    context.CancelCauseFunc

	// settled is set by whoever decides the attempt's outcome first: the
	// handler's return, the shutdown release, or a lost lease.
	settled atomic.Bool
	// begun is set by whoever decides first whether a task claimed ahead
	// starts: the worker about to run it, or Run's stop withdrawing it.
	begun atomic.Bool

	mu sync.Mutex
	// deadline is the local monotonic time until which the lease is known
	// to hold: the send time of the last successful claim or extension plus
	// the lease duration.
	deadline time.Time
}

// settle claims the right to report the attempt's outcome.
func (e *execution) settle() bool { return e.settled.CompareAndSwap(false, true) }

func (e *execution) setDeadline(t time.Time) {
	e.mu.Lock()
	if t.After(e.deadline) {
		e.deadline = t
	}
	e.mu.Unlock()
}

func (e *execution) leaseDeadline() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.deadline
}

// startAll hands claimed tasks to the worker goroutines. sent is the local
// time the claim was sent, the conservative start of the lease. Tasks whose
// claim returned after Run began stopping go straight back to their queues,
// written by the calling driver itself: the finisher may be closing.
func (p *pool) startAll(ctx context.Context, res *TaskClaimResult, sent time.Time) {
	var late []finishReq
	now := p.cfg.clock.Now()
	p.startMu.Lock()
	for _, ct := range res.Tasks {
		ectx, cancel := context.WithCancelCause(context.Background())
		e := &execution{ct: ct, claimedAt: res.Now, heldSince: now, ctx: ectx, cancel: cancel, deadline: sent.Add(p.cfg.leaseDuration)}
		p.track(e)
		if p.cancelled.has(ct.Lease.RunID, now) {
			cancel(ErrRunCancelled) // its worker skips it
		}
		if p.stopping.Load() {
			e.begun.Store(true)
			e.settle()
			cancel(ErrShutdown)
			late = append(late, finishReq{e: e, o: TaskOutcome{Lease: ct.Lease, Outcome: OutcomeReturned}})
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

// worker runs attempts until the work channel is closed.
func (p *pool) worker() {
	for e := range p.work {
		p.execute(e)
		p.handlers.Done()
	}
}

func (p *pool) execute(e *execution) {
	ct := e.ct
	defer e.cancel(context.Canceled)
	if !e.begun.CompareAndSwap(false, true) {
		p.slots.release(1)
		return // withdrawn unstarted by Run's stop, which wrote the release
	}
	if p.stopping.Load() || e.ctx.Err() != nil {
		p.skip(e)
		return
	}
	task := &Task{
		RunID:   ct.Lease.RunID,
		Name:    ct.Spec.Name,
		Handler: ct.Spec.Handler,
		Attempt: ct.Attempt,
		Epoch:   ct.Lease.Epoch,
		Payload: ct.Spec.Payload,
		parents: ct.ParentResults,
		codec:   p.cfg.codec,
	}
	p.s.emit(Event{Type: EventTaskStarted, RunID: task.RunID, Task: task.Name, Attempt: task.Attempt, Epoch: task.Epoch})
	started := p.cfg.clock.Now()

	var result any
	var err error
	fn, ok := p.s.handler(ct.Spec.Handler)
	if !ok {
		err = Permanent(fmt.Errorf("%w %s", ErrUnknownHandler, quote(ct.Spec.Handler)))
	} else {
		if ct.Spec.Timeout > 0 {
			t := p.cfg.clock.AfterFunc(ct.Spec.Timeout, func() { e.cancel(ErrTimeout) })
			defer t.Stop()
		}
		result, err = call(e.ctx, fn, task)
		p.pace.observeHandler(p.cfg.clock.Now().Sub(started))
	}
	if !e.settle() {
		p.slots.release(1)
		return // released by the shutdown path already
	}
	cause := context.Cause(e.ctx)
	if e.ctx.Err() != nil {
		switch {
		case errors.Is(cause, ErrLeaseLost), errors.Is(cause, ErrRunCancelled):
			// The store already moved on; any write would be refused.
			p.untrack(e)
			p.slots.release(1)
			p.s.emit(Event{Type: EventTaskLeaseLost, RunID: task.RunID, Task: task.Name, Attempt: task.Attempt, Epoch: task.Epoch, Err: cause})
			return
		case errors.Is(cause, ErrShutdown):
			p.slots.add(1)
			p.fin.submit(e, p.shutdownOutcome(e))
			return
		case errors.Is(cause, ErrTimeout):
			err = fmt.Errorf("%w after %s", ErrTimeout, ct.Spec.Timeout)
		}
	}
	// The slot is free once the handler returned. It is handed over
	// together with the outcome, so the driver claims the children this
	// outcome releases in the same store call.
	p.slots.add(1)
	p.fin.submit(e, p.outcome(e, started, result, err))
}

// skip disposes of a task claimed ahead that will not start here: its run
// was cancelled or its lease lost while it waited (nothing to write), or Run
// is stopping (it goes back to its queue unstarted).
func (p *pool) skip(e *execution) {
	if !e.settle() {
		p.slots.release(1)
		return // released by the shutdown path already
	}
	cause := context.Cause(e.ctx)
	if errors.Is(cause, ErrLeaseLost) || errors.Is(cause, ErrRunCancelled) {
		p.untrack(e)
		p.slots.release(1)
		ct := e.ct
		p.s.emit(Event{Type: EventTaskLeaseLost, RunID: ct.Lease.RunID, Task: ct.Lease.Task, Attempt: ct.Attempt, Epoch: ct.Lease.Epoch, Err: cause})
		return
	}
	p.slots.add(1)
	p.fin.submit(e, TaskOutcome{Lease: e.ct.Lease, Outcome: OutcomeReturned})
}

// outcome turns a handler's return into what the store records.
func (p *pool) outcome(e *execution, started time.Time, result any, err error) TaskOutcome {
	ct := e.ct
	o := TaskOutcome{Lease: ct.Lease}
	if err == nil {
		b, encErr := encodeValue(p.cfg.codec, result)
		if encErr == nil {
			o.Outcome, o.Result = OutcomeSucceeded, b
			return o
		}
		err = Permanent(fmt.Errorf("plait: encode result: %w", encErr))
	}
	o.Error = err.Error()
	if IsPermanent(err) {
		o.Outcome = OutcomeFailed
		return o
	}
	policy := ct.Spec.Retry.merged(p.cfg.defaultRetry)
	// Time before this attempt is measured on the store's clock, this
	// attempt's own run time on ours: no cross-clock subtraction.
	elapsed := p.cfg.clock.Now().Sub(started)
	if !ct.FirstStartedAt.IsZero() && e.claimedAt.After(ct.FirstStartedAt) {
		elapsed += e.claimedAt.Sub(ct.FirstStartedAt)
	}
	if d, ok := policy.delay(ct.Attempt, elapsed); ok {
		o.Outcome, o.RetryDelay = OutcomeRetry, d
		return o
	}
	o.Outcome = OutcomeFailed
	return o
}

// call runs the handler, turning a panic into a *PanicError with its stack.
func call(ctx context.Context, fn HandlerFunc, t *Task) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, &PanicError{Value: r, Stack: string(debug.Stack())}
		}
	}()
	return fn(ctx, t)
}
