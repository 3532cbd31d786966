package memstore

import "time"

// Every time the store answers is in UTC and a whole millisecond, as the
// Redis store keeps it (see the "# Time" section of [store.Store]): the
// clock is read cut down to the millisecond, a time a caller gives is kept
// cut down, and a duration added to now (a lease, a delay, a TTL, a rate
// window) is rounded up, as is a run-at time, so no due time or deadline
// comes earlier than asked.

// now reads the store's clock, cut down to the millisecond, in UTC.
func (s *Store) now() time.Time { return ms(s.clock.Now()) }

// ms cuts t down to the millisecond, in UTC; the zero time stays zero.
func ms(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return time.UnixMilli(t.UnixMilli()).UTC()
}

// ceilMs rounds t up to the millisecond, in UTC; the zero time stays zero.
func ceilMs(t time.Time) time.Time {
	c := ms(t)
	if c.Before(t) {
		c = c.Add(time.Millisecond)
	}
	return c
}

// ceilDur rounds d up to whole milliseconds; zero and negative are 0.
func ceilDur(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return (d + time.Millisecond - 1) / time.Millisecond * time.Millisecond
}
