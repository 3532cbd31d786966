package memstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/clock"
	"github.com/plaitdag/plait/store"
)

// newTestStore is New for the tests of this package, which give valid
// options only.
func newTestStore(t testing.TB, opts ...Option) *Store {
	t.Helper()
	s, err := New(opts...)
	require.NoError(t, err)
	return s
}

// The options not given take the defaults of package store, the same as
// redisstore's; the bounds given exactly are taken as they are.
func TestOptionDefaultsAndBounds(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	require.Equal(t, clock.Real{}, s.clock, "the system clock by default")
	require.Equal(t, store.RetentionDefault, s.cfg.retention)
	require.Zero(t, s.cfg.history, "history goes with its run by default")
	require.Equal(t, store.EventCapDefault, s.ev.cap)
	require.Zero(t, s.st.window, "stats are off by default")
	require.Equal(t, store.MaxResultBytesDefault, s.cfg.maxResult)
	require.Equal(t, []int{store.TaskLogLinesDefault, store.TaskLogBytesDefault}, []int{s.cfg.logLines, s.cfg.logBytes})
	require.Equal(t, clock.Real{}, newTestStore(t, WithClock(nil)).clock, "a nil clock keeps the system clock")

	s = newTestStore(t, WithRetention(store.RetentionMin), WithHistoryRetention(0), WithEventCap(store.EventCapMax),
		WithStats(store.StatsWindowMax), WithMaxResultBytes(store.MaxResultBytesMax),
		WithTaskLogLimit(store.TaskLogLinesMax, store.TaskLogBytesMax))
	require.Equal(t, store.RetentionMin, s.cfg.retention)
	require.Equal(t, store.EventCapMax, s.ev.cap)
	require.Equal(t, store.StatsWindowMax, s.st.window)
	require.Equal(t, store.MaxResultBytesMax, s.cfg.maxResult)
	require.Equal(t, []int{store.TaskLogLinesMax, store.TaskLogBytesMax}, []int{s.cfg.logLines, s.cfg.logBytes})
	require.Equal(t, store.StatsWindowDefault, newTestStore(t, WithStats(0)).st.window, "0 means the default window")
}

// New reports every refused option, joined, each an *store.OptionError
// named memstore.WithX, and a nil option; it returns no store.
func TestOptionsRejectedTogether(t *testing.T) {
	t.Parallel()
	s, err := New(WithRetention(-time.Second), WithEventCap(0), nil, WithStats(-1), WithRetentionFor("", store.RunRunning, time.Hour))
	require.Nil(t, s)
	require.ErrorIs(t, err, store.ErrInvalidOption)
	for _, want := range []string{
		"memstore.WithRetention(-1s): want at least 1ms",
		"memstore.WithEventCap(0): want 1..100000000",
		"memstore: option 2 is nil",
		"memstore.WithStats(-1): want 0..100000000",
		`memstore.WithRetentionFor("", "running", 1h0m0s): want a terminal status or ""`,
	} {
		require.Contains(t, err.Error(), want)
	}
	var oe *store.OptionError
	require.True(t, errors.As(err, &oe))
	require.Equal(t, "memstore.WithRetention", oe.Option)
}

// While stats are off a transition counts nothing: stats cost nothing
// unless asked for.
func TestStatsOffCountsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestStore(t)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h", Queue: store.DefaultQueue}}}
	_, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
	require.NoError(t, err)
	res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, res.Tasks, 1)
	require.Nil(t, s.st.queues)
	require.Nil(t, s.st.workflows)
	_, err = s.StoreStats(ctx, &store.StoreStatsParams{})
	var unsupported *store.UnsupportedError
	require.ErrorAs(t, err, &unsupported)
	require.Equal(t, "StatsStore", unsupported.Capability)
}
