package memstore

import (
	"context"
	"slices"
	"sort"

	"github.com/plaitdag/plait/store"
)

// DeadLetterList answers one page of dead letters, newest first. See
// [store.DeadLetterStore]. It reads the global dead-letter list (or the
// run's) whole: a memory store holds what fits in memory, so its pages are
// never short.
func (s *Store) DeadLetterList(ctx context.Context, params *store.DeadLetterListParams) (*store.DeadLetterListResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	return s.deadLetters(params), nil
}

// DeadLetterGroups groups the window of letters a DeadLetterList of the
// same filters would list in a page of params.Window. See
// [store.DeadLetterGroupStore].
func (s *Store) DeadLetterGroups(ctx context.Context, params *store.DeadLetterGroupsParams) (*store.DeadLetterGroupsResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	lp := params.ListParams()
	page := s.deadLetters(&lp)
	return store.GroupDeadLetters(page.Letters, page.NextCursor), nil
}

// deadLetters answers the page of params, its limit unchecked.
func (s *Store) deadLetters(params *store.DeadLetterListParams) *store.DeadLetterListResult {
	// Letters are stamped on whole milliseconds; the bounds are read cut
	// down to the millisecond too.
	bounds := *params
	bounds.Since, bounds.Until = ms(params.Since), ms(params.Until)
	var curMs int64
	var curKey string
	if params.Cursor != "" {
		curMs, curKey, _ = store.ParseDeadLetterCursor(params.Cursor)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.now())
	var all []store.DeadLetter
	for _, d := range s.dead {
		if params.RunID != "" && d.run != params.RunID {
			continue
		}
		r := s.runs[d.run]
		if r == nil {
			continue
		}
		i, ok := r.find(d.task)
		if !ok {
			continue
		}
		t := &r.tasks[i]
		spec := t.spec()
		l := store.DeadLetter{RunID: d.run, Task: d.task, Workflow: r.rec.Workflow, Tenant: r.rec.Tenant,
			Service: r.rec.Service, Queue: spec.Queue, Handler: spec.Handler, Status: t.status,
			Error: t.inst.Error, At: t.inst.EndedAt}
		if !bounds.Matches(&l) {
			continue
		}
		if params.Cursor != "" && !store.DeadLetterBefore(curMs, curKey, l.At.UnixMilli(), l.RunID+" "+l.Task) {
			continue
		}
		all = append(all, l)
	}
	sort.Slice(all, func(i, j int) bool {
		return store.DeadLetterBefore(all[i].At.UnixMilli(), all[i].RunID+" "+all[i].Task, all[j].At.UnixMilli(), all[j].RunID+" "+all[j].Task)
	})
	res := &store.DeadLetterListResult{}
	if len(all) > params.Limit {
		all = all[:params.Limit]
		res.NextCursor = store.DeadLetterCursor(all[len(all)-1])
	}
	res.Letters = all
	return res
}

// DeadLetterPurge removes the named letters from the run's and the global
// dead-letter lists. See [store.DeadLetterStore].
func (s *Store) DeadLetterPurge(ctx context.Context, params *store.DeadLetterPurgeParams) (*store.DeadLetterPurgeResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	want := make(map[taskRef]bool, len(params.Letters))
	for _, l := range params.Letters {
		want[taskRef{run: l.RunID, task: l.Task}] = true
	}
	res := &store.DeadLetterPurgeResult{}
	s.dead = slices.DeleteFunc(s.dead, func(d taskRef) bool {
		if !want[d] {
			return false
		}
		delete(want, d) // a letter is listed once
		res.Purged++
		if r := s.runs[d.run]; r != nil {
			if i, ok := r.find(d.task); ok {
				r.dead = slices.DeleteFunc(r.dead, func(x int) bool { return x == i })
			}
		}
		return true
	})
	s.dead = fitted(s.dead)
	return res, nil
}

var _ store.DeadLetterGroupStore = (*Store)(nil)
