package plait_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

// TestOptionsRejectBadValues gives every option a value out of range and
// expects New to name the option in an *OptionError.
func TestOptionsRejectBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		opt    plait.Option
		option string // the name the error must carry
		value  string // what the error must quote
	}{
		{"concurrency zero", plait.WithConcurrency(0), "WithConcurrency", "0"},
		{"concurrency negative", plait.WithConcurrency(-1), "WithConcurrency", "-1"},
		{"concurrency above max", plait.WithConcurrency(plait.ConcurrencyMax + 1), "WithConcurrency", "65537"},
		{"prefetch negative", plait.WithPrefetch(-1), "WithPrefetch", "-1"},
		{"prefetch above max", plait.WithPrefetch(plait.PrefetchMax + 1), "WithPrefetch", "65537"},
		{"lease zero", plait.WithLeaseDuration(0), "WithLeaseDuration", "0s"},
		{"lease negative", plait.WithLeaseDuration(-time.Second), "WithLeaseDuration", "-1s"},
		{"lease below min", plait.WithLeaseDuration(plait.LeaseDurationMin - 1), "WithLeaseDuration", "9.999999ms"},
		{"sweep zero", plait.WithSweepInterval(0), "WithSweepInterval", "0s"},
		{"sweep negative", plait.WithSweepInterval(-time.Second), "WithSweepInterval", "-1s"},
		{"sweep below min", plait.WithSweepInterval(time.Microsecond), "WithSweepInterval", "1µs"},
		{"shutdown negative", plait.WithShutdownTimeout(-time.Nanosecond), "WithShutdownTimeout", "-1ns"},
		{"timeout grace negative", plait.WithTimeoutGrace(-time.Second), "WithTimeoutGrace", "-1s"},
		{"crash limit negative", plait.WithCrashLimit(-1), "WithCrashLimit", "-1"},
		{"queues none", plait.WithQueues(), "WithQueues", ""},
		{"queue bad name", plait.WithQueues("ok", "a:b"), "WithQueues", `"a:b"`},
		{"queue empty name", plait.WithQueues(""), "WithQueues", `""`},
		{"queue twice", plait.WithQueues("q", "q"), "WithQueues", `"q"`},
		{"worker id empty", plait.WithWorkerID(""), "WithWorkerID", `""`},
		{"task log flush zero", plait.WithTaskLogFlush(0), "WithTaskLogFlush", "0s"},
		{"task log flush too long", plait.WithTaskLogFlush(2 * time.Minute), "WithTaskLogFlush", "2m0s"},
		{"worker id space", plait.WithWorkerID("host 1"), "WithWorkerID", `"host 1"`},
		{"worker id control byte", plait.WithWorkerID("w\n1"), "WithWorkerID", `"w\n1"`},
		{"worker id separator", plait.WithWorkerID("w:1"), "WithWorkerID", `"w:1"`},
		{"worker id too long", plait.WithWorkerID(strings.Repeat("w", 129)), "WithWorkerID", "…(129 bytes)"},
		{"limits max tasks negative", plait.WithLimits(plait.Limits{MaxTasks: -1}), "WithLimits", "MaxTasks=-1"},
		{"limits max deps negative", plait.WithLimits(plait.Limits{MaxDeps: -1}), "WithLimits", "MaxDeps=-1"},
		{"limits payload negative", plait.WithLimits(plait.Limits{MaxPayloadBytes: -1}), "WithLimits", "MaxPayloadBytes=-1"},
		{"default retry negative attempts", plait.WithDefaultRetry(plait.RetryPolicy{MaxAttempts: -1}), "WithDefaultRetry", "attempts=-1"},
		{"default retry NaN", plait.WithDefaultRetry(plait.RetryPolicy{Multiplier: math.NaN()}), "WithDefaultRetry", "exponential"},
		{"default retry jitter", plait.WithDefaultRetry(plait.RetryPolicy{Jitter: 2}), "WithDefaultRetry", "exponential"},
		{"default retry kind", plait.WithDefaultRetry(plait.RetryPolicy{Backoff: 9}), "WithDefaultRetry", "attempts=0"},
		{"observer nil", plait.WithObserver(nil), "WithObserver", "nil"},
		{"middleware nil", plait.WithMiddleware(plait.Recover(), nil), "WithMiddleware", "element 1"},
		{"base middleware nil", plait.WithBaseMiddleware(nil), "WithBaseMiddleware", "element 0"},
		{"base context nil", plait.WithBaseContext(nil), "WithBaseContext", "nil"},
		{"metrics nil", plait.WithMetrics(nil), "WithMetrics", "nil"},
		{"idle wait zero", plait.WithIdleWait(0), "WithIdleWait", "0s"},
		{"idle wait negative", plait.WithIdleWait(-time.Second), "WithIdleWait", "-1s"},
		{"idle wait below min", plait.WithIdleWait(time.Microsecond), "WithIdleWait", "1µs"},
	}
	for _, tc := range tests {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := plait.New(newMemStore(t), tc.opt)
			require.Nil(t, s, "New must not return a scheduler with a bad option")
			require.ErrorIs(t, err, plait.ErrInvalidOption)
			var oe *plait.OptionError
			require.ErrorAs(t, err, &oe)
			require.Equal(t, tc.option, oe.Option)
			require.Contains(t, oe.Value, tc.value)
			require.NotEmpty(t, oe.Reason)
			require.Contains(t, err.Error(), tc.option+"(", "the message must name the option as it was called")
		})
	}
}

// TestOptionsAcceptGoodEdges gives every option the edge values its doc
// says are allowed.
func TestOptionsAcceptGoodEdges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opt  plait.Option
	}{
		{"concurrency one", plait.WithConcurrency(1)},
		{"concurrency max", plait.WithConcurrency(plait.ConcurrencyMax)},
		{"prefetch zero turns it off", plait.WithPrefetch(0)},
		{"prefetch max", plait.WithPrefetch(plait.PrefetchMax)},
		{"lease at min", plait.WithLeaseDuration(plait.LeaseDurationMin)},
		{"sweep at min", plait.WithSweepInterval(plait.IntervalMin)},
		{"shutdown zero gives no grace", plait.WithShutdownTimeout(0)},
		{"timeout grace zero gives up at the timeout", plait.WithTimeoutGrace(0)},
		{"timeout grace default", plait.WithTimeoutGrace(plait.TimeoutGraceDefault)},
		{"crash limit zero", plait.WithCrashLimit(0)},
		{"one queue", plait.WithQueues("q")},
		{"several queues", plait.WithQueues("a", "b.c", "d_e-f")},
		{"worker id of one byte", plait.WithWorkerID("w")},
		{"worker id at max length", plait.WithWorkerID(strings.Repeat("w", 128))},
		{"worker id with punctuation", plait.WithWorkerID("host-1.pid_42")},
		{"clock nil means default", plait.WithClock(nil)},
		{"logger nil means default", plait.WithLogger(nil)},
		{"codec nil means default", plait.WithCodec(nil)},
		{"limits zero mean defaults", plait.WithLimits(plait.Limits{})},
		{"limits set", plait.WithLimits(plait.Limits{MaxTasks: 1, MaxDeps: 1, MaxPayloadBytes: 1})},
		{"default retry zero", plait.WithDefaultRetry(plait.RetryPolicy{})},
		{"default retry no jitter", plait.WithDefaultRetry(plait.RetryPolicy{MaxAttempts: 1, Jitter: -1})},
		{"remote handlers", plait.WithRemoteHandlers()},
		{"observer", plait.WithObserver(func(plait.Event) {})},
		{"idle wait at min", plait.WithIdleWait(plait.IntervalMin)},
	}
	for _, tc := range tests {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := plait.New(newMemStore(t), tc.opt)
			require.NoError(t, err)
			require.NotNil(t, s)
		})
	}
}

func TestNewReportsEveryBadOption(t *testing.T) {
	t.Parallel()
	_, err := plait.New(newMemStore(t), plait.WithConcurrency(-1), plait.WithQueues("a:b"), plait.WithLeaseDuration(0))
	var names []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var oe *plait.OptionError
		require.True(t, errors.As(e, &oe), "%v", e)
		names = append(names, oe.Option)
	}
	require.Equal(t, []string{"WithConcurrency", "WithQueues", "WithLeaseDuration"}, names, "every problem, in the order given")
}

func TestNewRejectsNilStoreAndNilOption(t *testing.T) {
	t.Parallel()
	_, err := plait.New(nil)
	require.ErrorIs(t, err, plait.ErrInvalidOption)
	require.Contains(t, err.Error(), "store")
	_, err = plait.New(newMemStore(t), nil)
	require.ErrorIs(t, err, plait.ErrInvalidOption)
}

func TestOptionErrorQuotesAShortPrefix(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("q", 10<<10)
	_, err := plait.New(newMemStore(t), plait.WithWorkerID(huge), plait.WithQueues(huge))
	require.ErrorIs(t, err, plait.ErrInvalidOption)
	require.Less(t, len(err.Error()), 1<<10, "a 10 KB value must not be echoed whole")
	require.Contains(t, err.Error(), "…(10240 bytes)")
}

func TestOptionErrorMessage(t *testing.T) {
	t.Parallel()
	_, err := plait.New(newMemStore(t), plait.WithConcurrency(0))
	require.EqualError(t, err, "plait: invalid option WithConcurrency(0): must be at least 1")
}
