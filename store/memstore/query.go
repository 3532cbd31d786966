package memstore

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// The indexes of store.QueryStore: every run is listed, in order of
// creation, under "a" (all runs) and under each of "s:<service>",
// "u:<service>:<tenant>", "t:<tenant>" and "w:<workflow>" that it has.
// Names cannot hold ':' (internal/ids), so the keys cannot collide. The
// lists hold no status: a run's status changes in place and a query reads
// it from the record, so a status change touches no index. A freed or
// deleted run is marked removed and skipped; its list is compacted once
// half of it is removed, and dropped when empty, so an index costs nothing
// once its runs are gone. Finished runs are listed by end time too
// (query_end.go).

// runIndex lists runs in order of creation (their number ascending).
type runIndex struct {
	runs []*run
	// gone counts entries of removed runs still in runs.
	gone int
}

// indexKeys returns the keys of the indexes that list r.
func indexKeys(r *store.Run) []string {
	keys := make([]string, 1, 5)
	keys[0] = "a"
	if r.Service != "" {
		keys = append(keys, "s:"+r.Service)
		if r.Tenant != "" {
			keys = append(keys, "u:"+r.Service+":"+r.Tenant)
		}
	}
	if r.Tenant != "" {
		keys = append(keys, "t:"+r.Tenant)
	}
	return append(keys, "w:"+r.Workflow)
}

// filterIndexLocked returns the creation index that answers f: the
// index of its tenant, service or workflow, else of all runs. A workflow
// with a service or a tenant reads the smaller of the two indexes (match
// checks the other name); nil when an index it needs is empty.
func (s *Store) filterIndexLocked(f *store.RunFilter) *runIndex {
	key := "a"
	switch {
	case f.Tenant != "" && f.Service != "":
		key = "u:" + f.Service + ":" + f.Tenant
	case f.Tenant != "":
		key = "t:" + f.Tenant
	case f.Service != "":
		key = "s:" + f.Service
	case f.Workflow != "":
		return s.indexes["w:"+f.Workflow]
	}
	ix := s.indexes[key]
	if f.Workflow != "" && ix != nil {
		if w := s.indexes["w:"+f.Workflow]; w == nil || len(w.runs)-w.gone < len(ix.runs)-ix.gone {
			return w
		}
	}
	return ix
}

// match reports whether run r passes every field of f; from and to are
// the creation bounds cut to the millisecond, ef and et the end bounds.
func match(r *run, f *store.RunFilter, from, to, ef, et time.Time) bool {
	rec := &r.rec
	if r.removed ||
		(f.Service != "" && rec.Service != f.Service) ||
		(f.Tenant != "" && rec.Tenant != f.Tenant) ||
		(f.Workflow != "" && rec.Workflow != f.Workflow) ||
		(len(f.Statuses) > 0 && !slices.Contains(f.Statuses, rec.Status)) ||
		(!from.IsZero() && rec.CreatedAt.Before(from)) ||
		(!to.IsZero() && !rec.CreatedAt.Before(to)) {
		return false
	}
	if !ef.IsZero() || !et.IsZero() {
		if !rec.Status.Terminal() || (!ef.IsZero() && rec.EndedAt.Before(ef)) || (!et.IsZero() && !rec.EndedAt.Before(et)) {
			return false
		}
	}
	if f.ErrorPrefix == "" {
		return true
	}
	for i := range r.tasks {
		if strings.HasPrefix(r.tasks[i].inst.Error, f.ErrorPrefix) {
			return true
		}
	}
	return false
}

// indexLocked lists a new run, the newest, at the end of its indexes.
func (s *Store) indexLocked(r *run) {
	for _, k := range indexKeys(&r.rec) {
		ix := s.indexes[k]
		if ix == nil {
			ix = &runIndex{}
			s.indexes[k] = ix
		}
		ix.runs = append(ix.runs, r)
	}
}

// unindexLocked forgets a removed run in its indexes and its count.
func (s *Store) unindexLocked(r *run) {
	s.counts.add(r.rec.Status, -1)
	for _, k := range indexKeys(&r.rec) {
		ix := s.indexes[k]
		if ix == nil {
			continue
		}
		ix.gone++
		if ix.gone == len(ix.runs) {
			delete(s.indexes, k)
			s.indexes = shrunk(s.indexes, &s.peak.indexes)
			continue
		}
		if ix.gone*2 > len(ix.runs) {
			// a new array: compacted in place, the list would keep the
			// room of its peak.
			live := make([]*run, 0, len(ix.runs)-ix.gone)
			for _, r := range ix.runs {
				if !r.removed {
					live = append(live, r)
				}
			}
			ix.runs, ix.gone = live, 0
		}
	}
}

// RunList lists runs newest first. See [store.QueryStore.RunList]. The
// cursor is the number of the page's last run ("m<num>"), or its end and
// number ("e<end ms>.<num>") for a filter by end time (query_end.go). The
// memory store reads as far as the page needs: its indexes are in memory.
func (s *Store) RunList(ctx context.Context, params *store.RunListParams) (*store.RunListResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	f := &params.Filter
	if f.ByEnd() {
		return s.runListByEnd(params)
	}
	before := uint64(0)
	if params.Cursor != "" {
		n, err := strconv.ParseUint(strings.TrimPrefix(params.Cursor, "m"), 10, 64)
		if err != nil || !strings.HasPrefix(params.Cursor, "m") {
			return nil, fmt.Errorf("memstore: query cursor %s: %w", ids.Quote(params.Cursor), store.ErrInvalidArgument)
		}
		before = n
	}
	// Runs are created on whole milliseconds; the bounds are read cut down
	// to the millisecond too, as the Redis store reads them.
	from, to := ms(f.CreatedFrom), ms(f.CreatedTo)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.now())
	out := &store.RunListResult{}
	ix := s.filterIndexLocked(f)
	if ix == nil {
		return out, nil
	}
	i := len(ix.runs)
	if before > 0 {
		i = sort.Search(len(ix.runs), func(i int) bool { return ix.runs[i].num >= before })
	}
	var last *run
	for i--; i >= 0; i-- {
		r := ix.runs[i]
		if !from.IsZero() && !r.removed && r.rec.CreatedAt.Before(from) {
			break
		}
		if !match(r, f, from, to, time.Time{}, time.Time{}) {
			continue
		}
		if len(out.Runs) == params.Limit {
			// One more match exists: the page gets a cursor.
			out.NextCursor = "m" + strconv.FormatUint(last.num, 10)
			break
		}
		out.Runs = append(out.Runs, r.snapshot())
		last = r
	}
	return out, nil
}

// RunGetMany returns runs by id, nil for a missing one. See
// [store.QueryStore.RunGetMany].
func (s *Store) RunGetMany(ctx context.Context, params *store.RunGetManyParams) (*store.RunGetManyResult, error) {
	if len(params.IDs) > store.GetManyMax {
		return nil, fmt.Errorf("memstore: %d ids, want at most %d: %w", len(params.IDs), store.GetManyMax, store.ErrInvalidArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.now())
	out := &store.RunGetManyResult{Runs: make([]*store.Run, len(params.IDs))}
	for i, id := range params.IDs {
		if r := s.runs[id]; r != nil {
			out.Runs[i] = r.snapshot()
		}
	}
	return out, nil
}

// RunDelete removes a finished run. See [store.QueryStore.RunDelete].
func (s *Store) RunDelete(ctx context.Context, params *store.RunDeleteParams) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runLocked(params.ID)
	if err != nil {
		return err
	}
	if !r.rec.Status.Terminal() {
		return fmt.Errorf("memstore: delete run %s (%s): %w", r.rec.ID, r.rec.Status, store.ErrRunActive)
	}
	// its letters go now, not once freed runs' letters are half the list
	// (removeLocked).
	s.dead = fitted(slices.DeleteFunc(s.dead, func(d taskRef) bool { return d.run == r.rec.ID }))
	r.dead = nil
	s.removeLocked(r)
	return nil
}

// RunPrune frees the runs whose retention is over. See
// [store.QueryStore.RunPrune]. The memory store frees them whenever it is
// used (expireLocked), index entries included, so a pass finds little.
func (s *Store) RunPrune(ctx context.Context, params *store.RunPruneParams) (*store.RunPruneResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if params.Limit < 1 {
		return nil, fmt.Errorf("memstore: prune limit %d: %w", params.Limit, store.ErrInvalidArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return &store.RunPruneResult{Pruned: s.expireLocked(s.now())}, nil
}

// TaskList lists the tasks of one run. See [store.QueryStore.TaskList].
func (s *Store) TaskList(ctx context.Context, params *store.TaskListParams) (*store.TaskListResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runLocked(params.RunID)
	if err != nil {
		return nil, err
	}
	tasks := r.snapshot().Tasks
	if len(params.Statuses) > 0 {
		tasks = slices.DeleteFunc(tasks, func(t store.TaskInstance) bool { return !slices.Contains(params.Statuses, t.Status) })
	}
	return &store.TaskListResult{Tasks: tasks}, nil
}

// indexSizes reports the number of indexes and of their entries, for the
// tests that check that retention brings memory back to its baseline.
func (s *Store) indexSizes() (indexes, entries int, expiry int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ix := range s.indexes {
		entries += len(ix.runs)
	}
	return len(s.indexes), entries, len(s.expiry)
}
