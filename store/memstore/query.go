package memstore

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// The indexes of store.QueryStore: every run is listed, in order of
// creation, under "a" (all runs) and under each of "s:<service>",
// "u:<service>:<tenant>" and "w:<workflow>" that it has. Names cannot hold
// ':' (internal/ids), so the keys cannot collide. The lists hold no status:
// a run's status changes in place and a query reads it from the record,
// so a status change touches no index. A freed or deleted run is marked
// removed and skipped; its list is compacted once half of it is removed,
// and dropped when empty, so an index costs nothing once its runs are gone.

// runIndex lists runs in order of creation (their number ascending).
type runIndex struct {
	runs []*run
	// gone counts entries of removed runs still in runs.
	gone int
}

// indexKeys returns the keys of the indexes that list r.
func indexKeys(r *store.Run) []string {
	keys := make([]string, 1, 4)
	keys[0] = "a"
	if r.Service != "" {
		keys = append(keys, "s:"+r.Service)
		if r.Tenant != "" {
			keys = append(keys, "u:"+r.Service+":"+r.Tenant)
		}
	}
	return append(keys, "w:"+r.Workflow)
}

// filterKey returns the key of the index a filter reads.
func filterKey(f *store.RunFilter) string {
	switch {
	case f.Tenant != "":
		return "u:" + f.Service + ":" + f.Tenant
	case f.Service != "":
		return "s:" + f.Service
	case f.Workflow != "":
		return "w:" + f.Workflow
	}
	return "a"
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
	s.counts[r.rec.Status]--
	if s.counts[r.rec.Status] == 0 {
		delete(s.counts, r.rec.Status)
	}
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
// cursor is the number of the page's last run.
func (s *Store) RunList(ctx context.Context, params *store.RunListParams) (*store.RunListResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
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
	f := params.Filter
	from, to := ms(f.CreatedFrom), ms(f.CreatedTo)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.now())
	out := &store.RunListResult{}
	ix := s.indexes[filterKey(&f)]
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
		if r.removed || (!to.IsZero() && !r.rec.CreatedAt.Before(to)) {
			continue
		}
		if !from.IsZero() && r.rec.CreatedAt.Before(from) {
			break
		}
		if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, r.rec.Status) {
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

// RunCount counts runs per status. See [store.QueryStore.RunCount].
// Without a time range it reads the counts setRunStatusLocked keeps; with
// one it walks the runs created in the range.
func (s *Store) RunCount(ctx context.Context, params *store.RunCountParams) (*store.RunCountResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.now())
	out := &store.RunCountResult{Counts: map[store.RunStatus]int64{}}
	if params.CreatedFrom.IsZero() && params.CreatedTo.IsZero() {
		for st, n := range s.counts {
			out.Counts[st] = n
		}
		return out, nil
	}
	ix := s.indexes["a"]
	if ix == nil {
		return out, nil
	}
	from, to := ms(params.CreatedFrom), ms(params.CreatedTo)
	for i := len(ix.runs) - 1; i >= 0; i-- {
		r := ix.runs[i]
		if r.removed || (!to.IsZero() && !r.rec.CreatedAt.Before(to)) {
			continue
		}
		if !from.IsZero() && r.rec.CreatedAt.Before(from) {
			break
		}
		out.Counts[r.rec.Status]++
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
