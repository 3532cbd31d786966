package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/plaitdag/plait/store"
)

// finishBatchMax bounds how many outcomes go to the store in one call.
const finishBatchMax = 64

// finishRetryMin and finishRetryMax bound the pause between tries of a
// finish call that failed; it doubles from the one to the other (and never
// beyond the lease margin, so several tries fit while a lease still holds).
// Outcomes are retried for as long as their leases are vouched for, which
// the lease keeper keeps doing while they wait: a store outage shorter than
// the lease costs no re-run. Only an outcome whose lease can no longer be
// vouched for, or Run's shutdown deadline, ends the tries; its task then
// runs again once the lease expires and the sweep recovers it.
const (
	finishRetryMin = 10 * time.Millisecond
	finishRetryMax = time.Second
)

type finishReq struct {
	e *Attempt
	o store.TaskOutcome
	// standIn marks a failure written in place of an outcome the store
	// refused (see failInstead); refused in its turn, it is not replaced.
	standIn bool
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
	// outcomes lends the slices finish calls carry (outcome_bufs.go).
	outcomes outcomeBufs
}

func newFinisher(p *pool) *finisher { return &finisher{p: p, done: make(chan struct{})} }

func (f *finisher) submit(e *Attempt, o store.TaskOutcome) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		f.p.untrack(e)
		f.p.cfg.Logger.Warn("plait: outcome after shutdown dropped; the lease will expire", "run", o.Lease.RunID, "task", o.Lease.Task)
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

// take removes up to max queued outcomes into buf, which it returns
// (empty when none are queued). Each driver passes its own buffer, used
// again for its next batch once the write of this one has returned; the
// queue keeps its own array too, so neither regrows at every batch.
func (f *finisher) take(buf []finishReq, max int) []finishReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := min(len(f.queue), max)
	buf = append(buf[:0], f.queue[:n]...)
	rest := copy(f.queue, f.queue[n:])
	clear(f.queue[rest:]) // no Attempt stays reachable from the spare room
	f.queue = f.queue[:rest]
	return buf
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
// the same call. It returns the claim's answer (nil when none). A failed
// call is sent again, unchanged, while the outcomes' leases hold (see
// finishRetryMin) or, with a claim attached, until the claim's lease has
// passed: the claim's RequestID makes the resend answer the tasks a lost
// first call took, instead of leaving them held by nobody. A call the store
// rejected for what it carries (store.ErrRejected) is not sent again as it
// is: the batch goes in parts (see rejected).
func (f *finisher) write(ctx context.Context, batch []finishReq, claim *store.TaskClaimParams) *store.TaskClaimResult {
	return f.send(ctx, batch, claim, false)
}

// send is write; part says batch is a part of a rejected batch.
func (f *finisher) send(ctx context.Context, batch []finishReq, claim *store.TaskClaimParams, part bool) *store.TaskClaimResult {
	p := f.p
	outcomes := f.outcomes.get(batch)
	defer f.outcomes.put(outcomes)
	params := &store.TaskFinishClaimParams{Finish: store.TaskFinishParams{WorkerID: p.cfg.NodeID, Outcomes: *outcomes}}
	if claim != nil && claim.Limit > 0 {
		params.Claim = *claim
	}
	claimUntil := p.cfg.Clock.Now().Add(p.cfg.LeaseDuration)
	// given marks outcomes given up on: they are still sent, since the call
	// must not change while it may have applied, but no longer reported.
	given := make([]bool, len(batch))
	delay, maxDelay := finishRetryMin, min(finishRetryMax, p.leaseMargin())
	for failures := 0; ; failures++ {
		cctx, done := p.writeCtx(ctx)
		res, err := p.store.TaskFinishClaim(cctx, params)
		done()
		if err == nil && len(res.Finished) == len(batch) {
			if failures > 0 {
				p.cfg.Logger.Info("plait: outcomes recorded after failed tries", "count", len(batch), "failed", failures)
			}
			// One clock reading stamps the batch's events and node records.
			now := p.cfg.Clock.Now()
			for i, r := range batch {
				if given[i] {
					continue
				}
				if f.tooLarge(r, res.Finished[i]) {
					continue
				}
				p.untrack(r.e)
				f.report(r, res.Finished[i], now)
			}
			p.observeJoin(res.ParentsLeft)
			return res.Claimed
		}
		if err == nil {
			// The store broke its contract; asking again will not mend it.
			f.giveUp(pending(batch, given), fmt.Errorf("plait: the store answered %d results for %d outcomes", len(res.Finished), len(batch)))
			return nil
		}
		if errors.Is(err, store.ErrInvalidArgument) {
			f.giveUp(pending(batch, given), err)
			return nil
		}
		if errors.Is(err, store.ErrRejected) && f.rejected(ctx, pending(batch, given), err, part) {
			return nil
		}
		if failures == 0 {
			p.cfg.Logger.Warn("plait: recording outcomes failed; retrying while their leases hold", "err", err, "count", len(batch))
		}
		if !p.retryWait(delay) {
			f.giveUp(pending(batch, given), fmt.Errorf("plait: shutdown deadline passed: %w", err))
			return nil
		}
		delay = min(2*delay, maxDelay)
		now := p.cfg.Clock.Now()
		var lost []finishReq
		left := 0
		for i, r := range batch {
			switch {
			case given[i]:
			case p.vouched(r.e, now):
				left++
			default:
				given[i] = true
				lost = append(lost, r)
			}
		}
		if len(lost) > 0 {
			f.giveUp(lost, fmt.Errorf("plait: lease no longer vouched for: %w", err))
		}
		if left == 0 && (params.Claim.Limit == 0 || !now.Before(claimUntil)) {
			return nil
		}
	}
}

// pending returns the outcomes of batch not given up on.
func pending(batch []finishReq, given []bool) []finishReq {
	var out []finishReq
	for i, r := range batch {
		if !given[i] {
			out = append(out, r)
		}
	}
	return out
}

// tooLarge turns a success whose result the store refused for its size
// into a failure of the attempt (see failInstead). The result would be as
// large on every attempt, so the failure is for good.
func (f *finisher) tooLarge(r finishReq, res store.TaskFinishResult) bool {
	if r.o.Outcome != store.OutcomeSucceeded || !errors.Is(res.Err, store.ErrResultTooLarge) {
		return false
	}
	f.failInstead(r, res.Err, "plait: result too large for the store; the attempt fails")
	return true
}

// failInstead queues, in place of an outcome the store refused, the
// failure of its attempt with err: the store changed nothing for the
// outcome, so its lease still holds and stays extended meanwhile.
func (f *finisher) failInstead(r finishReq, err error, msg string) {
	f.p.cfg.Logger.Warn(msg, "run", r.o.Lease.RunID, "task", r.o.Lease.Task, "err", err)
	failed := store.TaskOutcome{Lease: r.o.Lease, Outcome: store.OutcomeFailed, Error: err.Error()}
	f.mu.Lock()
	// Queued even when the finisher is closing: the driver calling write
	// drains the queue before it stops.
	f.queue = append(f.queue, finishReq{e: r.e, o: failed, standIn: true})
	f.mu.Unlock()
	f.p.wake()
}

// giveUp drops outcomes that could not be recorded: their leases expire
// and the sweep recovers the tasks, which run again (at-least-once).
func (f *finisher) giveUp(batch []finishReq, err error) {
	f.p.cfg.Logger.Error("plait: recording outcomes failed; leases will expire and the tasks re-run", "err", err, "count", len(batch))
	for _, r := range batch {
		f.p.untrack(r.e)
	}
}

// retryWait pauses d on the scheduler's clock before a write is tried
// again, or less once Run is stopping and its deadline comes first. It
// reports false when the shutdown deadline has passed.
func (p *pool) retryWait(d time.Duration) bool {
	t := p.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
	case <-p.stopped:
		rest := p.stopBy.Load().Sub(p.cfg.Clock.Now())
		if rest <= 0 {
			return false
		}
		if rest < d {
			dl := p.cfg.Clock.NewTimer(rest)
			defer dl.Stop()
			select {
			case <-t.C():
			case <-dl.C():
			}
		} else {
			<-t.C()
		}
	}
	return !p.pastDeadline()
}

func (f *finisher) report(r finishReq, res store.TaskFinishResult, now time.Time) {
	p := f.p
	ct := r.e.ct
	ev := Event{RunID: ct.Lease.RunID, Task: ct.Spec.Name, Attempt: ct.Attempt, Epoch: ct.Lease.Epoch, RunStatus: res.RunStatus, At: now}
	switch {
	case res.Err == nil:
	case errors.Is(res.Err, store.ErrStaleEpoch), errors.Is(res.Err, store.ErrNotFound):
		ev.Type, ev.Err = EventTaskLeaseLost, res.Err
		p.emit(ev)
		if m := p.cfg.Metrics; m != nil && r.o.Outcome != store.OutcomeReturned {
			m.LeaseLost(labelsOf(ct))
		}
		return
	default:
		p.cfg.Logger.Error("plait: outcome refused", "run", ct.Lease.RunID, "task", ct.Spec.Name, "err", res.Err)
		return
	}
	switch r.o.Outcome {
	case store.OutcomeSucceeded:
		ev.Type = EventTaskSucceeded
	case store.OutcomeRetry:
		ev.Type, ev.Err, ev.RetryIn = EventTaskRetrying, errors.New(r.o.Error), r.o.RetryDelay
	case store.OutcomeFailed:
		ev.Type, ev.Err = EventTaskFailed, errors.New(r.o.Error)
	case store.OutcomeReleased:
		// Only shutdown releases a running attempt.
		ev.Type, ev.Err = EventTaskReleased, p.shutdownErr()
	case store.OutcomeReturned:
		ev.Type = EventTaskReleased
	}
	p.emit(ev)
	if p.node != nil {
		p.node.finished(r.e, r.o.Outcome, now)
	}
	if m := p.cfg.Metrics; m != nil && r.o.Outcome != store.OutcomeReturned {
		l := labelsOf(ct)
		if r.o.Outcome == store.OutcomeRetry {
			m.TaskRetried(l, r.o.RetryDelay)
		}
		m.TaskFinished(l, r.o.Outcome, r.e.ran)
	}
	if res.RunStatus.Terminal() {
		if res.RunStatus != store.RunCompleted {
			// Stop strategy: sibling handlers here are now working for
			// nothing; elsewhere they learn it at their next heartbeat.
			p.cancelRun(ct.Lease.RunID, ErrRunCancelled)
		}
		p.emit(Event{Type: EventRunFinished, RunID: ct.Lease.RunID, RunStatus: res.RunStatus, At: now})
		// Only the finish that ended the run answers it terminal: a task
		// of an ended run holds no lease, so any later finish is stale.
		if rm := p.cfg.RunMetrics; rm != nil {
			rm.RunEnded(Labels{Workflow: ct.Workflow, Tenant: ct.Tenant}, res.RunStatus)
		}
	}
}
