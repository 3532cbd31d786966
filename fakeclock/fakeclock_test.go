package fakeclock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var epoch = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// fired reports whether the timer has delivered, without blocking.
func fired(tm clock.Timer) (time.Time, bool) {
	select {
	case v := <-tm.C():
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestFakeNowAdvanceSet(t *testing.T) {
	t.Parallel()
	f := fakeclock.New(epoch)
	require.Equal(t, epoch, f.Now())
	f.Advance(time.Minute)
	require.Equal(t, epoch.Add(time.Minute), f.Now())
	f.Set(epoch.Add(time.Hour))
	require.Equal(t, epoch.Add(time.Hour), f.Now())
	// Set never moves backwards.
	f.Set(epoch)
	require.Equal(t, epoch.Add(time.Hour), f.Now())
}

func TestFakeTimersFireInDeadlineOrder(t *testing.T) {
	t.Parallel()
	f := fakeclock.New(epoch)
	t3 := f.NewTimer(3 * time.Second)
	t1 := f.NewTimer(1 * time.Second)
	t2 := f.NewTimer(2 * time.Second)
	require.Equal(t, 3, f.Timers())
	next, ok := f.NextDeadline()
	require.True(t, ok)
	require.Equal(t, epoch.Add(time.Second), next)

	f.Advance(999 * time.Millisecond)
	for _, tm := range []clock.Timer{t1, t2, t3} {
		_, ok := fired(tm)
		require.False(t, ok, "no timer is due yet")
	}

	f.Advance(time.Millisecond)
	v, ok := fired(t1)
	require.True(t, ok)
	require.Equal(t, epoch.Add(time.Second), v)
	_, ok = fired(t2)
	require.False(t, ok)
	_, ok = fired(t3)
	require.False(t, ok)
	require.Equal(t, 2, f.Timers())
	next, ok = f.NextDeadline()
	require.True(t, ok)
	require.Equal(t, epoch.Add(2*time.Second), next)

	f.Advance(time.Second)
	_, ok = fired(t2)
	require.True(t, ok)
	_, ok = fired(t3)
	require.False(t, ok)

	f.Set(epoch.Add(10 * time.Second))
	v, ok = fired(t3)
	require.True(t, ok)
	require.Equal(t, epoch.Add(10*time.Second), v)
	require.Equal(t, 0, f.Timers())
	_, ok = f.NextDeadline()
	require.False(t, ok)

	// A timer fires once.
	f.Advance(time.Hour)
	for _, tm := range []clock.Timer{t1, t2, t3} {
		_, ok := fired(tm)
		require.False(t, ok)
	}
}

func TestFakeAfterFuncRunsInDeadlineOrderAcrossAdvances(t *testing.T) {
	t.Parallel()
	f := fakeclock.New(epoch)
	var (
		mu    sync.Mutex
		order []int
	)
	done := make(chan int, 3)
	for _, n := range []int{3, 1, 2} {
		n := n
		tm := f.AfterFunc(time.Duration(n)*time.Second, func() {
			mu.Lock()
			order = append(order, n)
			mu.Unlock()
			done <- n
		})
		require.Nil(t, tm.C(), "AfterFunc timers have no channel")
	}
	for want := 1; want <= 3; want++ {
		f.Advance(time.Second)
		require.Equal(t, want, <-done)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []int{1, 2, 3}, order)
}

func TestFakeStop(t *testing.T) {
	t.Parallel()
	f := fakeclock.New(epoch)
	stopped := f.NewTimer(time.Second)
	kept := f.NewTimer(time.Second)
	ran := make(chan struct{}, 1)
	fn := f.AfterFunc(time.Second, func() { ran <- struct{}{} })

	require.True(t, stopped.Stop())
	require.False(t, stopped.Stop(), "second Stop reports nothing was stopped")
	require.True(t, fn.Stop())
	require.Equal(t, 1, f.Timers())

	f.Advance(time.Second)
	_, ok := fired(stopped)
	require.False(t, ok)
	_, ok = fired(kept)
	require.True(t, ok)
	require.False(t, kept.Stop(), "Stop after firing reports false")
	select {
	case <-ran:
		t.Fatal("stopped AfterFunc ran")
	default:
	}
	require.Equal(t, 0, f.Timers())
}

func TestFakeNonPositiveDurationFiresAtOnce(t *testing.T) {
	t.Parallel()
	f := fakeclock.New(epoch)
	tm := f.NewTimer(0)
	v, ok := fired(tm)
	require.True(t, ok)
	require.Equal(t, epoch, v)
	require.False(t, tm.Stop())

	neg := f.NewTimer(-time.Second)
	_, ok = fired(neg)
	require.True(t, ok)

	ran := make(chan struct{})
	f.AfterFunc(0, func() { close(ran) })
	<-ran
	require.Equal(t, 0, f.Timers())
}

func TestFakeWaitForTimers(t *testing.T) {
	t.Parallel()
	f := fakeclock.New(epoch)
	armed := make(chan clock.Timer)
	go func() { armed <- f.NewTimer(time.Minute) }()
	require.True(t, f.WaitForTimers(1, nil))
	tm := <-armed
	// Already satisfied: returns at once.
	require.True(t, f.WaitForTimers(1, nil))

	// Several timers armed concurrently.
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.AfterFunc(time.Hour, func() {})
		}()
	}
	require.True(t, f.WaitForTimers(5, nil))
	wg.Wait()

	// done unblocks a wait that cannot be satisfied.
	done := make(chan struct{})
	result := make(chan bool)
	go func() { result <- f.WaitForTimers(100, done) }()
	close(done)
	require.False(t, <-result)

	require.True(t, tm.Stop())
	require.Equal(t, 4, f.Timers())
}

func TestFakeConcurrentUse(t *testing.T) {
	t.Parallel()
	f := fakeclock.New(epoch)
	const n = 50
	fns := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			f.AfterFunc(time.Duration(i+1)*time.Millisecond, func() { fns <- struct{}{} })
		}(i)
	}
	wg.Wait()
	require.True(t, f.WaitForTimers(n, nil))
	f.Advance(time.Duration(n) * time.Millisecond)
	for i := 0; i < n; i++ {
		<-fns
	}
	require.Equal(t, 0, f.Timers())
}

func TestFakeWaitForDeadline(t *testing.T) {
	t.Parallel()
	f := fakeclock.New(epoch)
	f.NewTimer(time.Second)
	armed := make(chan clock.Timer)
	go func() { armed <- f.NewTimer(time.Minute) }()
	require.True(t, f.WaitForDeadline(epoch.Add(time.Minute), nil))
	tm := <-armed

	// A deadline no timer has: done ends the wait.
	done := make(chan struct{})
	result := make(chan bool)
	go func() { result <- f.WaitForDeadline(epoch.Add(time.Hour), done) }()
	close(done)
	require.False(t, <-result)

	// Once fired, the deadline is no longer pending.
	f.Advance(time.Minute)
	_, ok := fired(tm)
	require.True(t, ok)
	closed := make(chan struct{})
	close(closed)
	require.False(t, f.WaitForDeadline(epoch.Add(time.Minute), closed))
}
