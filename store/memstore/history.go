package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// AttemptHistory answers the attempt records of a run's tasks. See
// [store.HistoryStore].
func (s *Store) AttemptHistory(ctx context.Context, params *store.AttemptHistoryParams) (*store.AttemptHistoryResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res := &store.AttemptHistoryResult{}
	r, err := s.runLocked(params.RunID)
	if err != nil {
		k := s.kept[params.RunID]
		if k == nil || k.until.Before(s.now()) {
			return nil, err
		}
		for _, th := range k.tasks {
			if params.Task == "" || th.Task == params.Task {
				res.Tasks = append(res.Tasks, store.TaskHistory{Task: th.Task, Attempts: copyAttempts(th.Attempts)})
			}
		}
	} else {
		for i := range r.tasks {
			t := &r.tasks[i]
			if params.Task != "" && t.inst.Name != params.Task {
				continue
			}
			res.Tasks = append(res.Tasks, store.TaskHistory{
				Task:     t.inst.Name,
				Attempts: copyAttempts(t.inst.Attempts),
			})
		}
	}
	if params.Task != "" && len(res.Tasks) == 0 {
		return nil, fmt.Errorf("memstore: run %s task %s: %w", params.RunID, ids.Quote(params.Task), store.ErrNotFound)
	}
	return res, nil
}

// keptHistory is the attempt history of a freed run, kept until until.
type keptHistory struct {
	id    string
	until time.Time
	tasks []store.TaskHistory
}

// keepHistoryLocked keeps the attempt records of r, about to be freed at
// the end of its retention, when the store keeps history longer: until
// its end plus the history retention. keptOrder is in the order runs were
// freed, close to the order their histories go (every history is kept as
// long after its run's end; runs with different retentions are freed out
// of that order): one past its time behind one that is not waits to be
// freed, and AttemptHistory answers it as gone.
func (s *Store) keepHistoryLocked(r *run) {
	until := r.rec.EndedAt.Add(s.cfg.history)
	if s.cfg.history == 0 || !until.After(r.expireAt) {
		return
	}
	k := &keptHistory{id: r.rec.ID, until: until, tasks: make([]store.TaskHistory, len(r.tasks))}
	for i := range r.tasks {
		t := &r.tasks[i]
		// A copy: the task's first record lives in the freed run.
		k.tasks[i] = store.TaskHistory{Task: t.inst.Name, Attempts: append([]store.Attempt(nil), t.inst.Attempts...)}
	}
	s.kept[k.id] = k
	s.keptOrder = append(s.keptOrder, k)
}

// dropKeptLocked frees the kept histories whose time is over.
func (s *Store) dropKeptLocked(now time.Time) {
	n := 0
	for n < len(s.keptOrder) && s.keptOrder[n].until.Before(now) {
		delete(s.kept, s.keptOrder[n].id)
		s.kept = shrunk(s.kept, &s.peak.kept)
		n++
	}
	s.keptOrder = dropFront(s.keptOrder, n)
}
