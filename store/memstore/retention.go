package memstore

import "time"

// RetentionDefault is how long a finished run is kept before it is freed:
// the same default as the Redis store's, so a run is readable for as long
// on either store.
const RetentionDefault = 24 * time.Hour

// WithRetention sets how long a finished run (its tasks, results, attempt
// records and idempotency key) is kept after it ends; after that, RunGet
// answers [plait.ErrNotFound] and its memory is freed. Defaults to
// RetentionDefault; zero means the default; a negative d keeps finished runs
// for the life of the store, which suits short tests only.
func WithRetention(d time.Duration) Option {
	return func(s *Store) {
		if d != 0 {
			s.retention = d
		}
	}
}

// retainLocked starts the retention of r, which just ended. Runs end in the
// order of the store's clock, so appending keeps the list in expiry order;
// the list runs through the runs themselves, so ending a run allocates
// nothing.
func (s *Store) retainLocked(r *run, now time.Time) {
	if s.retention < 0 {
		return
	}
	r.expireAt = now.Add(s.retention)
	if s.expireTail == nil {
		s.expireHead = r
	} else {
		s.expireTail.expireNext = r
	}
	s.expireTail = r
}

// expireLocked frees the runs whose retention is over. It runs at the start
// of the steps that look runs up for a caller or add them, so memory is
// reclaimed as the store is used, with no goroutine of its own: its cost is
// one comparison when nothing is due.
func (s *Store) expireLocked(now time.Time) {
	freed := false
	for r := s.expireHead; r != nil && r.expireAt.Before(now); r = s.expireHead {
		delete(s.runs, r.rec.ID)
		if r.rec.Key != "" && s.keys[r.rec.Key] == r {
			delete(s.keys, r.rec.Key)
		}
		s.expireHead = r.expireNext
		r.expireNext = nil
		freed = true
	}
	if s.expireHead == nil {
		s.expireTail = nil
	}
	if !freed {
		return
	}
	// The global dead-letter list is in order of death, which is close to
	// the order of expiry: drop the entries of freed runs from its front.
	k := 0
	for k < len(s.dead) && s.runs[s.dead[k].run] == nil {
		k++
	}
	s.dead = s.dead[k:]
}
