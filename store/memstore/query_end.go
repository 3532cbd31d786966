package memstore

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// endIndex lists the finished runs in order of their end (ms), then of
// their number: the index of a filter by end time (store.RunFilter
// EndedFrom, EndedTo). setRunStatusLocked appends a run as it ends; runs
// end in the order of the store's clock, so the append is at the tail
// (endLocked keeps the order should the clock step back). An entry is
// live while its run is not removed and is still in the generation that
// ended then: a replay and a removal each leave one entry stale (gone
// counts them), and the list is compacted once half of it is stale, and
// dropped when all of it is, as the creation indexes are.
type endIndex struct {
	entries []endEntry
	gone    int
}

// endEntry is one end: the run, the end in ms since the Unix epoch, and
// the run's generation then.
type endEntry struct {
	r   *run
	end int64
	gen int64
}

func (e endEntry) live() bool {
	return !e.r.removed && e.r.rec.Status.Terminal() && e.r.rec.Generation == e.gen
}

// before reports whether e sorts before the position (end, num) in the
// list, oldest first.
func (e endEntry) before(end int64, num uint64) bool {
	return e.end < end || (e.end == end && e.r.num < num)
}

// endLocked files r, which just ended, in the end index.
func (s *Store) endLocked(r *run) {
	e := endEntry{r: r, end: r.rec.EndedAt.UnixMilli(), gen: r.rec.Generation}
	l := s.ended.entries
	i := len(l)
	for i > 0 && !l[i-1].before(e.end, r.num) {
		i--
	}
	if len(l) == cap(l) && len(l) >= 256 {
		// Doubled, where append would grow a long list by a quarter: a
		// run's end then costs about two entries' worth of allocation and
		// copy over the list's growth, not five.
		l = append(make([]endEntry, 0, 2*cap(l)), l...)
	}
	s.ended.entries = append(l, endEntry{})
	copy(s.ended.entries[i+1:], s.ended.entries[i:])
	s.ended.entries[i] = e
}

// unendLocked notes that r's entry went stale: r is removed, or a replay
// takes it out of its finished status.
func (s *Store) unendLocked() {
	ix := &s.ended
	ix.gone++
	if ix.gone >= len(ix.entries) {
		ix.entries, ix.gone = nil, 0
		return
	}
	if ix.gone*2 > len(ix.entries) {
		live := make([]endEntry, 0, len(ix.entries)-ix.gone)
		for _, e := range ix.entries {
			if e.live() {
				live = append(live, e)
			}
		}
		ix.entries, ix.gone = live, 0
	}
}

// endCursor reads a cursor "e<end ms>.<num>".
func endCursor(c string) (end int64, num uint64, err error) {
	bad := fmt.Errorf("memstore: query cursor %s: %w", ids.Quote(c), store.ErrInvalidArgument)
	rest, ok := strings.CutPrefix(c, "e")
	if !ok {
		return 0, 0, bad
	}
	a, b, ok := strings.Cut(rest, ".")
	if !ok {
		return 0, 0, bad
	}
	if end, err = strconv.ParseInt(a, 10, 64); err != nil {
		return 0, 0, bad
	}
	if num, err = strconv.ParseUint(b, 10, 64); err != nil {
		return 0, 0, bad
	}
	return end, num, nil
}

// runListByEnd lists the runs of a filter by end time, newest end first.
func (s *Store) runListByEnd(params *store.RunListParams) (*store.RunListResult, error) {
	f := &params.Filter
	var cEnd int64
	var cNum uint64
	if params.Cursor != "" {
		var err error
		if cEnd, cNum, err = endCursor(params.Cursor); err != nil {
			return nil, err
		}
	}
	from, to, ef, et := ms(f.CreatedFrom), ms(f.CreatedTo), ms(f.EndedFrom), ms(f.EndedTo)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.now())
	out := &store.RunListResult{}
	s.walkEndsLocked(f, from, to, ef, et, params.Cursor != "", cEnd, cNum, func(e endEntry) bool {
		if len(out.Runs) == params.Limit {
			last := out.Runs[len(out.Runs)-1]
			out.NextCursor = "e" + strconv.FormatInt(last.EndedAt.UnixMilli(), 10) + "." + strconv.FormatUint(s.runs[last.ID].num, 10)
			return false
		}
		out.Runs = append(out.Runs, e.r.snapshot())
		return true
	})
	return out, nil
}

// walkEndsLocked calls fn with each live entry matching f, newest end
// first, starting before (cEnd, cNum) when after is set, until fn answers
// false.
func (s *Store) walkEndsLocked(f *store.RunFilter, from, to, ef, et time.Time, after bool, cEnd int64, cNum uint64, fn func(endEntry) bool) {
	l := s.ended.entries
	i := len(l)
	if !et.IsZero() {
		i = sort.Search(len(l), func(i int) bool { return l[i].end >= et.UnixMilli() })
	}
	if after {
		i = min(i, sort.Search(len(l), func(i int) bool { return !l[i].before(cEnd, cNum) }))
	}
	for i--; i >= 0; i-- {
		e := l[i]
		if !ef.IsZero() && e.end < ef.UnixMilli() {
			return
		}
		if !e.live() || !match(e.r, f, from, to, ef, et) {
			continue
		}
		if !fn(e) {
			return
		}
	}
}
