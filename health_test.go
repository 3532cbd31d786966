package plait_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

// healthSweep is a sweep interval no other background service of the
// scheduler shares, so the timer armed at now+healthSweep is the sweep's.
const healthSweep = 7 * time.Second

// TestHealth: a scheduler that is not running is not ready; a running one
// with a reachable store is, with every worker counted.
func TestHealth(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		// The lease keeper's round (a third of LeaseDurationDefault) is as
		// long as SweepIntervalDefault, so a timer at now+5s may be the
		// keeper's, armed while the sweep has not armed its own yet: the
		// sweep gets a period no other service uses.
		b := setup(t, f, plait.WithConcurrency(3), plait.WithSweepInterval(healthSweep))
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

		b.advanceAfterArmed(t, healthSweep)
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

// refusingExtend is a store whose lease extensions all fail.
type refusingExtend struct{ *callCounter }

func (refusingExtend) LeaseExtend(context.Context, *store.LeaseExtendParams) ([]store.LeaseExtendResult, error) {
	return nil, errors.New("extension refused")
}

// TestHealthLeasesNotExtended: while the store refuses every extension, a
// process holding a lease is unhealthy once two rounds of the lease keeper
// went by without one.
func TestHealthLeasesNotExtended(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New(epoch)
	calls := &callCounter{Store: newMemStore(t, memstore.WithClock(clk))}
	rec := &recorder{}
	// The sweep would arm timers at the keeper's round too (both default
	// to 5s); pushed out of the test's reach, the timers at now+round are
	// the keeper's alone.
	s, err := plait.New(refusingExtend{calls}, plait.WithClock(clk), plait.WithObserver(rec.add),
		plait.WithSweepInterval(time.Hour), plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	b := &bundle{clock: clk, store: calls.Store, s: s, events: rec, calls: calls}
	entered, release := make(chan struct{}, 1), make(chan struct{})
	b.handle(t, "stuck", func(ctx context.Context, task *plait.Task) (any, error) {
		entered <- struct{}{}
		<-release // ignores its context
		return nil, nil
	})
	b.submit(t, plait.NewWorkflow("stuck").Task("x", "stuck", nil))
	b.start(t)
	t.Cleanup(func() { close(release) })
	recv(t, entered)
	waitHealthy(t, s)

	round := plait.LeaseDurationDefault / 3
	b.advanceAfterArmed(t, round)
	b.advanceAfterArmed(t, round)
	// The lease timer the keeper armed fires at the deadline less the
	// margin, a sixth of the lease.
	b.advanceAfterArmed(t, round-plait.LeaseDurationDefault/6)
	rep, err := s.Health(context.Background())
	require.ErrorIs(t, err, plait.ErrUnhealthy)
	require.Contains(t, err.Error(), "leases not extended for 12.5s")
	require.Equal(t, 1, rep.Leases)
	require.True(t, rep.LeasesExtendedAt.IsZero(), "no extension ever succeeded")
}
