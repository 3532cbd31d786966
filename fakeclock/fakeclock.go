// Package fakeclock is a clock for tests that you move by hand.
//
// Pass a [Clock] to plait.WithClock and to memstore.WithClock (or to
// redisstore.WithClock, which then stamps records with it instead of the
// server's TIME), and drive leases, retries, delays and timeouts with
// [Clock.Advance] instead of sleeping:
//
//	clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
//	store, err := memstore.New(memstore.WithClock(clk))
//	...
//	s, err := plait.New(store, plait.WithClock(clk))
//	...
//	clk.Advance(time.Minute) // a task delayed by a minute is now due
//
// A Clock is safe for concurrent use.
package fakeclock

import (
	"sort"
	"sync"
	"time"

	"github.com/plaitdag/plait/internal/clock"
)

// Clock is a manually driven clock for tests: Now stands still until
// [Clock.Advance] or [Clock.Set] moves it, and timers fire only then. Timers fire only when Advance or Set moves
// the time past their deadline. It is safe for concurrent use.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*fakeTimer
	changed chan struct{} // closed and replaced whenever the timer set changes
}

// New returns a Clock set to start.
func New(start time.Time) *Clock {
	return &Clock{now: start, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Clock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires when the fake time reaches now+d.
func (f *Clock) NewTimer(d time.Duration) clock.Timer {
	return f.add(d, nil, make(chan time.Time, 1))
}

// AfterFunc calls fn in its own goroutine when the fake time reaches now+d.
func (f *Clock) AfterFunc(d time.Duration, fn func()) clock.Timer {
	return f.add(d, fn, nil)
}

func (f *Clock) add(d time.Duration, fn func(), c chan time.Time) *fakeTimer {
	f.mu.Lock()
	t := &fakeTimer{clock: f, at: f.now.Add(d), fn: fn, c: c}
	if d <= 0 {
		f.mu.Unlock()
		t.fire(f.Now())
		return t
	}
	f.timers = append(f.timers, t)
	f.notifyLocked()
	f.mu.Unlock()
	return t
}

// Advance moves the time forward by d and fires every timer that is due.
func (f *Clock) Advance(d time.Duration) {
	f.mu.Lock()
	f.setLocked(f.now.Add(d))
}

// Set moves the time to t (never backwards) and fires every timer that is due.
func (f *Clock) Set(t time.Time) {
	f.mu.Lock()
	if t.Before(f.now) {
		t = f.now
	}
	f.setLocked(t)
}

// setLocked is called with mu held and releases it.
func (f *Clock) setLocked(t time.Time) {
	f.now = t
	var due, keep []*fakeTimer
	for _, tm := range f.timers {
		if !tm.at.After(t) {
			due = append(due, tm)
		} else {
			keep = append(keep, tm)
		}
	}
	f.timers = keep
	if len(due) > 0 {
		f.notifyLocked()
	}
	f.mu.Unlock()
	sort.Slice(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, tm := range due {
		tm.fire(t)
	}
}

// Timers reports how many timers are waiting to fire.
func (f *Clock) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// NextDeadline returns the earliest pending timer deadline, if any.
func (f *Clock) NextDeadline() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.timers) == 0 {
		return time.Time{}, false
	}
	min := f.timers[0].at
	for _, t := range f.timers[1:] {
		if t.at.Before(min) {
			min = t.at
		}
	}
	return min, true
}

// WaitForTimers blocks until at least n timers are pending or done is closed,
// and reports whether the count was reached. Tests use it to know that a
// background loop has armed its timer before they advance the clock.
func (f *Clock) WaitForTimers(n int, done <-chan struct{}) bool {
	return f.waitFor(func(timers []*fakeTimer) bool { return len(timers) >= n }, done)
}

// waitFor blocks until cond holds for the pending timers (checked with mu
// held) or done is closed, and reports whether cond held.
func (f *Clock) waitFor(cond func([]*fakeTimer) bool, done <-chan struct{}) bool {
	for {
		f.mu.Lock()
		if cond(f.timers) {
			f.mu.Unlock()
			return true
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return false
		}
	}
}

func (f *Clock) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *Clock) remove(t *fakeTimer) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, tm := range f.timers {
		if tm == t {
			f.timers = append(f.timers[:i], f.timers[i+1:]...)
			f.notifyLocked()
			return true
		}
	}
	return false
}

type fakeTimer struct {
	clock *Clock
	at    time.Time
	fn    func()
	c     chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }
func (t *fakeTimer) Stop() bool          { return t.clock.remove(t) }

func (t *fakeTimer) fire(now time.Time) {
	if t.fn != nil {
		go t.fn()
		return
	}
	select {
	case t.c <- now:
	default:
	}
}

// WaitForDeadline blocks until a pending timer is due exactly at at, or done
// is closed, and reports whether such a timer appeared. Tests use it to know
// that a specific wait (a backoff, a shutdown timeout) has been armed.
func (f *Clock) WaitForDeadline(at time.Time, done <-chan struct{}) bool {
	return f.waitFor(func(timers []*fakeTimer) bool {
		for _, t := range timers {
			if t.at.Equal(at) {
				return true
			}
		}
		return false
	}, done)
}
