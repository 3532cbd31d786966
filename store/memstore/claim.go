package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/plaitdag/plait/store"
)

// promoteBound caps how many due delayed tasks one claim moves per queue.
const promoteBound = 4096

var defaultQueues = []string{store.DefaultQueue}

// TaskClaim moves due delayed tasks to ready and claims up to params.Limit
// ready tasks, highest priority first and oldest first within a priority.
// See [store.Store.TaskClaim].
func (s *Store) TaskClaim(ctx context.Context, params *store.TaskClaimParams) (*store.TaskClaimResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validClaim(params); err != nil {
		return nil, err
	}
	names := params.Queues
	if len(names) == 0 {
		names = defaultQueues
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if m := s.recallLocked(params.RequestID, now); m != nil {
		return s.replayLocked(m, now, params.InlineResultsMax), nil
	}
	res := s.claimAllLocked(params, names, now)
	s.rememberLocked(params.RequestID, now.Add(ceilDur(params.LeaseDuration)), res, nil)
	return res, nil
}

// validClaim checks a claim's arguments.
func validClaim(params *store.TaskClaimParams) error {
	if params.Limit < 1 || params.LeaseDuration <= 0 {
		return fmt.Errorf("memstore: claim needs a limit >= 1 and a positive lease: %w", store.ErrInvalidArgument)
	}
	if params.Shares != nil {
		ok := len(params.Shares) == 4
		for _, v := range params.Shares {
			ok = ok && v >= 0
		}
		if !ok {
			return fmt.Errorf("memstore: shares %v: want four counts of at least 0: %w", params.Shares, store.ErrInvalidArgument)
		}
	}
	return checkRequestID(params.RequestID)
}

// claimAllLocked is TaskClaim's step, with the lock held.
func (s *Store) claimAllLocked(params *store.TaskClaimParams, names []string, now time.Time) *store.TaskClaimResult {
	until := now.Add(ceilDur(params.LeaseDuration))
	res := &store.TaskClaimResult{Now: now}

	var qs [8]*queue
	queues := qs[:0]
	for _, name := range names {
		q := s.queues[name]
		if q == nil {
			continue
		}
		s.promoteLocked(q, now, promoteBound)
		queues = append(queues, q)
	}
	s.expireStartsLocked(now)
	s.wakeRatesLocked(now)
	for _, q := range queues {
		s.claimAsideLocked(q, params, res, now, until)
	}

	if params.Shares != nil {
		// Weighted: each level its share first (internal/worker/fairness.go),
		// then the strict pass below fills what is left.
		for p := 0; p < numPriorities && p < len(params.Shares); p++ {
			s.claimLevelLocked(queues, p, min(params.Limit, len(res.Tasks)+params.Shares[p]), params, res, now, until)
		}
	}
	for p := 0; p < numPriorities && len(res.Tasks) < params.Limit; p++ {
		s.claimLevelLocked(queues, p, params.Limit, params, res, now, until)
	}

	// Tasks held back by a rate in this claim set their key's wake-up.
	res.NextDueAt = s.wakeRatesLocked(now)
	for _, q := range queues {
		if d, ok := q.delayed.peek(); ok && (res.NextDueAt.IsZero() || d.due.Before(res.NextDueAt)) {
			res.NextDueAt = d.due
		}
	}
	return res
}

// claimLevelLocked claims ready tasks of priority level p (0 urgent) from
// queues, in order, until res holds upto tasks.
func (s *Store) claimLevelLocked(queues []*queue, p, upto int, params *store.TaskClaimParams, res *store.TaskClaimResult, now, until time.Time) {
	for _, q := range queues {
		f := &q.ready[p]
		for len(res.Tasks) < upto {
			e, ok := f.peek()
			if !ok {
				break
			}
			f.drop()
			if !runsHere(e.t, params.Handlers) {
				s.setAsideLocked(q, e, now)
				continue
			}
			if !s.admitLocked(e, now) {
				continue
			}
			ct := s.claimLocked(e.t, params.WorkerID, params.InlineResultsMax, now, until)
			if ct == nil {
				continue
			}
			if res.Tasks == nil {
				res.Tasks = make([]*store.ClaimedTask, 0, min(params.Limit, 64))
			}
			res.Tasks = append(res.Tasks, ct)
		}
	}
}

// ClaimsByShares declares that claims honour TaskClaimParams.Shares; see
// [store.FairClaimer].
func (s *Store) ClaimsByShares() {}

var _ store.FairClaimer = (*Store)(nil)

// claimLocked makes t running under a new epoch and builds its answer; nil
// when t cannot become running (a status the queue should not have held).
func (s *Store) claimLocked(t *task, worker string, inline int, now, until time.Time) *store.ClaimedTask {
	r := t.run
	if s.setTaskStatusLocked(t, store.TaskRunning, now) != nil {
		return nil
	}
	t.epoch++
	t.asideFor = ""
	if t.inst.Attempt == 0 {
		t.inst.Attempt = 1
	}
	t.inst.Worker, t.inst.Node = store.SplitWorker(worker)
	s.holdLocked(t, until)
	if r.rec.Status == store.RunPending {
		_ = s.setRunStatusLocked(r, store.RunRunning, now)
	}
	return s.claimedLocked(t, until, inline)
}

// claimedLocked builds the answer for a task t holds under its current
// lease; a task with more parents than inline (when positive) gets neither
// their names nor their results (see TaskClaimParams.InlineResultsMax).
func (s *Store) claimedLocked(t *task, until time.Time, inline int) *store.ClaimedTask {
	r := t.run
	spec := t.spec()
	// The answer comes zeroed and is written field by field: a whole
	// struct assigned would clear and copy its every word.
	ct := s.answers.task()
	ct.Lease = store.Lease{RunID: r.rec.ID, Task: spec.Name, Epoch: t.epoch}
	ct.LeaseUntil = until
	ct.Spec = *spec
	ct.Attempt = t.inst.Attempt
	ct.FirstStartedAt = t.inst.StartedAt
	ct.Workflow, ct.Tenant, ct.Service = r.rec.Workflow, r.rec.Tenant, r.rec.Service
	s.answers.copySpecSlices(&ct.Spec, spec)
	if r.rec.Metadata != nil {
		ct.Metadata = make(map[string]string, len(r.rec.Metadata))
		for k, v := range r.rec.Metadata {
			ct.Metadata[k] = v
		}
	}
	if inline > 0 && len(spec.Deps) > inline {
		ct.ParentResultsDeferred = true
		ct.Spec.Deps = nil
		return ct
	}
	for _, d := range spec.Deps {
		p := &r.tasks[r.indexOf(d.Task)]
		if p.status != store.TaskSucceeded {
			continue
		}
		if ct.ParentResults == nil {
			ct.ParentResults = make(map[string][]byte, len(spec.Deps))
		}
		ct.ParentResults[d.Task] = copyBytes(p.inst.Result)
	}
	return ct
}
