package plait_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

func TestRetryAfterSetsTheNextAttemptsDelay(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		var calls atomic.Int32
		b.handle(t, "throttled", func(ctx context.Context, t *plait.Task) (any, error) {
			if calls.Add(1) == 1 {
				return nil, plait.RetryAfter(42*time.Second, errors.New("slow down"))
			}
			return "ok", nil
		})
		// The policy's own delay is an hour: only RetryAfter can make it 42s.
		policy := plait.ConstantBackoff(time.Hour)
		policy.Jitter = -1
		run := b.submit(t, plait.NewWorkflow("throttle").Task("x", "throttled", nil, plait.Retry(1), plait.Backoff(policy)))
		b.start(t)
		ev := b.events.waitFor(t, 1, is(plait.EventTaskRetrying, "x"))
		require.Equal(t, 42*time.Second, ev.RetryIn, "RetryAfter must replace the backoff's delay")
		b.advanceAfterArmed(t, 42*time.Second)
		final := b.wait(t, run.ID)
		require.Equal(t, plait.TaskSucceeded, final.Task("x").Status)
		require.Equal(t, "slow down", final.Task("x").Attempts[0].Error, "RetryAfter must record the wrapped error's text")
	})
}

func TestRetryAfterDoesNotExtendTheBudget(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		b.handle(t, "throttled", func(ctx context.Context, t *plait.Task) (any, error) {
			return nil, plait.RetryAfter(time.Second, errors.New("slow down"))
		})
		run := b.submit(t, plait.NewWorkflow("throttle").Task("x", "throttled", nil, plait.Retry(0)))
		b.start(t)
		final := b.wait(t, run.ID)
		require.Equal(t, plait.TaskFailed, final.Task("x").Status, "a task without retries left must fail despite RetryAfter")
	})
}

func TestRetryAfterDelayReadsThroughWrapping(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("call: %w", plait.RetryAfter(3*time.Second, errors.New("busy")))
	d, ok := plait.RetryAfterDelay(err)
	require.True(t, ok)
	require.Equal(t, 3*time.Second, d)
	_, ok = plait.RetryAfterDelay(errors.New("plain"))
	require.False(t, ok, "an error without RetryAfter asks for no delay")
	require.NoError(t, plait.RetryAfter(time.Second, nil))
	d, _ = plait.RetryAfterDelay(plait.RetryAfter(-time.Second, errors.New("x")))
	require.Zero(t, d, "a negative delay counts as zero")
}
