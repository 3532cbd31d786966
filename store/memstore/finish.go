package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/plaitdag/plait"
)

// TaskFinish applies each outcome on its own. See [plait.Store.TaskFinish].
func (s *Store) TaskFinish(ctx context.Context, params *plait.TaskFinishParams) ([]plait.TaskFinishResult, error) {
	out := make([]plait.TaskFinishResult, len(params.Outcomes))
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	for i := range params.Outcomes {
		out[i] = s.finishLocked(&params.Outcomes[i], now)
	}
	return out, nil
}

// TaskFinishClaim finishes, then claims, under one lock. See
// [plait.Store.TaskFinishClaim].
func (s *Store) TaskFinishClaim(ctx context.Context, params *plait.TaskFinishClaimParams) (*plait.TaskFinishClaimResult, error) {
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
	res := &plait.TaskFinishClaimResult{Finished: make([]plait.TaskFinishResult, len(params.Finish.Outcomes))}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	for i := range params.Finish.Outcomes {
		res.Finished[i] = s.finishLocked(&params.Finish.Outcomes[i], now)
	}
	if claim {
		res.Claimed = s.claimAllLocked(&params.Claim, names, now)
	}
	return res, nil
}

func (s *Store) finishLocked(o *plait.TaskOutcome, now time.Time) plait.TaskFinishResult {
	if o.Outcome < plait.OutcomeSucceeded || o.Outcome > plait.OutcomeReturned {
		return plait.TaskFinishResult{Err: fmt.Errorf("memstore: unknown outcome %d: %w", o.Outcome, plait.ErrInvalidArgument)}
	}
	t, err := s.leasedLocked(o.Lease)
	if err != nil {
		res := plait.TaskFinishResult{Err: err}
		if r := s.runs[o.Lease.RunID]; r != nil {
			res.RunStatus = r.rec.Status
		}
		return res
	}
	r := t.run
	if o.Outcome != plait.OutcomeReturned {
		t.record(now, o.Outcome.String(), o.Error)
	}
	s.unholdLocked(t)

	switch o.Outcome {
	case plait.OutcomeSucceeded:
		t.inst.Result = copyBytes(o.Result)
		t.inst.Error = ""
		r.endLocked(t, plait.TaskSucceeded, now)
		s.releaseChildrenLocked(t, now)
	case plait.OutcomeRetry:
		t.inst.Error = o.Error
		t.inst.Attempt++
		t.status = plait.TaskRetrying
		s.scheduleLocked(t, now.Add(o.RetryDelay), now)
	case plait.OutcomeFailed:
		t.inst.Error = o.Error
		s.failLocked(t, plait.TaskFailed, now)
	case plait.OutcomeReleased:
		t.epoch++
		s.makeReadyLocked(t)
	case plait.OutcomeReturned:
		t.epoch++
		if len(t.inst.Attempts) == 0 {
			// This claim was its first: as if it never happened.
			t.inst.Attempt = 0
			t.inst.StartedAt = time.Time{}
		}
		s.returnLocked(t)
	}
	s.finishRunLocked(r, now)
	return plait.TaskFinishResult{RunStatus: r.rec.Status}
}

// record appends the attempt record of the current claim.
func (t *task) record(now time.Time, outcome, errText string) {
	t.inst.Attempts = append(t.inst.Attempts, plait.Attempt{
		Attempt:   t.inst.Attempt,
		Epoch:     t.epoch,
		Worker:    t.inst.Worker,
		StartedAt: t.claimedAt,
		Duration:  now.Sub(t.claimedAt),
		Outcome:   outcome,
		Error:     errText,
	})
}

// endLocked moves t to the terminal status st and counts it.
func (r *run) endLocked(t *task, st plait.TaskStatus, now time.Time) {
	t.status = st
	t.inst.EndedAt = now
	r.ended++
	switch st {
	case plait.TaskSucceeded:
		r.rec.Succeeded++
	case plait.TaskFailed, plait.TaskDead:
		r.rec.Failed++
	case plait.TaskSkipped:
		r.rec.Skipped++
	case plait.TaskCancelled:
		r.rec.Cancelled++
	}
}

// failLocked ends t as failed or dead, dead-letters it and applies the
// run's error strategy.
func (s *Store) failLocked(t *task, st plait.TaskStatus, now time.Time) {
	r := t.run
	r.endLocked(t, st, now)
	r.dead = append(r.dead, t.idx)
	s.dead = append(s.dead, taskRef{run: r.rec.ID, task: t.inst.Name})
	if r.rec.Strategy == plait.StrategyStop {
		s.stopRunLocked(r, plait.RunFailed, "", now)
		return
	}
	s.releaseChildrenLocked(t, now)
}

// releaseChildrenLocked resolves the edges out of t, which just reached a
// terminal status, and of every task skipped as a consequence, with a
// worklist so long chains of skips cost no stack.
func (s *Store) releaseChildrenLocked(t *task, now time.Time) {
	r := t.run
	if len(r.children[t.idx]) == 0 {
		return
	}
	work := []int{t.idx}
	for len(work) > 0 {
		p := &r.tasks[work[len(work)-1]]
		work = work[:len(work)-1]
		for _, e := range r.children[p.idx] {
			c := &r.tasks[e.child]
			if c.status != plait.TaskPending || c.scheduled {
				continue
			}
			c.resolved++
			if e.on.Met(p.status, r.rec.Strategy) {
				c.satisfied++
			}
			deps := len(c.spec().Deps)
			var due, skip bool
			if c.spec().Join == plait.JoinAny {
				due = c.satisfied >= 1
				skip = !due && c.resolved == deps
			} else {
				due = c.satisfied == deps
				skip = !due && c.resolved > c.satisfied
			}
			switch {
			case due:
				s.makeDueLocked(c, now)
			case skip:
				r.endLocked(c, plait.TaskSkipped, now)
				work = append(work, c.idx)
			}
		}
	}
}

// stopRunLocked cancels every unfinished task of r and ends the run with
// status st. Running tasks lose their lease.
func (s *Store) stopRunLocked(r *run, st plait.RunStatus, reason string, now time.Time) {
	for i := range r.tasks {
		t := &r.tasks[i]
		if t.status.Terminal() {
			continue
		}
		if t.status == plait.TaskRunning {
			t.epoch++
			t.record(now, "cancelled", reason)
			s.unholdLocked(t)
		}
		if reason != "" {
			t.inst.Error = reason
		}
		r.endLocked(t, plait.TaskCancelled, now)
	}
	s.endRunLocked(r, st, now)
}

// finishRunLocked ends r once every task is terminal.
func (s *Store) finishRunLocked(r *run, now time.Time) {
	if r.rec.Status.Terminal() || r.ended < len(r.tasks) {
		return
	}
	st := plait.RunCompleted
	if r.rec.Failed > 0 && r.rec.Strategy != plait.StrategySkip {
		st = plait.RunFailed
	}
	s.endRunLocked(r, st, now)
}

func (s *Store) endRunLocked(r *run, st plait.RunStatus, now time.Time) {
	r.rec.Status = st
	r.rec.EndedAt = now
	close(r.done)
}
