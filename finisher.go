package plait

import (
	"context"
	"errors"
	"sync"
)

// finishBatchMax bounds how many outcomes go to the store in one call.
const finishBatchMax = 64

// finishAttempts is how often a failed finish call is tried before the
// outcomes are given up; their leases then expire and the sweep recovers the
// tasks (at-least-once).
const finishAttempts = 3

type finishReq struct {
	e *execution
	o TaskOutcome
}

// finisher queues attempt outcomes for the driver, which writes whatever has
// queued up as one batch: no added latency when idle, fewer round trips when
// busy.
type finisher struct {
	p      *pool
	mu     sync.Mutex
	queue  []finishReq
	closed bool
	done   chan struct{} // closed by close
}

func newFinisher(p *pool) *finisher { return &finisher{p: p, done: make(chan struct{})} }

func (f *finisher) submit(e *execution, o TaskOutcome) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		f.p.cfg.logger.Warn("plait: outcome after shutdown dropped; the lease will expire", "run", o.Lease.RunID, "task", o.Lease.Task)
		return
	}
	f.queue = append(f.queue, finishReq{e: e, o: o})
	f.mu.Unlock()
	f.p.wake()
}

// close refuses later outcomes; the driver writes what is queued and stops.
func (f *finisher) close() {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		close(f.done)
	}
	f.mu.Unlock()
}

// take removes up to max queued outcomes.
func (f *finisher) take(max int) []finishReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.queue)
	if n == 0 {
		return nil
	}
	if n > max {
		n = max
	}
	batch := append([]finishReq(nil), f.queue[:n]...)
	f.queue = f.queue[n:]
	if len(f.queue) == 0 {
		f.queue = nil
	}
	return batch
}

func (f *finisher) pending() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue) > 0
}

func (f *finisher) drained() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed && len(f.queue) == 0
}

// write records a batch of outcomes and claims up to claim.Limit tasks in
// the same call. It returns the claim's answer (nil when none).
func (f *finisher) write(ctx context.Context, batch []finishReq, claim *TaskClaimParams) *TaskClaimResult {
	p := f.p
	params := &TaskFinishClaimParams{Finish: TaskFinishParams{WorkerID: p.cfg.workerID, Outcomes: make([]TaskOutcome, len(batch))}}
	for i, r := range batch {
		params.Finish.Outcomes[i] = r.o
	}
	if claim != nil && claim.Limit > 0 {
		params.Claim = *claim
	}
	var res *TaskFinishClaimResult
	var err error
	for try := 0; try < finishAttempts; try++ {
		res, err = p.store.TaskFinishClaim(ctx, params)
		if err == nil && len(res.Finished) == len(batch) {
			break
		}
		// The first call may have applied: a retry must not claim tasks
		// this process would never hear about.
		params.Claim = TaskClaimParams{}
	}
	if err != nil || len(res.Finished) != len(batch) {
		p.cfg.logger.Error("plait: recording outcomes failed; leases will expire and the tasks re-run", "err", err, "count", len(batch))
		for _, r := range batch {
			p.untrack(r.e)
		}
		return nil
	}
	for i, r := range batch {
		p.untrack(r.e)
		f.report(r, res.Finished[i])
	}
	return res.Claimed
}

func (f *finisher) report(r finishReq, res TaskFinishResult) {
	p := f.p
	ct := r.e.ct
	ev := Event{RunID: ct.Lease.RunID, Task: ct.Spec.Name, Attempt: ct.Attempt, Epoch: ct.Lease.Epoch, RunStatus: res.RunStatus}
	switch {
	case res.Err == nil:
	case errors.Is(res.Err, ErrStaleEpoch), errors.Is(res.Err, ErrNotFound):
		ev.Type, ev.Err = EventTaskLeaseLost, res.Err
		p.s.emit(ev)
		return
	default:
		p.cfg.logger.Error("plait: outcome refused", "run", ct.Lease.RunID, "task", ct.Spec.Name, "err", res.Err)
		return
	}
	switch r.o.Outcome {
	case OutcomeSucceeded:
		ev.Type = EventTaskSucceeded
	case OutcomeRetry:
		ev.Type, ev.Err, ev.RetryIn = EventTaskRetrying, errors.New(r.o.Error), r.o.RetryDelay
	case OutcomeFailed:
		ev.Type, ev.Err = EventTaskFailed, errors.New(r.o.Error)
	case OutcomeReleased:
		// Only shutdown releases a running attempt.
		ev.Type, ev.Err = EventTaskReleased, p.shutdownErr()
	case OutcomeReturned:
		ev.Type = EventTaskReleased
	}
	p.s.emit(ev)
	if res.RunStatus.Terminal() {
		if res.RunStatus != RunCompleted {
			// Stop strategy: sibling handlers here are now working for
			// nothing; elsewhere they learn it at their next heartbeat.
			p.cancelRun(ct.Lease.RunID, ErrRunCancelled)
		}
		p.s.emit(Event{Type: EventRunFinished, RunID: ct.Lease.RunID, RunStatus: res.RunStatus})
	}
}
