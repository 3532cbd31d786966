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
	"github.com/plaitdag/plait/internal/redistest"
)

// TestHealth: a scheduler that is not running is not ready; a running one
// with a reachable store is, with every worker counted.
func TestHealth(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f, plait.WithConcurrency(3))
		rep, err := b.s.Health(context.Background())
		require.ErrorIs(t, err, plait.ErrUnhealthy)
		var he *plait.HealthError
		require.ErrorAs(t, err, &he)
		require.Equal(t, []string{"Run is not running"}, he.Problems)
		require.True(t, rep.StoreChecked)
		require.True(t, rep.StoreReachable)
		require.False(t, rep.Running)

		b.start(t)
		rep = waitHealthy(t, b.s)
		require.True(t, rep.Running)
		require.Equal(t, 3, rep.Workers)
		require.Equal(t, 3, rep.Concurrency)
		require.True(t, rep.SweptAt.IsZero(), "no sweep yet")

		b.advanceAfterArmed(t, plait.SweepIntervalDefault)
		b.events.waitFor(t, 1, is(plait.EventLeasesSwept, ""))
		rep, err = b.s.Health(context.Background())
		require.NoError(t, err)
		require.True(t, rep.SweptAt.Equal(b.clock.Now()), "the sweep's time is reported")
	})
}

// TestHealthWithRedisStopped runs a scheduler on its own redis-server,
// then stops the server: Health reports the store unreachable, with the
// store's error inside.
func TestHealthWithRedisStopped(t *testing.T) {
	t.Parallel()
	srv, err := redistest.Start()
	if err != nil {
		redistest.Skip(t, err)
	}
	var stop sync.Once
	stopServer := func() { stop.Do(func() { require.NoError(t, srv.Close()) }) }
	t.Cleanup(stopServer)
	store := newRedisStore(t, srv.Addr, nil)
	s, err := plait.New(store, plait.WithShutdownTimeout(0), plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, recv(t, done))
	})
	rep := waitHealthy(t, s)
	require.True(t, rep.StoreReachable)

	stopServer()
	hctx, hcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer hcancel()
	rep, err = s.Health(hctx)
	require.ErrorIs(t, err, plait.ErrUnhealthy)
	var he *plait.HealthError
	require.ErrorAs(t, err, &he)
	require.Error(t, he.Store, "the store's error is kept")
	require.True(t, rep.StoreChecked)
	require.False(t, rep.StoreReachable)
	require.True(t, rep.Running, "Run keeps running while the store is away")
	require.Contains(t, err.Error(), "the store does not answer")
}

// waitHealthy waits until Health answers no problem: Run has started.
func waitHealthy(t *testing.T, s *plait.Scheduler) *plait.HealthReport {
	t.Helper()
	var rep *plait.HealthReport
	var err error
	require.Eventually(t, func() bool {
		rep, err = s.Health(context.Background())
		return err == nil
	}, failAfter, time.Millisecond, "Health never answered healthy: %v", err)
	return rep
}
