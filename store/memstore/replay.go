package memstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// RunReplay opens the next generation of a finished run: the named tasks
// (or every failed, dead, cancelled and skipped one) and every task below
// them go back to pending, their dead letters leave the lists, and those
// whose parents are done become due again, in one step under the lock.
// See [store.ReplayStore].
func (s *Store) RunReplay(ctx context.Context, params *store.RunReplayParams) (*store.RunReplayResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if params == nil || params.RunID == "" {
		return nil, fmt.Errorf("memstore: replay needs a run id: %w", store.ErrInvalidArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runLocked(params.RunID)
	if err != nil {
		return nil, err
	}
	if r.rec.Generation == params.Generation+1 {
		// The same call again (its reply was lost): the generation it
		// asked for is open already.
		return &store.RunReplayResult{Run: r.snapshot(), Existing: true}, nil
	}
	if r.rec.Generation != params.Generation || !r.rec.Status.Terminal() {
		return nil, &store.ReplayError{RunID: r.rec.ID, Generation: r.rec.Generation, Expected: params.Generation, Status: r.rec.Status}
	}
	asked, err := replayTargets(r, params.Tasks)
	if err != nil {
		return nil, err
	}
	reset := descendants(r, asked)

	now := s.now()
	s.replaying = true
	defer func() { s.replaying = false }()
	if err := s.setRunStatusLocked(r, store.RunRunning, now); err != nil {
		return nil, err
	}
	s.dropLettersLocked(r, reset)
	res := &store.RunReplayResult{}
	for _, i := range reset {
		t := &r.tasks[i]
		t.inst.Attempt = 0
		t.inst.Error = ""
		t.inst.Result = nil
		t.scheduled = false
		t.resolved, t.satisfied = 0, 0
		t.asideFor, t.limitedBy = "", ""
		t.progress = nil
		if err := s.setTaskStatusLocked(t, store.TaskPending, now); err != nil {
			return nil, err
		}
		res.Reset = append(res.Reset, t.inst.Name)
	}
	s.replaying = false
	// Count each reset task's edges from the parents that stay done, then
	// release those whose dependencies are decided, as a finish would.
	for _, i := range reset {
		t := &r.tasks[i]
		for _, d := range t.spec().Deps {
			p := &r.tasks[r.indexOf(d.Task)]
			if !p.status.Terminal() {
				continue
			}
			t.resolved++
			if d.On.Met(p.status, r.rec.Strategy) {
				t.satisfied++
			}
		}
	}
	for _, i := range reset {
		t := &r.tasks[i]
		if t.status != store.TaskPending || t.scheduled {
			continue
		}
		deps := len(t.spec().Deps)
		due, skip := t.satisfied == deps, t.resolved > t.satisfied
		if t.spec().Join == store.JoinAny {
			due, skip = deps == 0 || t.satisfied >= 1, t.satisfied == 0 && deps > 0 && t.resolved == deps
		}
		switch {
		case due:
			err = s.makeDueLocked(t, now)
		case skip:
			if err = s.setTaskStatusLocked(t, store.TaskSkipped, now); err == nil {
				err = s.releaseChildrenLocked(t, now)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if err := s.finishRunLocked(r, now); err != nil {
		return nil, err
	}
	res.Run = r.snapshot()
	return res, nil
}

// replayTargets answers the indexes of the tasks a replay restarts by
// name, or every replayable one when none is named.
func replayTargets(r *run, names []string) ([]int, error) {
	var out []int
	if len(names) == 0 {
		for i := range r.tasks {
			if r.tasks[i].status.Replayable() {
				out = append(out, i)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("memstore: run %s has no failed, dead, cancelled or skipped task to replay: %w", r.rec.ID, store.ErrInvalidArgument)
		}
		return out, nil
	}
	for _, n := range names {
		i, ok := r.find(n)
		if !ok {
			return nil, fmt.Errorf("memstore: run %s task %s: %w", r.rec.ID, ids.Quote(n), store.ErrNotFound)
		}
		if st := r.tasks[i].status; !st.Replayable() {
			return nil, &store.ReplayError{RunID: r.rec.ID, Generation: r.rec.Generation, Expected: r.rec.Generation,
				Status: r.rec.Status, Task: n, TaskStatus: st}
		}
		out = append(out, i)
	}
	return out, nil
}

// descendants answers the tasks in asked and every task below them, in
// definition order.
func descendants(r *run, asked []int) []int {
	seen := make([]bool, len(r.tasks))
	work := slices.Clone(asked)
	for _, i := range asked {
		seen[i] = true
	}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		for _, e := range r.children[i] {
			if !seen[e.child] {
				seen[e.child] = true
				work = append(work, e.child)
			}
		}
	}
	var out []int
	for i, ok := range seen {
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// dropLettersLocked removes the dead letters of the reset tasks of r from
// the run's and the global list; every other letter stays.
func (s *Store) dropLettersLocked(r *run, reset []int) {
	gone := make(map[int]bool, len(reset))
	for _, i := range reset {
		gone[i] = true
	}
	r.dead = slices.DeleteFunc(r.dead, func(i int) bool { return gone[i] })
	s.dead = fitted(slices.DeleteFunc(s.dead, func(d taskRef) bool {
		if d.run != r.rec.ID {
			return false
		}
		i, ok := r.find(d.task)
		return ok && gone[i]
	}))
}
