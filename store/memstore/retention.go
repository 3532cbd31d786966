package memstore

import (
	"slices"
	"time"

	"github.com/plaitdag/plait/internal/retention"
)

// buildRetention turns the options into the table retainLocked reads.
func (s *Store) buildRetention() {
	s.retain = retention.New(s.cfg.retention)
	for _, r := range s.cfg.rules {
		s.retain.Set(r.service, string(r.status), r.d)
	}
}

// expiryList holds the finished runs of one retention, in the order they
// are freed: runs end in the order of the store's clock, so appending
// keeps each list in expiry order, and a few lists (one per distinct
// retention) keep the whole store in order without a heap. The list runs
// through the runs themselves, so ending a run allocates nothing.
type expiryList struct {
	head, tail *run
}

// retainLocked starts the retention of r, which just ended.
func (s *Store) retainLocked(r *run, now time.Time) {
	d := s.retain.For(r.rec.Service, string(r.rec.Status))
	l := s.expiry[d]
	if l == nil {
		l = &expiryList{}
		s.expiry[d] = l
	}
	r.expireAt = now.Add(d)
	if l.tail == nil {
		l.head = r
	} else {
		l.tail.expireNext = r
	}
	l.tail = r
}

// expireLocked frees the runs whose retention is over, with their index
// entries, and reports how many it freed. It runs at the start of the
// steps that look runs up for a caller or add them, so memory is reclaimed
// as the store is used, with no goroutine of its own: its cost is one
// comparison per distinct retention when nothing is due.
func (s *Store) expireLocked(now time.Time) int {
	freed := 0
	for d, l := range s.expiry {
		for r := l.head; r != nil && r.expireAt.Before(now); r = l.head {
			if !r.removed {
				s.keepHistoryLocked(r)
				s.removeLocked(r)
				freed++
			}
			l.head = r.expireNext
			r.expireNext = nil
		}
		if l.head == nil {
			delete(s.expiry, d)
		}
	}
	s.dropKeptLocked(now)
	s.forgetMemosLocked(now)
	return freed
}

// removeLocked forgets a run: its record, its idempotency key, its index
// entries, its count and its dead letters. An expiry list may still hold
// it; expireLocked skips it there.
func (s *Store) removeLocked(r *run) {
	delete(s.runs, r.rec.ID)
	s.runs = shrunk(s.runs, &s.peak.runs)
	if r.rec.Key != "" && s.keys[r.rec.Key] == r {
		delete(s.keys, r.rec.Key)
		s.keys = shrunk(s.keys, &s.peak.keys)
	}
	r.removed = true
	s.unindexLocked(r)
	if r.rec.Status.Terminal() {
		s.unendLocked()
	}
	s.deadGone += len(r.dead)
	if s.deadGone > 0 && s.deadGone*2 >= len(s.dead) {
		s.dead = fitted(slices.DeleteFunc(s.dead, func(d taskRef) bool { return s.runs[d.run] == nil }))
		s.deadGone = 0
	}
}

// unretainLocked takes r, which a replay reopens, out of the expiry list
// its retention put it in, so it is not freed while it runs again and can
// be appended again when it ends. A replay is rare: the walk along the list
// costs it alone.
func (s *Store) unretainLocked(r *run) {
	d := s.retain.For(r.rec.Service, string(r.rec.Status))
	l := s.expiry[d]
	if l == nil {
		return
	}
	var prev *run
	for cur := l.head; cur != nil; prev, cur = cur, cur.expireNext {
		if cur != r {
			continue
		}
		if prev == nil {
			l.head = r.expireNext
		} else {
			prev.expireNext = r.expireNext
		}
		if l.tail == r {
			l.tail = prev
		}
		if l.head == nil {
			delete(s.expiry, d)
		}
		break
	}
	r.expireNext = nil
	r.expireAt = time.Time{}
}
