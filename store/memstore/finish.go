package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/plaitdag/plait/store"
)

// TaskFinish applies each outcome on its own. See [store.Store.TaskFinish].
func (s *Store) TaskFinish(ctx context.Context, params *store.TaskFinishParams) ([]store.TaskFinishResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]store.TaskFinishResult, len(params.Outcomes))
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for i := range params.Outcomes {
		out[i] = s.finishLocked(&params.Outcomes[i], now)
	}
	return out, nil
}

// TaskFinishClaim finishes, then claims, under one lock. See
// [store.Store.TaskFinishClaim].
func (s *Store) TaskFinishClaim(ctx context.Context, params *store.TaskFinishClaimParams) (*store.TaskFinishClaimResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	claim := params.Claim.Limit > 0
	if claim {
		if err := validClaim(&params.Claim); err != nil {
			return nil, err
		}
	}
	names := params.Claim.Queues
	if len(names) == 0 {
		names = defaultQueues
	}
	res := &store.TaskFinishClaimResult{Finished: make([]store.TaskFinishResult, len(params.Finish.Outcomes))}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if m := s.recallLocked(params.Claim.RequestID, now); claim && m != nil {
		// Sent again: the outcomes applied the first time are answered as
		// they were, and the claim answers what it holds.
		copy(res.Finished, m.finished)
		res.Claimed = s.replayLocked(m, now, params.Claim.InlineResultsMax)
		return res, nil
	}
	s.parentsLeft = 0
	for i := range params.Finish.Outcomes {
		res.Finished[i] = s.finishLocked(&params.Finish.Outcomes[i], now)
	}
	res.ParentsLeft = s.parentsLeft
	if claim {
		res.Claimed = s.claimAllLocked(&params.Claim, names, now)
		s.rememberLocked(params.Claim.RequestID, now.Add(ceilDur(params.Claim.LeaseDuration)), res.Claimed,
			append([]store.TaskFinishResult(nil), res.Finished...))
	}
	return res, nil
}

func (s *Store) finishLocked(o *store.TaskOutcome, now time.Time) store.TaskFinishResult {
	if o.Outcome < store.OutcomeSucceeded || o.Outcome > store.OutcomeReturned {
		return store.TaskFinishResult{Err: fmt.Errorf("memstore: unknown outcome %d: %w", o.Outcome, store.ErrInvalidArgument)}
	}
	t, err := s.leasedLocked(o.Lease)
	if err != nil {
		res := store.TaskFinishResult{Err: err}
		if r := s.runs[o.Lease.RunID]; r != nil {
			res.RunStatus = r.rec.Status
		}
		return res
	}
	r := t.run
	if o.Outcome == store.OutcomeSucceeded && len(o.Result) > s.cfg.maxResult {
		return store.TaskFinishResult{Err: fmt.Errorf("memstore: result of %d bytes, limit %d: %w", len(o.Result), s.cfg.maxResult, store.ErrResultTooLarge), RunStatus: r.rec.Status}
	}
	if !t.status.CanBecome(outcomeStatus[o.Outcome]) {
		err := store.CheckTaskTransition(t.status, outcomeStatus[o.Outcome])
		return store.TaskFinishResult{Err: fmt.Errorf("memstore: run %s task %s: %w", r.rec.ID, t.inst.Name, err), RunStatus: r.rec.Status}
	}
	var delay time.Duration
	if o.Outcome == store.OutcomeRetry {
		// whole milliseconds, rounded up, as the Redis store keeps it.
		delay = ceilDur(o.RetryDelay)
	}
	if o.Outcome != store.OutcomeReturned {
		t.record(now, recordOutcome(o), o.Error, delay)
	}
	s.unholdLocked(t)

	switch o.Outcome {
	case store.OutcomeSucceeded:
		t.inst.Result = copyBytes(o.Result)
		t.inst.Error = ""
		if err = s.setTaskStatusLocked(t, store.TaskSucceeded, now); err == nil {
			err = s.releaseChildrenLocked(t, now)
		}
	case store.OutcomeRetry:
		t.inst.Error = o.Error
		t.inst.Attempt++
		if err = s.setTaskStatusLocked(t, store.TaskRetrying, now); err == nil {
			err = s.scheduleLocked(t, now.Add(delay), now)
		}
	case store.OutcomeFailed:
		t.inst.Error = o.Error
		err = s.failLocked(t, store.TaskFailed, now)
	case store.OutcomeReleased:
		t.epoch++
		err = s.requeueLocked(t, now)
	case store.OutcomeReturned:
		t.epoch++
		if len(t.inst.Attempts) == 0 {
			// This claim was its first: as if it never happened.
			t.inst.Attempt = 0
			t.inst.StartedAt = time.Time{}
		}
		s.keepSlotsLocked(t)
		err = s.returnLocked(t, now)
	}
	if err == nil {
		err = s.finishRunLocked(r, now)
	}
	return store.TaskFinishResult{Err: err, RunStatus: r.rec.Status}
}

// outcomeStatus is the status each outcome moves a running task to first.
var outcomeStatus = [...]store.TaskStatus{
	store.OutcomeSucceeded: store.TaskSucceeded,
	store.OutcomeRetry:     store.TaskRetrying,
	store.OutcomeFailed:    store.TaskFailed,
	store.OutcomeReleased:  store.TaskReady,
	store.OutcomeReturned:  store.TaskReady,
}

// recordOutcome names how the attempt of o ended in its record: a retry
// or failure the task's Timeout caused is "timed out".
func recordOutcome(o *store.TaskOutcome) string {
	if o.TimedOut && (o.Outcome == store.OutcomeRetry || o.Outcome == store.OutcomeFailed) {
		return "timed out"
	}
	return o.Outcome.String()
}

// record appends the attempt record of the current claim. Its duration is
// kept in whole milliseconds, the unit of every duration both shipped
// stores keep.
func (t *task) record(now time.Time, outcome, errText string, retryDelay time.Duration) {
	dur := time.Duration(now.UnixMilli()-t.claimedAt.UnixMilli()) * time.Millisecond
	rec := store.Attempt{
		Attempt:    t.inst.Attempt,
		Epoch:      t.epoch,
		Generation: t.run.rec.Generation,
		Worker:     t.inst.Worker,
		Node:       t.inst.Node,
		QueuedAt:   t.queuedAt,
		StartedAt:  t.claimedAt,
		EndedAt:    t.claimedAt.Add(dur),
		Duration:   dur,
		Outcome:    outcome,
		Error:      errText,
		RetryDelay: retryDelay,
		Progress:   t.attemptProgress(),
	}
	if t.inst.Attempts == nil {
		// Most tasks end on their first attempt: its record lives in
		// the task, not in an allocation of its own.
		t.firstAttempt[0] = rec
		t.inst.Attempts = t.firstAttempt[:1:1]
		return
	}
	t.inst.Attempts = append(t.inst.Attempts, rec)
}

// failLocked ends t as failed or dead, dead-letters it and applies the
// run's error strategy.
func (s *Store) failLocked(t *task, st store.TaskStatus, now time.Time) error {
	r := t.run
	if err := s.setTaskStatusLocked(t, st, now); err != nil {
		return err
	}
	r.dead = append(r.dead, t.idx)
	s.dead = append(s.dead, taskRef{run: r.rec.ID, task: t.inst.Name})
	if r.rec.Strategy == store.StrategyStop {
		return s.stopRunLocked(r, store.RunFailed, "", now)
	}
	return s.releaseChildrenLocked(t, now)
}

// releaseChildrenLocked resolves the edges out of t, which just reached a
// terminal status, and of every task skipped as a consequence, with a
// worklist so long chains of skips cost no stack.
func (s *Store) releaseChildrenLocked(t *task, now time.Time) error {
	r := t.run
	if len(r.children[t.idx]) == 0 {
		return nil
	}
	work := []int{t.idx}
	for len(work) > 0 {
		p := &r.tasks[work[len(work)-1]]
		work = work[:len(work)-1]
		for _, e := range r.children[p.idx] {
			c := &r.tasks[e.child]
			if c.status != store.TaskPending || c.scheduled {
				continue
			}
			c.resolved++
			if e.on.Met(p.status, r.rec.Strategy) {
				c.satisfied++
			}
			deps := len(c.spec().Deps)
			var due, skip bool
			if c.spec().Join == store.JoinAny {
				due = c.satisfied >= 1
				skip = !due && c.resolved == deps
			} else {
				due = c.satisfied == deps
				skip = !due && c.resolved > c.satisfied
			}
			switch {
			case due:
				if err := s.makeDueLocked(c, now); err != nil {
					return err
				}
			case skip:
				if err := s.setTaskStatusLocked(c, store.TaskSkipped, now); err != nil {
					return err
				}
				work = append(work, c.idx)
			case c.spec().Join != store.JoinAny:
				if left := deps - c.resolved; s.parentsLeft == 0 || left < s.parentsLeft {
					s.parentsLeft = left
				}
			}
		}
	}
	return nil
}

// stopRunLocked cancels every unfinished task of r and ends the run with
// status st. Running tasks lose their lease.
func (s *Store) stopRunLocked(r *run, st store.RunStatus, reason string, now time.Time) error {
	if err := store.CheckRunTransition(r.rec.Status, st); err != nil {
		return fmt.Errorf("memstore: run %s: %w", r.rec.ID, err)
	}
	for i := range r.tasks {
		t := &r.tasks[i]
		if t.status.Terminal() {
			continue
		}
		if t.status == store.TaskRunning {
			t.epoch++
			t.record(now, "cancelled", reason, 0)
			s.unholdLocked(t)
		}
		if reason != "" {
			t.inst.Error = reason
		}
		queued := t.status == store.TaskReady || t.status == store.TaskRetrying || (t.status == store.TaskPending && t.scheduled)
		if err := s.setTaskStatusLocked(t, store.TaskCancelled, now); err != nil {
			return err
		}
		if queued {
			s.dropStaleLocked(t)
		}
	}
	return s.setRunStatusLocked(r, st, now)
}

// finishRunLocked ends r once every task is terminal.
func (s *Store) finishRunLocked(r *run, now time.Time) error {
	if r.rec.Status.Terminal() || r.ended < len(r.tasks) {
		return nil
	}
	st := store.RunCompleted
	if r.rec.Failed > 0 && r.rec.Strategy != store.StrategySkip {
		st = store.RunFailed
	}
	return s.setRunStatusLocked(r, st, now)
}
