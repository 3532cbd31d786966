package plait

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/worker"
)

// delays returns the delay after each failed attempt until the policy stops.
func delays(p RetryPolicy, elapsed time.Duration) []time.Duration {
	var out []time.Duration
	for attempt := 1; ; attempt++ {
		d, ok := worker.RetryDelay(p, attempt, elapsed)
		if !ok {
			return out
		}
		out = append(out, d)
	}
}

func TestRetryMergedThroughOptions(t *testing.T) {
	t.Parallel()
	var spec TaskSpec
	require.NoError(t, Retry(4).applyTask(&spec))
	require.NoError(t, Backoff(ConstantBackoff(time.Second)).applyTask(&spec))
	require.NoError(t, MaxElapsed(time.Minute).applyTask(&spec))
	p := worker.MergedRetry(spec.Retry, RetryPolicy{})
	require.Equal(t, 5, p.MaxAttempts, "Retry(4) is five attempts and Backoff keeps it")
	require.Equal(t, BackoffConstant, p.Backoff)
	require.Equal(t, time.Second, p.InitialInterval)
	require.Equal(t, JitterDefault, p.Jitter)
	require.Equal(t, time.Minute, p.MaxElapsed)
	require.Len(t, delays(p, 0), 4)

	var none TaskSpec
	require.NoError(t, Retry(0).applyTask(&none))
	require.Empty(t, delays(worker.MergedRetry(none.Retry, RetryPolicy{MaxAttempts: 9}), 0), "Retry(0) disables retries")

	var exp TaskSpec
	require.NoError(t, Backoff(ExponentialBackoff(10*time.Millisecond, 40*time.Millisecond)).applyTask(&exp))
	q := worker.MergedRetry(exp.Retry, RetryPolicy{Jitter: -1, MaxAttempts: 5})
	require.Equal(t, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond}, delays(q, 0))
}
