package memstore

import (
	"context"
	"time"

	"github.com/plaitdag/plait/store"
)

// RunCount counts the runs of a filter per status. See
// [store.QueryStore.RunCount]. With no filter but statuses it reads the
// counts setRunStatusLocked keeps; with a filter the indexes answer alone
// (store.RunFilter.CountIndexed) it walks the runs of its time range,
// whatever their number, as the Redis store's ZCOUNTs count them exactly;
// any other filter reads at most the count's limit of index entries and
// answers Capped when entries were left.
func (s *Store) RunCount(ctx context.Context, params *store.RunCountParams) (*store.RunCountResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	f := &params.Filter
	budget := -1
	if !f.CountIndexed() {
		budget = params.ReadLimit()
	}
	from, to, ef, et := ms(f.CreatedFrom), ms(f.CreatedTo), ms(f.EndedFrom), ms(f.EndedTo)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.now())
	out := &store.RunCountResult{Counts: map[store.RunStatus]int64{}}
	if f.CountIndexed() && !f.ByEnd() && from.IsZero() && to.IsZero() {
		s.counts.each(func(st store.RunStatus, n int64) {
			if len(f.Statuses) == 0 || containsStatus(f.Statuses, st) {
				out.Counts[st] = n
			}
		})
		return out, nil
	}
	// each reads one index entry; it answers false once the budget is
	// spent with entries left.
	read := 0
	each := func(r *run) bool {
		if read == budget {
			out.Capped = true
			return false
		}
		read++
		return true
	}
	if f.ByEnd() {
		s.walkEndsLocked(&store.RunFilter{}, time.Time{}, time.Time{}, ef, et, false, 0, 0, func(e endEntry) bool {
			if !each(e.r) {
				return false
			}
			if match(e.r, f, from, to, ef, et) {
				out.Counts[e.r.rec.Status]++
			}
			return true
		})
		return out, nil
	}
	ix := s.filterIndexLocked(f)
	if ix == nil {
		return out, nil
	}
	for i := len(ix.runs) - 1; i >= 0; i-- {
		r := ix.runs[i]
		if r.removed || (!to.IsZero() && !r.rec.CreatedAt.Before(to)) {
			continue
		}
		if !from.IsZero() && r.rec.CreatedAt.Before(from) {
			break
		}
		if !each(r) {
			break
		}
		if match(r, f, from, to, ef, et) {
			out.Counts[r.rec.Status]++
		}
	}
	return out, nil
}

func containsStatus(sts []store.RunStatus, st store.RunStatus) bool {
	for _, s := range sts {
		if s == st {
			return true
		}
	}
	return false
}
