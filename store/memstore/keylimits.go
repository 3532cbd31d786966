package memstore

import (
	"container/heap"
	"time"

	"github.com/plaitdag/plait/store"
)

// Fleet-wide limits (see [store.Limiter]): the state of each limit key,
// kept in step with the tasks' statuses: a claim admits a task or holds it
// back (admitLocked), and the one status function releases its slots when
// its running attempt ends (releaseLimitsLocked). A task held back stays
// ready, out of the ready FIFOs, in its key's waiting FIFO. A running task
// given back unfinished keeps its place: the slots it frees are not handed
// to the waiting tasks, and it goes back to the head of its ready FIFO
// (keepSlotsLocked, requeueLocked).

// keyLimit is the state of one limit key.
type keyLimit struct {
	// holders are the running tasks that hold a concurrency slot.
	holders map[*task]struct{}
	// starts are the start times of the rate window, oldest first.
	starts []time.Time
	// waiting are the ready tasks held back on this key, oldest first.
	waiting fifo
	// wakeAt, when set, is when a task held back by the rate may start.
	wakeAt time.Time
}

// KeepsLimits declares that the store keeps task limits; see
// [store.Limiter].
func (s *Store) KeepsLimits() {}

var _ store.Limiter = (*Store)(nil)

func (s *Store) keyLimitLocked(key string) *keyLimit {
	l := s.limits[key]
	if l == nil {
		l = &keyLimit{holders: map[*task]struct{}{}}
		if s.limits == nil {
			s.limits = map[string]*keyLimit{}
		}
		s.limits[key] = l
	}
	return l
}

// admitLocked checks t's limits at now. When each allows, it takes t's
// slots and rate starts and reports true. Otherwise it holds t back on the
// first key that refuses, setting the key's wake-up time for a rate, and
// reports false; e is t's entry, its queue sequence kept.
func (s *Store) admitLocked(e entry, now time.Time) bool {
	t := e.t
	limits := t.spec().Limits
	if len(limits) == 0 {
		return true
	}
	for _, lim := range limits {
		l := s.keyLimitLocked(lim.Key)
		if lim.Concurrency > 0 && len(l.holders) >= lim.Concurrency {
			s.holdBackLocked(l, lim.Key, e, now)
			return false
		}
		if lim.Rate > 0 {
			cut := now.Add(-ceilDur(lim.Per))
			i := 0
			for i < len(l.starts) && !l.starts[i].After(cut) {
				i++
			}
			l.starts = l.starts[i:]
			if len(l.starts) >= lim.Rate {
				// The oldest start that must leave the window for one
				// more to fit.
				at := l.starts[len(l.starts)-lim.Rate].Add(ceilDur(lim.Per))
				if l.wakeAt.IsZero() || at.Before(l.wakeAt) {
					l.wakeAt = at
				}
				if s.rateWaits == nil {
					s.rateWaits = map[string]*keyLimit{}
				}
				s.rateWaits[lim.Key] = l
				s.holdBackLocked(l, lim.Key, e, now)
				return false
			}
		}
	}
	for _, lim := range limits {
		l := s.limits[lim.Key]
		if lim.Concurrency > 0 {
			l.holders[t] = struct{}{}
		}
		if lim.Rate > 0 {
			l.starts = append(l.starts, now)
			heap.Push(&s.rateExpiry, rateStart{at: now.Add(ceilDur(lim.Per)), start: now, key: lim.Key})
		}
	}
	return true
}

// rateStart is when (at) the start at start leaves the rate window of
// key.
type rateStart struct {
	at, start time.Time
	key       string
}

// rateHeap orders rate starts by when they leave their window, so a key
// nobody starts again is still forgotten once its window is empty.
type rateHeap []rateStart

func (h rateHeap) Len() int           { return len(h) }
func (h rateHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h rateHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rateHeap) Push(x any)        { *h = append(*h, x.(rateStart)) }
func (h *rateHeap) Pop() any {
	old := *h
	n := len(old) - 1
	x := old[n]
	*h = old[:n]
	return x
}

// expireStartsLocked drops the rate starts whose window has passed by now
// and forgets the keys left with nothing to remember.
func (s *Store) expireStartsLocked(now time.Time) {
	for len(s.rateExpiry) > 0 && !s.rateExpiry[0].at.After(now) {
		rs := heap.Pop(&s.rateExpiry).(rateStart)
		l := s.limits[rs.key]
		if l == nil {
			continue
		}
		i := 0
		for i < len(l.starts) && !l.starts[i].After(rs.start) {
			i++
		}
		l.starts = l.starts[i:]
		s.dropIdleLimitLocked(rs.key, l)
	}
}

// holdBackLocked parks t, popped from a ready FIFO, on l.
func (s *Store) holdBackLocked(l *keyLimit, key string, e entry, now time.Time) {
	l.waiting.push(e)
	e.t.limitedBy = key
	s.waitingEventLocked(e.t, store.WaitingForLimit(key), now)
}

// releaseLimitsLocked gives back the concurrency slots t holds as its
// running attempt ends, each once, and lets the oldest live task waiting
// on each freed key go back to the head of its ready FIFO. A task given
// back unfinished has already given its slots back (keepSlotsLocked) and
// wakes nobody.
func (s *Store) releaseLimitsLocked(t *task) {
	for _, lim := range t.spec().Limits {
		l := s.limits[lim.Key]
		if l == nil {
			continue
		}
		if _, held := l.holders[t]; !held {
			continue
		}
		delete(l.holders, t)
		s.wakeWaitingLocked(l, 1)
		s.dropIdleLimitLocked(lim.Key, l)
	}
}

// keepSlotsLocked gives back the concurrency slots t holds as its running
// attempt is given back unfinished (its lease lost, released at shutdown,
// returned unstarted), without waking the tasks waiting on its keys: t,
// put back at the head of its ready FIFO, is first in line for them. It
// reports whether t held a slot; the status move that follows finds none
// left to give back.
func (s *Store) keepSlotsLocked(t *task) bool {
	kept := false
	for _, lim := range t.spec().Limits {
		l := s.limits[lim.Key]
		if l == nil {
			continue
		}
		if _, held := l.holders[t]; !held {
			continue
		}
		delete(l.holders, t)
		kept = true
		s.dropIdleLimitLocked(lim.Key, l)
	}
	return kept
}

// requeueLocked makes t, whose running attempt was cut short (its lease
// lost, released at shutdown), ready again, queued now: at the head of its
// ready FIFO when it held concurrency slots, so it takes them again before
// the tasks waiting on its keys, and at the tail otherwise.
func (s *Store) requeueLocked(t *task, now time.Time) error {
	if !s.keepSlotsLocked(t) {
		return s.makeReadyLocked(t, now)
	}
	if err := s.returnLocked(t, now); err != nil {
		return err
	}
	t.queuedAt = now
	return nil
}

// wakeWaitingLocked puts up to n live tasks waiting on l back at the heads
// of their ready FIFOs, oldest first, so each goes before tasks readied
// after it; n < 0 means all of them.
func (s *Store) wakeWaitingLocked(l *keyLimit, n int) {
	var back []*task
	for n != 0 {
		e, ok := l.waiting.peek()
		if !ok {
			break
		}
		l.waiting.drop()
		back = append(back, e.t)
		n--
	}
	for i := len(back) - 1; i >= 0; i-- {
		t := back[i]
		t.limitedBy = ""
		t.qseq = s.nextSeqLocked()
		s.queueFor(t.route).ready[prioIndex(t.spec().Priority)].pushFront(entry{t: t, seq: t.qseq})
	}
	if len(back) > 0 {
		s.notifyLocked()
	}
}

// wakeRatesLocked lets the tasks held back by a rate whose window has
// moved on by now try again, and returns the earliest wake-up time still
// ahead (zero: none).
func (s *Store) wakeRatesLocked(now time.Time) time.Time {
	var next time.Time
	for key, l := range s.rateWaits {
		if !l.wakeAt.After(now) {
			l.wakeAt = time.Time{}
			delete(s.rateWaits, key)
			s.wakeWaitingLocked(l, -1)
			s.dropIdleLimitLocked(key, l)
			continue
		}
		if next.IsZero() || l.wakeAt.Before(next) {
			next = l.wakeAt
		}
	}
	return next
}

// dropIdleLimitLocked forgets a key with nothing to remember.
func (s *Store) dropIdleLimitLocked(key string, l *keyLimit) {
	if len(l.holders) == 0 && len(l.starts) == 0 && l.wakeAt.IsZero() {
		if _, ok := l.waiting.peek(); !ok {
			delete(s.limits, key)
		}
	}
}
