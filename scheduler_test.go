package plait_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

func TestDiamondPassesResults(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		b.handle(t, "num", plait.Typed(func(ctx context.Context, t *plait.Task, in int) (int, error) { return in, nil }))
		b.handle(t, "sum", func(ctx context.Context, t *plait.Task) (any, error) {
			total := 0
			for _, p := range t.Parents() {
				v, err := plait.ParentValue[int](t, p)
				if err != nil {
					return nil, err
				}
				total += v
			}
			return total, nil
		})
		wf := plait.NewWorkflow("diamond").
			Task("a", "num", 1).
			Task("b", "num", 20, plait.After("a")).
			Task("c", "num", 300, plait.After("a")).
			Task("d", "sum", nil, plait.After("b", "c"))
		run := b.submit(t, wf)
		b.start(t)
		final := b.wait(t, run.ID)
		require.Equal(t, plait.RunCompleted, final.Status, "a diamond of succeeding tasks must complete")
		sum, err := plait.ResultValue[int](final, "d", nil)
		require.NoError(t, err)
		require.Equal(t, 320, sum, "a child must read every parent's result")
		require.Equal(t, 4, final.Succeeded)
	})
}

func TestRetryWithBackoffOnFakeClock(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		var calls atomic.Int32
		b.handle(t, "flaky", func(ctx context.Context, t *plait.Task) (any, error) {
			if calls.Add(1) < 3 {
				return nil, errors.New("not yet")
			}
			return "ok", nil
		})
		policy := plait.ConstantBackoff(10 * time.Second)
		policy.Jitter = -1
		run := b.submit(t, plait.NewWorkflow("retry").Task("x", "flaky", nil, plait.Retry(2), plait.Backoff(policy)))
		b.start(t)
		for attempt := 1; attempt <= 2; attempt++ {
			ev := b.events.waitFor(t, attempt, is(plait.EventTaskRetrying, "x"))
			require.Equal(t, 10*time.Second, ev.RetryIn, "a constant backoff without jitter must wait exactly its interval")
			require.Equal(t, attempt, ev.Attempt)
			got, err := b.s.RunGet(context.Background(), run.ID)
			require.NoError(t, err)
			require.Equal(t, plait.TaskRetrying, got.Task("x").Status, "a failed attempt with retries left must wait as retrying")
			b.advanceAfterArmed(t, 10*time.Second)
		}
		final := b.wait(t, run.ID)
		x := final.Task("x")
		require.Equal(t, plait.TaskSucceeded, x.Status)
		require.Equal(t, 3, x.Attempt, "the third attempt must be numbered 3")
		require.Len(t, x.Attempts, 3, "each attempt must leave an execution record")
		require.Equal(t, "retry", x.Attempts[0].Outcome)
		require.Equal(t, "not yet", x.Attempts[0].Error)
	})
}

func TestRetryExhaustedFailsRun(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		b.handle(t, "bad", func(ctx context.Context, t *plait.Task) (any, error) { return nil, errors.New("boom") })
		b.handle(t, "noop", noop)
		run := b.submit(t, plait.NewWorkflow("fail").
			Task("x", "bad", nil, plait.Retry(0)).
			Task("after", "noop", nil, plait.After("x")).
			Task("cleanup", "noop", nil, plait.AfterFailure("x")))
		b.start(t)
		final := b.wait(t, run.ID)
		require.Equal(t, plait.RunFailed, final.Status)
		require.Equal(t, plait.TaskFailed, final.Task("x").Status)
		require.Equal(t, "boom", final.Task("x").Error)
		require.Equal(t, plait.TaskSkipped, final.Task("after").Status, "an OnSuccess child of a failed task must be skipped")
		require.Equal(t, plait.TaskSucceeded, final.Task("cleanup").Status, "an OnFailure child of a failed task must run")
	})
}

func TestPermanentErrorIsNotRetried(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		var calls atomic.Int32
		b.handle(t, "perm", func(ctx context.Context, t *plait.Task) (any, error) {
			calls.Add(1)
			return nil, plait.Permanent(errors.New("bad input"))
		})
		run := b.submit(t, plait.NewWorkflow("perm").Task("x", "perm", nil, plait.Retry(5)))
		b.start(t)
		final := b.wait(t, run.ID)
		require.Equal(t, plait.TaskFailed, final.Task("x").Status)
		require.Equal(t, int32(1), calls.Load(), "a permanent error must not be retried")
	})
}

func TestTimeoutCancelsHandler(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		entered, causes := make(chan struct{}, 1), make(chan error, 1)
		b.handle(t, "slow", blockUntilCancelled(entered, causes))
		run := b.submit(t, plait.NewWorkflow("timeout").Task("x", "slow", nil, plait.Timeout(5*time.Second), plait.Retry(0)))
		b.start(t)
		recv(t, entered)
		b.advanceAfterArmed(t, 5*time.Second)
		require.ErrorIs(t, recv(t, causes), plait.ErrTimeout, "the handler's context must be cancelled with ErrTimeout")
		final := b.wait(t, run.ID)
		require.Equal(t, plait.TaskFailed, final.Task("x").Status)
		require.Contains(t, final.Task("x").Error, "timed out")
	})
}

func TestPanicIsRecordedAsFailedAttempt(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		b.handle(t, "panics", func(ctx context.Context, t *plait.Task) (any, error) { panic("kaboom") })
		run := b.submit(t, plait.NewWorkflow("panic").Task("x", "panics", nil, plait.Retry(0)))
		b.start(t)
		final := b.wait(t, run.ID)
		x := final.Task("x")
		require.Equal(t, plait.TaskFailed, x.Status, "a panic must count as a failed attempt")
		require.Contains(t, x.Error, "kaboom")
		require.Contains(t, x.Error, "goroutine", "the panic's stack must be recorded")
		ev := b.events.waitFor(t, 1, is(plait.EventTaskFailed, "x"))
		require.Contains(t, ev.Err.Error(), "panicked")
	})
}

func TestCancelRunCancelsRunningHandler(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		entered, causes := make(chan struct{}, 1), make(chan error, 1)
		b.handle(t, "slow", blockUntilCancelled(entered, causes))
		b.handle(t, "noop", noop)
		run := b.submit(t, plait.NewWorkflow("cancel").
			Task("x", "slow", nil).
			Task("y", "noop", nil, plait.After("x")))
		b.start(t)
		recv(t, entered)
		got, err := b.s.RunCancel(context.Background(), run.ID)
		require.NoError(t, err)
		require.Equal(t, plait.RunCancelled, got.Status)
		require.ErrorIs(t, recv(t, causes), plait.ErrRunCancelled, "cancelling a run must cancel its running handlers")
		final := b.wait(t, run.ID)
		require.Equal(t, plait.RunCancelled, final.Status)
		require.Equal(t, plait.TaskCancelled, final.Task("x").Status)
		require.Equal(t, plait.TaskCancelled, final.Task("y").Status)
	})
}

func TestStopStrategyCancelsSiblings(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f, plait.WithConcurrency(2))
		entered, causes := make(chan struct{}, 1), make(chan error, 1)
		release := make(chan struct{})
		b.handle(t, "slow", blockUntilCancelled(entered, causes))
		b.handle(t, "bad", func(ctx context.Context, t *plait.Task) (any, error) {
			<-release
			return nil, errors.New("boom")
		})
		b.handle(t, "noop", noop)
		run := b.submit(t, plait.NewWorkflow("stop", plait.OnError(plait.StrategyStop)).
			Task("slow", "slow", nil).
			Task("bad", "bad", nil, plait.Retry(0)).
			Task("later", "noop", nil, plait.After("bad")))
		b.start(t)
		recv(t, entered)
		close(release)
		require.ErrorIs(t, recv(t, causes), plait.ErrRunCancelled, "the stop strategy must cancel running siblings")
		final := b.wait(t, run.ID)
		require.Equal(t, plait.RunFailed, final.Status)
		require.Equal(t, plait.TaskCancelled, final.Task("slow").Status)
		require.Equal(t, plait.TaskCancelled, final.Task("later").Status)
	})
}

func TestPriorityUrgentBeforeLow(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f, plait.WithConcurrency(1))
		order := make(chan string, 8)
		b.handle(t, "rec", func(ctx context.Context, t *plait.Task) (any, error) {
			order <- t.RunID + "/" + t.Name
			return nil, nil
		})
		low := b.submit(t, plait.NewWorkflow("low").Task("l", "rec", nil, plait.WithPriority(plait.PriorityLow)))
		normal := b.submit(t, plait.NewWorkflow("normal").Task("n", "rec", nil))
		urgent := b.submit(t, plait.NewWorkflow("urgent").Task("u", "rec", nil, plait.WithPriority(plait.PriorityUrgent)))
		high := b.submit(t, plait.NewWorkflow("high").Task("h", "rec", nil, plait.WithPriority(plait.PriorityHigh)))
		b.start(t)
		want := []string{urgent.ID + "/u", high.ID + "/h", normal.ID + "/n", low.ID + "/l"}
		for i, w := range want {
			require.Equal(t, w, recv(t, order), "claim %d must follow priority order", i)
		}
	})
}

func TestDelayedTaskWaitsForClock(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		b.handle(t, "noop", noop)
		run := b.submit(t, plait.NewWorkflow("delayed").Task("x", "noop", nil, plait.Delay(time.Minute)))
		b.start(t)
		due := epoch.Add(time.Minute)
		b.waitArmed(t, due)
		// A claim takes its lease from the time it was sent: one in flight
		// across an advance (the Redis store's idle wait wakes the drivers
		// on its own) would start a lease the jump expired at once. The
		// clock moves only while no store call is on its way.
		b.calls.waitIdle(t)
		b.clock.Advance(due.Sub(b.clock.Now()) - time.Second)
		got, err := b.s.RunGet(context.Background(), run.ID)
		require.NoError(t, err)
		require.Equal(t, plait.TaskPending, got.Task("x").Status, "a delayed task must not start before its time")
		require.Zero(t, b.events.count(is(plait.EventTaskStarted, "x")))
		b.calls.waitIdle(t)
		b.clock.Advance(time.Second)
		final := b.wait(t, run.ID)
		require.Equal(t, plait.TaskSucceeded, final.Task("x").Status)
		require.False(t, final.Task("x").StartedAt.Before(due), "a delayed task must start at or after its due time")
	})
}

func TestIdempotentSubmit(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		b.handle(t, "noop", noop)
		wf := plait.NewWorkflow("once").Task("x", "noop", nil)
		first := b.submit(t, wf, plait.WithRunKey("order-42"))
		second := b.submit(t, wf, plait.WithRunKey("order-42"))
		require.Equal(t, first.ID, second.ID, "submitting the same key twice must return the existing run")
		other := b.submit(t, wf, plait.WithRunKey("order-43"))
		require.NotEqual(t, first.ID, other.ID)
	})
}

func TestSubmitRejectsBadInputBeforeWriting(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		b.handle(t, "noop", noop)
		_, err := b.s.Submit(context.Background(), plait.NewWorkflow("x").Task("a", "missing", nil))
		require.ErrorIs(t, err, plait.ErrUnknownHandler)
		_, err = b.s.Submit(context.Background(), plait.NewWorkflow("x").
			Task("a", "noop", nil, plait.After("b")).
			Task("b", "noop", nil, plait.After("a")))
		require.ErrorIs(t, err, plait.ErrCycle)
		_, err = b.s.Submit(context.Background(), plait.NewWorkflow("x").Task("a", "noop", nil), plait.WithRunKey("bad:key"))
		require.ErrorIs(t, err, plait.ErrInvalidID)
		// Nothing was written: the first run ever created gets the first id.
		run := b.submit(t, plait.NewWorkflow("ok").Task("a", "noop", nil))
		_, err = b.s.RunGet(context.Background(), run.ID)
		require.NoError(t, err)
	})
}

func TestGracefulShutdownReleasesUnfinished(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f, plait.WithShutdownTimeout(3*time.Second))
		entered, causes := make(chan struct{}, 1), make(chan error, 1)
		b.handle(t, "slow", blockUntilCancelled(entered, causes))
		run := b.submit(t, plait.NewWorkflow("drain").Task("x", "slow", nil))
		b.start(t)
		recv(t, entered)
		before, err := b.s.RunGet(context.Background(), run.ID)
		require.NoError(t, err)
		stopped := make(chan struct{})
		go func() { b.stop(); close(stopped) }()
		b.advanceAfterArmed(t, 3*time.Second)
		require.ErrorIs(t, recv(t, causes), plait.ErrShutdown, "handlers still running at the shutdown timeout must be cancelled")
		recv(t, stopped)
		after, err := b.s.RunGet(context.Background(), run.ID)
		require.NoError(t, err)
		x := after.Task("x")
		require.Equal(t, plait.TaskReady, x.Status, "an unfinished task must go back to ready at shutdown")
		require.Equal(t, before.Task("x").Attempt, x.Attempt, "a release must not use up an attempt")
		require.Greater(t, x.Epoch, before.Task("x").Epoch, "a release must fence off the old holder")
	})
}

func TestShutdownRecordsWhyTheAttemptStopped(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f, plait.WithShutdownTimeout(3*time.Second))
		entered, causes := make(chan struct{}, 1), make(chan error, 1)
		b.handle(t, "slow", blockUntilCancelled(entered, causes))
		run := b.submit(t, plait.NewWorkflow("cut-short").Task("x", "slow", nil))
		b.start(t)
		recv(t, entered)
		stopped := make(chan struct{})
		go func() { b.stop(); close(stopped) }()
		b.advanceAfterArmed(t, 3*time.Second)
		require.ErrorIs(t, recv(t, causes), plait.ErrShutdown)
		recv(t, stopped)
		ev := b.events.waitFor(t, 1, is(plait.EventTaskReleased, "x"))
		require.ErrorIs(t, ev.Err, plait.ErrShutdown, "the release event must say shutdown stopped the handler")
		after, err := b.s.RunGet(context.Background(), run.ID)
		require.NoError(t, err)
		x := after.Task("x")
		require.Len(t, x.Attempts, 1, "the attempt cut short must leave one record")
		rec := x.Attempts[0]
		require.Equal(t, "released", rec.Outcome)
		require.Contains(t, rec.Error, plait.ErrShutdown.Error(), "the record must say the attempt was stopped by shutdown")
		require.Contains(t, rec.Error, "3s", "the record must name the shutdown timeout that passed")
	})
}

func TestZeroShutdownTimeoutCancelsAtOnce(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f, plait.WithShutdownTimeout(0))
		entered, causes := make(chan struct{}, 1), make(chan error, 1)
		b.handle(t, "slow", blockUntilCancelled(entered, causes))
		run := b.submit(t, plait.NewWorkflow("no-grace").Task("x", "slow", nil))
		b.start(t)
		recv(t, entered)
		// No clock advance: an explicit zero gives running handlers no grace.
		b.stop()
		require.ErrorIs(t, recv(t, causes), plait.ErrShutdown)
		after, err := b.s.RunGet(context.Background(), run.ID)
		require.NoError(t, err)
		require.Equal(t, plait.TaskReady, after.Task("x").Status)
	})
}

func TestGracefulShutdownLetsHandlersFinish(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		entered, release := make(chan struct{}, 1), make(chan struct{})
		b.handle(t, "work", func(ctx context.Context, t *plait.Task) (any, error) {
			entered <- struct{}{}
			<-release
			return "done", nil
		})
		run := b.submit(t, plait.NewWorkflow("finish").Task("x", "work", nil))
		b.start(t)
		recv(t, entered)
		stopped := make(chan struct{})
		go func() { b.stop(); close(stopped) }()
		b.waitArmed(t, b.clock.Now().Add(plait.ShutdownTimeoutDefault))
		close(release)
		recv(t, stopped)
		final := b.wait(t, run.ID)
		require.Equal(t, plait.TaskSucceeded, final.Task("x").Status, "a handler that finishes within the shutdown timeout must be recorded")
	})
}

func TestCrashedWorkerTaskIsRecovered(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		// The dead worker's lease is its own (9s, below); this process's
		// lease keeper gets a round far past the test so the timers at
		// now+2s are the sweep's alone (a 3s round would share 6s).
		b := setup(t, f, plait.WithLeaseDuration(time.Hour), plait.WithSweepInterval(2*time.Second))
		var calls atomic.Int32
		b.handle(t, "work", func(ctx context.Context, t *plait.Task) (any, error) {
			calls.Add(1)
			return fmt.Sprint(t.Attempt, "/", t.Epoch), nil
		})
		run := b.submit(t, plait.NewWorkflow("crash").Task("x", "work", nil, plait.Retry(0)))
		// A worker that claims and then dies: it never heartbeats nor finishes.
		claimed, err := b.store.TaskClaim(context.Background(), &store.TaskClaimParams{WorkerID: "dead", Limit: 1, LeaseDuration: 9 * time.Second})
		require.NoError(t, err)
		require.Len(t, claimed.Tasks, 1)
		b.start(t)
		for swept := 1; b.clock.Now().Before(epoch.Add(9 * time.Second)); swept++ {
			b.advanceAfterArmed(t, 2*time.Second)
			b.events.waitFor(t, swept, is(plait.EventLeasesSwept, ""))
		}
		b.advanceAfterArmed(t, 2*time.Second)
		final := b.wait(t, run.ID)
		x := final.Task("x")
		require.Equal(t, plait.TaskSucceeded, x.Status, "a crashed worker's task must run again and finish")
		require.Equal(t, 1, x.Crashes, "the lost lease must be counted as a crash: %s", b.events)
		require.Equal(t, 1, x.Attempt, "a crash must not use up the retry budget")
		require.Equal(t, int32(1), calls.Load())
		require.True(t, strings.HasPrefix(string(x.Result), `"1/`))
	})
}
