package worker

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// delays returns the delay after each failed attempt until the policy stops.
func delays(p store.RetryPolicy, elapsed time.Duration) []time.Duration {
	var out []time.Duration
	for attempt := 1; ; attempt++ {
		d, ok := RetryDelay(p, attempt, elapsed)
		if !ok {
			return out
		}
		out = append(out, d)
	}
}

func TestRetryDelayExponentialExactWithoutJitter(t *testing.T) {
	t.Parallel()
	p := store.RetryPolicy{
		MaxAttempts:     8,
		Backoff:         store.BackoffExponential,
		InitialInterval: 100 * time.Millisecond,
		MaxInterval:     time.Second,
		Multiplier:      2,
		Jitter:          -1,
	}
	require.Equal(t, []time.Duration{
		100 * time.Millisecond,
		200 * time.Millisecond,
		400 * time.Millisecond,
		800 * time.Millisecond,
		time.Second,
		time.Second,
		time.Second,
	}, delays(p, 0))

	p.Multiplier = 3
	require.Equal(t, []time.Duration{
		100 * time.Millisecond,
		300 * time.Millisecond,
		900 * time.Millisecond,
		time.Second,
		time.Second,
		time.Second,
		time.Second,
	}, delays(p, 0))
}

func TestRetryDelayExponentialWithinJitterBounds(t *testing.T) {
	t.Parallel()
	const jitter = 0.5
	p := store.RetryPolicy{
		MaxAttempts:     7,
		Backoff:         store.BackoffExponential,
		InitialInterval: 100 * time.Millisecond,
		MaxInterval:     2 * time.Second,
		Multiplier:      2,
		Jitter:          jitter,
	}
	base := []time.Duration{
		100 * time.Millisecond,
		200 * time.Millisecond,
		400 * time.Millisecond,
		800 * time.Millisecond,
		1600 * time.Millisecond,
		2 * time.Second,
	}
	for attempt := 1; attempt <= len(base); attempt++ {
		b := float64(base[attempt-1])
		lo := time.Duration(b * (1 - jitter))
		hi := time.Duration(b*(1+jitter)) + 1 // the backoff library's range is inclusive by one nanosecond
		seen := map[time.Duration]bool{}
		for i := 0; i < 200; i++ {
			d, ok := RetryDelay(p, attempt, 0)
			require.True(t, ok)
			require.GreaterOrEqual(t, d, lo, "attempt %d", attempt)
			require.LessOrEqual(t, d, hi, "attempt %d", attempt)
			seen[d] = true
		}
		require.Greater(t, len(seen), 1, "attempt %d: jitter must vary the delay", attempt)
	}
	_, ok := RetryDelay(p, 7, 0)
	require.False(t, ok)
}

func TestRetryDelayConstant(t *testing.T) {
	t.Parallel()
	p := store.RetryPolicy{
		MaxAttempts:     5,
		Backoff:         store.BackoffConstant,
		InitialInterval: 250 * time.Millisecond,
		MaxInterval:     time.Hour, // ignored by constant backoff
		Multiplier:      10,        // ignored by constant backoff
		Jitter:          -0.3,
	}
	require.Equal(t, []time.Duration{
		250 * time.Millisecond,
		250 * time.Millisecond,
		250 * time.Millisecond,
		250 * time.Millisecond,
	}, delays(p, 0))

	p.Jitter = 0.2
	for attempt := 1; attempt < 5; attempt++ {
		for i := 0; i < 100; i++ {
			d, ok := RetryDelay(p, attempt, 0)
			require.True(t, ok)
			require.GreaterOrEqual(t, d, 200*time.Millisecond)
			require.LessOrEqual(t, d, 300*time.Millisecond+1)
		}
	}
}

func TestRetryDelayMaxAttemptsStops(t *testing.T) {
	t.Parallel()
	for _, max := range []int{1, 2, 5} {
		p := store.RetryPolicy{MaxAttempts: max, InitialInterval: time.Millisecond, MaxInterval: time.Second, Multiplier: 2, Jitter: -1}
		require.Len(t, delays(p, 0), max-1, "MaxAttempts %d allows %d retries", max, max-1)
		_, ok := RetryDelay(p, max, 0)
		require.False(t, ok)
		_, ok = RetryDelay(p, max+10, 0)
		require.False(t, ok)
	}
}

func TestRetryDelayMaxElapsedStops(t *testing.T) {
	t.Parallel()
	p := store.RetryPolicy{
		MaxAttempts:     100,
		InitialInterval: time.Second,
		MaxInterval:     time.Minute,
		Multiplier:      2,
		Jitter:          -1,
		MaxElapsed:      10 * time.Second,
	}
	// Elapsed plus the next delay must stay within MaxElapsed.
	d, ok := RetryDelay(p, 1, 9*time.Second)
	require.True(t, ok)
	require.Equal(t, time.Second, d)
	_, ok = RetryDelay(p, 1, 9*time.Second+1)
	require.False(t, ok)
	d, ok = RetryDelay(p, 3, 6*time.Second)
	require.True(t, ok)
	require.Equal(t, 4*time.Second, d)
	_, ok = RetryDelay(p, 3, 6*time.Second+time.Millisecond)
	require.False(t, ok)
	_, ok = RetryDelay(p, 1, time.Hour)
	require.False(t, ok)

	// Zero means no limit.
	p.MaxElapsed = 0
	d, ok = RetryDelay(p, 1, 1000*time.Hour)
	require.True(t, ok)
	require.Equal(t, time.Second, d)
}

func TestRetryMergedDefaults(t *testing.T) {
	t.Parallel()
	got := MergedRetry(store.RetryPolicy{}, store.RetryPolicy{})
	require.Equal(t, store.RetryPolicy{
		MaxAttempts:     MaxAttemptsDefault,
		Backoff:         store.BackoffExponential,
		InitialInterval: InitialIntervalDefault,
		MaxInterval:     MaxIntervalDefault,
		Multiplier:      MultiplierDefault,
		Jitter:          JitterDefault,
	}, got)

	def := store.RetryPolicy{
		MaxAttempts:     7,
		InitialInterval: 2 * time.Second,
		MaxInterval:     time.Hour,
		Multiplier:      1.5,
		Jitter:          -1,
		MaxElapsed:      time.Minute,
	}
	require.Equal(t, def, MergedRetry(store.RetryPolicy{}, def))

	// The task's own fields win over the scheduler's default.
	own := store.RetryPolicy{
		MaxAttempts:     2,
		Backoff:         store.BackoffConstant,
		InitialInterval: 5 * time.Millisecond,
		MaxInterval:     time.Second,
		Multiplier:      4,
		Jitter:          0.1,
		MaxElapsed:      time.Second,
	}
	require.Equal(t, own, MergedRetry(own, def))

	// Partial: only the zero fields are filled.
	partial := MergedRetry(store.RetryPolicy{MaxAttempts: 4, Jitter: -1}, store.RetryPolicy{InitialInterval: 3 * time.Second})
	require.Equal(t, store.RetryPolicy{
		MaxAttempts:     4,
		InitialInterval: 3 * time.Second,
		MaxInterval:     MaxIntervalDefault,
		Multiplier:      MultiplierDefault,
		Jitter:          -1,
	}, partial)
	require.Equal(t, []time.Duration{3 * time.Second, 6 * time.Second, 12 * time.Second}, delays(partial, 0))
}

func TestRetryPolicyValidate(t *testing.T) {
	t.Parallel()
	valid := []store.RetryPolicy{
		{},
		{Jitter: -1},
		{Jitter: 1},
		{Backoff: store.BackoffExponential, InitialInterval: time.Second, MaxInterval: time.Minute},
		{Backoff: store.BackoffConstant, InitialInterval: time.Second},
	}
	for _, p := range valid {
		require.NoError(t, p.Validate(), "%+v", p)
	}
	invalid := []store.RetryPolicy{
		{MaxAttempts: -1},
		{InitialInterval: -1},
		{MaxInterval: -1},
		{MaxElapsed: -1},
		{Multiplier: -1},
		{Multiplier: math.NaN()},
		{Jitter: 1.01},
		{Jitter: math.NaN()},
		{Backoff: store.BackoffConstant + 1},
	}
	for _, p := range invalid {
		require.Error(t, p.Validate(), "%+v", p)
	}
}

func TestRetryNextHonoursRetryAfterWithinTheBudget(t *testing.T) {
	t.Parallel()
	p := MergedRetry(store.RetryPolicy{MaxAttempts: 3, InitialInterval: time.Second, MaxElapsed: time.Minute}, store.RetryPolicy{})
	asked := RetryAfter(30*time.Second, errors.New("busy"))
	d, ok := retryNext(p, 1, 0, asked)
	require.True(t, ok)
	require.Equal(t, 30*time.Second, d, "RetryAfter must set the delay")
	_, ok = retryNext(p, 3, 0, asked)
	require.False(t, ok, "RetryAfter must not add attempts")
	_, ok = retryNext(p, 1, 40*time.Second, asked)
	require.False(t, ok, "a RetryAfter past MaxElapsed must end the retries")
	_, ok = retryNext(p, 1, 0, Permanent(asked))
	require.True(t, ok, "next leaves Permanent to the caller, which checks it first")
}
