package memstore

import (
	"time"

	"github.com/plaitdag/plait/internal/retention"
	"github.com/plaitdag/plait/store"
)

// RetentionDefault is how long a finished run is kept before it is freed:
// the same default as the Redis store's, so a run is readable for as long
// on either store.
const RetentionDefault = 24 * time.Hour

// WithRetention sets how long a finished run (its tasks, results, attempt
// records, idempotency key and index entries) is kept after it ends; after
// that, RunGet answers [store.ErrNotFound], queries no longer list it and
// its memory is freed. Defaults to RetentionDefault; zero means the
// default; a negative d keeps finished runs for the life of the store,
// which suits short tests only. [WithRetentionFor] overrides it per
// service and status.
func WithRetention(d time.Duration) Option {
	return func(s *Store) {
		if d != 0 {
			s.retention = d
		}
	}
}

// WithHistoryRetention keeps the attempt records of a finished run for d
// after it ends when d is longer than the run's own retention: once the
// run is freed (RunGet answers [store.ErrNotFound]), AttemptHistory still
// answers its records until then. Only the records are kept, not the run.
// Zero, the default, or a negative d keeps them with the run.
func WithHistoryRetention(d time.Duration) Option {
	return func(s *Store) { s.history = max(d, 0) }
}

// WithRetentionFor keeps the finished runs of service that ended in status
// for d, overriding [WithRetention] for them. An empty service means every
// service, an empty status every terminal status; the most specific rule
// wins (service and status, then service, then status). Zero d means the
// store's retention, negative d keeps them for the life of the store. A
// status that is not terminal, or a service that is not a valid name,
// matches no run, so the rule never applies (memstore options cannot fail).
// The retention of a run is settled when it ends.
func WithRetentionFor(service string, status store.RunStatus, d time.Duration) Option {
	return func(s *Store) {
		s.rules = append(s.rules, retentionRule{service, status, d})
	}
}

type retentionRule struct {
	service string
	status  store.RunStatus
	d       time.Duration
}

// buildRetention turns the options into the table retainLocked reads.
func (s *Store) buildRetention() {
	s.retain = retention.New(s.retention)
	for _, r := range s.rules {
		d := r.d
		if d == 0 {
			d = s.retention
		}
		s.retain.Set(r.service, string(r.status), d)
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
	if d < 0 {
		return
	}
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
	if freed > 0 {
		s.trimDeadLocked()
	}
	s.dropKeptLocked(now)
	return freed
}

// trimDeadLocked drops the entries of freed runs from the front of the
// global dead-letter list, which is in order of death, close to the order
// of expiry.
func (s *Store) trimDeadLocked() {
	k := 0
	for k < len(s.dead) && s.runs[s.dead[k].run] == nil {
		k++
	}
	s.dead = s.dead[k:]
}

// removeLocked forgets a run: its record, its idempotency key, its index
// entries and its count. An expiry list may still hold it; expireLocked
// skips it there.
func (s *Store) removeLocked(r *run) {
	delete(s.runs, r.rec.ID)
	if r.rec.Key != "" && s.keys[r.rec.Key] == r {
		delete(s.keys, r.rec.Key)
	}
	r.removed = true
	s.unindexLocked(r)
}

// unretainLocked takes r, which a replay reopens, out of the expiry list
// its retention put it in, so it is not freed while it runs again and can
// be appended again when it ends. A replay is rare: the walk along the list
// costs it alone.
func (s *Store) unretainLocked(r *run) {
	d := s.retain.For(r.rec.Service, string(r.rec.Status))
	l := s.expiry[d]
	if d < 0 || l == nil {
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
