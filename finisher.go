package plait

import (
	"context"
	"errors"
	"sync"
)

// finishBatchMax bounds how many outcomes go to the store in one call.
const finishBatchMax = 64

// finishAttempts is how often a failed TaskFinish call is tried before the
// outcomes are given up; their leases then expire and the sweep recovers the
// tasks (at-least-once).
const finishAttempts = 3

type finishReq struct {
	e *execution
	o TaskOutcome
}

// finisher writes attempt outcomes to the store from one goroutine, taking
// whatever has queued up as one batch: no added latency when idle, fewer
// round trips when busy.
type finisher struct {
	p      *pool
	mu     sync.Mutex
	queue  []finishReq
	closed bool
	wake   chan struct{}
}

func newFinisher(p *pool) *finisher {
	return &finisher{p: p, wake: make(chan struct{}, 1)}
}

func (f *finisher) submit(e *execution, o TaskOutcome) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		f.p.cfg.logger.Warn("plait: outcome after shutdown dropped; the lease will expire", "run", o.Lease.RunID, "task", o.Lease.Task)
		return
	}
	f.queue = append(f.queue, finishReq{e: e, o: o})
	f.mu.Unlock()
	f.signal()
}

func (f *finisher) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// close makes run return once everything queued has been written.
func (f *finisher) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.signal()
}

func (f *finisher) run(ctx context.Context) {
	for {
		f.mu.Lock()
		n := len(f.queue)
		if n == 0 {
			closed := f.closed
			f.mu.Unlock()
			if closed {
				return
			}
			<-f.wake
			continue
		}
		if n > finishBatchMax {
			n = finishBatchMax
		}
		batch := append([]finishReq(nil), f.queue[:n]...)
		f.queue = f.queue[n:]
		if len(f.queue) == 0 {
			f.queue = nil
		}
		f.mu.Unlock()
		f.write(ctx, batch)
	}
}

func (f *finisher) write(ctx context.Context, batch []finishReq) {
	p := f.p
	outs := make([]TaskOutcome, len(batch))
	for i, r := range batch {
		outs[i] = r.o
	}
	var res []TaskFinishResult
	var err error
	for try := 0; try < finishAttempts; try++ {
		res, err = p.store.TaskFinish(ctx, &TaskFinishParams{WorkerID: p.cfg.workerID, Outcomes: outs})
		if err == nil && len(res) == len(outs) {
			break
		}
	}
	if err != nil || len(res) != len(outs) {
		p.cfg.logger.Error("plait: recording outcomes failed; leases will expire and the tasks re-run", "err", err, "count", len(outs))
		for _, r := range batch {
			p.untrack(r.e)
		}
		return
	}
	for i, r := range batch {
		p.untrack(r.e)
		f.report(r, res[i])
	}
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
