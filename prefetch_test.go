package plait_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// claimSpy passes every call to its store and reports each claim: how many
// tasks were asked for and which runs came back.
type claimSpy struct {
	store.Store
	mu     sync.Mutex
	limits []int
	runs   chan string
	// hold, when set, runs after a claim returned from the store and
	// before the caller sees it.
	hold func(*store.TaskClaimResult)
}

func newClaimSpy(s store.Store) *claimSpy {
	return &claimSpy{Store: s, runs: make(chan string, 1024)}
}

func (c *claimSpy) saw(p *store.TaskClaimParams, res *store.TaskClaimResult) {
	c.mu.Lock()
	c.limits = append(c.limits, p.Limit)
	c.mu.Unlock()
	if res != nil {
		for _, ct := range res.Tasks {
			c.runs <- ct.Lease.RunID
		}
		if c.hold != nil {
			c.hold(res)
		}
	}
}

func (c *claimSpy) TaskClaim(ctx context.Context, p *store.TaskClaimParams) (*store.TaskClaimResult, error) {
	res, err := c.Store.TaskClaim(ctx, p)
	c.saw(p, res)
	return res, err
}

func (c *claimSpy) TaskFinishClaim(ctx context.Context, p *store.TaskFinishClaimParams) (*store.TaskFinishClaimResult, error) {
	res, err := c.Store.TaskFinishClaim(ctx, p)
	if err == nil && p.Claim.Limit > 0 {
		c.saw(&p.Claim, res.Claimed)
	}
	return res, err
}

// claimed waits until every run in ids has been claimed.
func (c *claimSpy) claimed(t *testing.T, ids ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for len(want) > 0 {
		delete(want, recv(t, c.runs))
	}
}

func (c *claimSpy) maxLimit() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := 0
	for _, l := range c.limits {
		m = max(m, l)
	}
	return m
}

// prefetchBundle is a scheduler with one handler slot and room for four
// tasks claimed ahead, its store wrapped by a claimSpy, and a "block"
// handler that holds its slot until cancelled. Its lease outlasts the one
// hour shutdown timeout: the tests move the clock past that timeout in one
// step, which would otherwise take every lease past its deadline too and
// have the attempts' lease timers cancel them before the shutdown does.
func prefetchBundle(t *testing.T, f storeFactory, opts ...plait.Option) (*bundle, *claimSpy, chan struct{}) {
	t.Helper()
	var spy *claimSpy
	b := setup(t, storeFactory{name: f.name, new: func(t *testing.T, clk *fakeclock.Clock) store.Store {
		spy = newClaimSpy(f.new(t, clk))
		return spy
	}}, append([]plait.Option{plait.WithConcurrency(1), plait.WithPrefetch(4), plait.WithShutdownTimeout(time.Hour), plait.WithLeaseDuration(2 * time.Hour)}, opts...)...)
	entered := make(chan struct{}, 8)
	b.handle(t, "noop", noop)
	b.handle(t, "block", blockUntilCancelled(entered, make(chan error, 8)))
	return b, spy, entered
}

func started(runID string) func(plait.Event) bool {
	return func(e plait.Event) bool { return e.Type == plait.EventTaskStarted && e.RunID == runID }
}

// fillSlot starts the scheduler, lets it see a handler that returns at
// once (on the fake clock), which makes claiming ahead pay, and fills its
// one slot with a task that blocks until cancelled.
func fillSlot(t *testing.T, b *bundle, entered <-chan struct{}) (busy *plait.Run) {
	t.Helper()
	b.start(t)
	b.wait(t, b.submit(t, plait.NewWorkflow("warm").Task("w", "noop", nil)).ID)
	busy = b.submit(t, plait.NewWorkflow("busy").Task("x", "block", nil))
	recv(t, entered)
	return busy
}

// hold submits n single-task runs and waits until the scheduler claimed
// them: with its slot full, they are held.
func hold(t *testing.T, b *bundle, spy *claimSpy, n int) []*plait.Run {
	t.Helper()
	runs := make([]*plait.Run, n)
	ids := make([]string, n)
	for i := range runs {
		runs[i] = b.submit(t, plait.NewWorkflow("held").Task("y", "noop", nil))
		ids[i] = runs[i].ID
	}
	spy.claimed(t, ids...)
	return runs
}

// stopPastShutdown stops the scheduler, moving the fake clock past its one
// hour shutdown timeout so a blocked handler is cancelled.
func (b *bundle) stopPastShutdown(t *testing.T) {
	t.Helper()
	stopped := make(chan struct{})
	go func() { b.stop(); close(stopped) }()
	b.advanceAfterArmed(t, time.Hour)
	recv(t, stopped)
}

func TestPrefetchHeldTasksGoBackUnstartedAtShutdown(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b, spy, entered := prefetchBundle(t, f)
		busy := fillSlot(t, b, entered)
		held := hold(t, b, spy, 2)
		h1, h2 := held[0], held[1]
		require.Greater(t, spy.maxLimit(), 1, "with its one slot busy and quick handlers, the process must claim ahead")

		stopped := make(chan struct{})
		go func() { b.stop(); close(stopped) }()
		released := func(e plait.Event) bool { return e.Type == plait.EventTaskReleased }
		b.events.waitFor(t, 2, released)
		for _, id := range []string{h1.ID, h2.ID} {
			run, err := b.s.RunGet(context.Background(), id)
			require.NoError(t, err)
			y := run.Task("y")
			require.Equal(t, plait.TaskReady, y.Status, "a task held at shutdown must go back to its queue")
			require.Zero(t, y.Attempt, "a task held at shutdown never started: its claim is undone")
			require.Empty(t, y.Attempts, "a task held at shutdown never started: no attempt recorded")
			require.Zero(t, b.events.count(started(id)), "a task held at shutdown must not start")
		}
		b.advanceAfterArmed(t, time.Hour)
		recv(t, stopped)
		run, err := b.s.RunGet(context.Background(), busy.ID)
		require.NoError(t, err)
		require.Equal(t, plait.TaskReady, run.Task("x").Status)
	})
}

func TestPrefetchHeldTaskOfCancelledRunNeverStarts(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b, spy, entered := prefetchBundle(t, f)
		busy := fillSlot(t, b, entered)
		held := hold(t, b, spy, 1)[0]
		_, err := b.s.RunCancel(context.Background(), held.ID)
		require.NoError(t, err)
		_, err = b.s.RunCancel(context.Background(), busy.ID)
		require.NoError(t, err)
		after := b.submit(t, plait.NewWorkflow("after").Task("z", "noop", nil))
		b.wait(t, after.ID)
		require.Zero(t, b.events.count(started(held.ID)), "a held task whose run was cancelled must not start")
		run := b.wait(t, held.ID)
		require.Equal(t, plait.RunCancelled, run.Status)
	})
}

func TestPrefetchWaitsWhileHandlersAreSlow(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b, spy, entered := prefetchBundle(t, f)
		// On the fake clock a store call takes no time, and this handler
		// takes 10ms: slower than the store.
		b.handle(t, "slow", func(ctx context.Context, _ *plait.Task) (any, error) {
			b.clock.Advance(10 * time.Millisecond)
			return nil, nil
		})
		b.start(t)
		b.wait(t, b.submit(t, plait.NewWorkflow("warm").Task("w", "slow", nil)).ID)
		var ids []string
		for i := 0; i < 3; i++ {
			ids = append(ids, b.submit(t, plait.NewWorkflow("busy").Task("x", "block", nil)).ID)
		}
		recv(t, entered)
		require.Equal(t, 1, spy.maxLimit(), "with slow handlers a process must claim only for its free slots")

		// Another process starts the two tasks the first did not hoard.
		// It runs on the real clock, so its shutdown timeout passes by itself.
		other, err := plait.New(b.store, plait.WithConcurrency(2), plait.WithObserver(b.events.add),
			plait.WithShutdownTimeout(time.Nanosecond), plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		require.NoError(t, err)
		require.NoError(t, other.Handle("block", blockUntilCancelled(entered, make(chan error, 8))))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- other.Run(ctx) }()
		recv(t, entered)
		recv(t, entered)
		cancel()
		require.NoError(t, recv(t, done))
		for _, id := range ids {
			require.Equal(t, 1, b.events.count(started(id)), "run %s: every task starts once, none waits behind the busy slot", id)
		}
		// The first process's slot is still busy: its stop cancels the
		// handler at the shutdown timeout.
		b.stopPastShutdown(t)
	})
}

func TestClaimCrossingACancelDoesNotStart(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b, spy, _ := prefetchBundle(t, f, plait.WithPrefetch(0))
		var target string
		arrived, resume := make(chan struct{}), make(chan struct{})
		var once sync.Once
		spy.hold = func(res *store.TaskClaimResult) {
			for _, ct := range res.Tasks {
				if ct.Lease.RunID == target {
					once.Do(func() { close(arrived); <-resume })
				}
			}
		}
		run := b.submit(t, plait.NewWorkflow("late").Task("x", "noop", nil))
		target = run.ID
		b.start(t)
		recv(t, (<-chan struct{})(arrived))
		// The claim has taken the task; the run is cancelled before the
		// claim's answer reaches the scheduler.
		_, err := b.s.RunCancel(context.Background(), run.ID)
		require.NoError(t, err)
		close(resume)
		after := b.submit(t, plait.NewWorkflow("after").Task("y", "noop", nil))
		b.wait(t, after.ID)
		require.Zero(t, b.events.count(started(run.ID)), "a task whose run was cancelled while its claim was on the way must not start")
	})
}

func TestPrefetchHeldTaskGoesBackAfterWaitingHoldMax(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b, spy, entered := prefetchBundle(t, f)
		fillSlot(t, b, entered)
		held := hold(t, b, spy, 1)[0]
		released := func(e plait.Event) bool { return e.Type == plait.EventTaskReleased && e.RunID == held.ID }
		b.advanceUntil(t, plait.HoldMax, released)
		run, err := b.s.RunGet(context.Background(), held.ID)
		require.NoError(t, err)
		require.Equal(t, plait.TaskReady, run.Task("y").Status, "a task held for HoldMax goes back to its queue")
		require.Empty(t, run.Task("y").Attempts, "a task held for HoldMax never started: no attempt recorded")
		require.Zero(t, b.events.count(started(held.ID)))

		// The process stopped claiming ahead: another process starts it.
		other, err := plait.New(b.store, plait.WithObserver(b.events.add), plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		require.NoError(t, err)
		require.NoError(t, other.Handle("noop", noop))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- other.Run(ctx) }()
		b.wait(t, held.ID)
		cancel()
		require.NoError(t, recv(t, done))
		require.Equal(t, 1, b.events.count(started(held.ID)))

		b.stopPastShutdown(t)
	})
}

// advanceUntil moves the clock by d whenever a timer due d from now is
// armed, until an event matching match is seen. The spy reports a claim
// before the scheduler holds its tasks, so the held-task watcher's tick
// that was armed already may come before they are held; the tick after it
// finds them.
func (b *bundle) advanceUntil(t *testing.T, d time.Duration, match func(plait.Event) bool) {
	t.Helper()
	deadline := time.After(failAfter)
	for b.events.count(match) == 0 {
		changed := b.events.next()
		if b.events.count(match) > 0 {
			return
		}
		armed, stop := make(chan struct{}), make(chan struct{})
		at := b.clock.Now().Add(d)
		go func() {
			if b.clock.WaitForDeadline(at, stop) {
				close(armed)
			}
		}()
		select {
		case <-armed:
			b.clock.Advance(d)
		case <-changed:
		case <-deadline:
			close(stop)
			t.Fatalf("no event matched; have %s", b.events.String())
		}
		close(stop)
	}
}

// next returns a channel closed at the next event.
func (r *recorder) next() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wake == nil {
		r.wake = make(chan struct{})
	}
	return r.wake
}
