package plait_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

// TestTimeoutGivesUpOnAHandlerThatIgnoresItsContext runs a handler that
// ignores its context past its task's Timeout. After the grace its attempt
// is finished as timed out and retried in the one slot there is, while the
// abandoned handler is counted; what it returns later changes nothing.
func TestTimeoutGivesUpOnAHandlerThatIgnoresItsContext(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		const timeout, grace = 5 * time.Second, 2 * time.Second
		b := setup(t, f, plait.WithConcurrency(1), plait.WithTimeoutGrace(grace))
		entered := make(chan int, 2)
		release, returned := make(chan struct{}), make(chan struct{})
		b.handle(t, "stubborn", func(ctx context.Context, task *plait.Task) (any, error) {
			entered <- task.Attempt
			if task.Attempt > 1 {
				return "second", nil
			}
			defer close(returned)
			<-release // its context is cancelled long before
			return "late", nil
		})
		policy := plait.ConstantBackoff(time.Second)
		policy.Jitter = -1
		run := b.submit(t, plait.NewWorkflow("stubborn").Task("x", "stubborn", nil, plait.Timeout(timeout), plait.Retry(1), plait.Backoff(policy)))
		b.start(t)
		require.Equal(t, 1, recv(t, entered))
		b.advanceAfterArmed(t, timeout)
		b.advanceAfterArmed(t, grace)

		ev := b.events.waitFor(t, 1, is(plait.EventTaskRetrying, "x"))
		require.Contains(t, ev.Err.Error(), plait.ErrTimeout.Error(), "the attempt given up on must be finished as timed out")
		require.Equal(t, 1, b.s.AbandonedHandlers(), "the handler still running must be counted")
		b.advanceAfterArmed(t, time.Second)
		require.Equal(t, 2, recv(t, entered), "the retry must get the slot the abandoned handler held")
		final := b.wait(t, run.ID)
		b.events.waitFor(t, 1, is(plait.EventTaskSucceeded, "x"))

		close(release)
		recv(t, returned)
		require.Eventually(t, func() bool { return b.s.AbandonedHandlers() == 0 }, failAfter, time.Millisecond,
			"an abandoned handler that returned must no longer be counted")
		x := final.Task("x")
		require.Equal(t, plait.TaskSucceeded, x.Status)
		require.Equal(t, `"second"`, string(x.Result))
		require.Len(t, x.Attempts, 2)
		require.Equal(t, "timed out", x.Attempts[0].Outcome, "an attempt its Timeout ended is recorded as timed out")
		require.Contains(t, x.Attempts[0].Error, "timed out after 5s")
		after, err := b.s.RunGet(context.Background(), run.ID)
		require.NoError(t, err)
		require.Equal(t, x.Attempts, after.Task("x").Attempts, "what the abandoned handler returned must be ignored")
		require.Equal(t, 1, b.events.count(is(plait.EventTaskSucceeded, "x")))
	})
}

// TestTimeoutWithoutGraceFailsAtTheTimeout gives no grace: the attempt of
// a handler that ignores its context fails at the timeout itself.
func TestTimeoutWithoutGraceFailsAtTheTimeout(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f, plait.WithTimeoutGrace(0))
		entered, release := make(chan struct{}, 1), make(chan struct{})
		returned := make(chan struct{})
		b.handle(t, "stubborn", func(ctx context.Context, task *plait.Task) (any, error) {
			defer close(returned)
			entered <- struct{}{}
			<-release
			return nil, nil
		})
		run := b.submit(t, plait.NewWorkflow("no-grace").Task("x", "stubborn", nil, plait.Timeout(time.Second), plait.Retry(0)))
		b.start(t)
		recv(t, entered)
		b.advanceAfterArmed(t, time.Second)
		final := b.wait(t, run.ID)
		close(release)
		recv(t, returned)
		require.Equal(t, plait.TaskFailed, final.Task("x").Status)
		require.Contains(t, final.Task("x").Error, "timed out")
		attempts := final.Task("x").Attempts
		require.Len(t, attempts, 1)
		require.Equal(t, "timed out", attempts[0].Outcome, "the attempt record names the timeout, not a plain failure")
	})
}
