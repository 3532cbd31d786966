package maintenance_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/maintenance"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ttl = 10 * time.Second

// changes records what a Leader told its Changed hook.
type changes struct {
	mu  sync.Mutex
	got []string
}

func (c *changes) add(acquired bool, epoch int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if acquired {
		c.got = append(c.got, "acquired")
	} else {
		c.got = append(c.got, "lost")
	}
}

func newPair(t *testing.T) (*fakeclock.Clock, store.ScheduleStore, func(holder string, ch *changes) *maintenance.Leader) {
	t.Helper()
	clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	st, err := memstore.New(memstore.WithClock(clk))
	require.NoError(t, err)
	ss := store.ScheduleStore(st)
	return clk, ss, func(holder string, ch *changes) *maintenance.Leader {
		return maintenance.NewLeader(maintenance.Config{Store: ss, Holder: holder, Clock: clk, TTL: ttl, Tick: time.Second, Changed: ch.add})
	}
}

// One process leads at a time; a released lease is taken at once; the
// epoch of a later term is greater.
func TestOneLeaderAtATime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, leader := newPair(t)
	var ca, cb changes
	a, b := leader("a", &ca), leader("b", &cb)
	var first int64
	leading, err := a.Act(ctx, func(_ context.Context, term maintenance.Term) error {
		first = term.Epoch()
		require.True(t, term.Valid(), "a term just taken is valid")
		return nil
	})
	require.NoError(t, err)
	require.True(t, leading)
	called := false
	leading, err = b.Act(ctx, func(context.Context, maintenance.Term) error { called = true; return nil })
	require.NoError(t, err)
	require.False(t, leading, "a second process must not lead while the first holds the lease")
	require.False(t, called, "the act of a process that does not lead must not run")

	require.NoError(t, a.Release(ctx))
	var second int64
	leading, err = b.Act(ctx, func(_ context.Context, term maintenance.Term) error { second = term.Epoch(); return nil })
	require.NoError(t, err)
	require.True(t, leading, "a released lease must be taken at once")
	require.Greater(t, second, first, "a later term must carry a greater epoch")
	require.Equal(t, []string{"acquired", "lost"}, ca.got)
	require.Equal(t, []string{"acquired"}, cb.got)
}

// A holder stops acting four fifths of the TTL after its last renewal, on
// its own clock, before the store could hand the lease to another.
func TestTermEndsBeforeTheStoreLetsGo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk, _, leader := newPair(t)
	var ca changes
	a := leader("a", &ca)
	var term maintenance.Term
	_, err := a.Act(ctx, func(_ context.Context, tm maintenance.Term) error { term = tm; return nil })
	require.NoError(t, err)
	clk.Advance(ttl*4/5 - time.Millisecond)
	require.True(t, term.Valid())
	clk.Advance(time.Millisecond)
	require.False(t, term.Valid(), "a term must end at four fifths of the TTL without a renewal")
}

// A stale write makes the holder forget its lease; the next act takes a
// new term.
func TestLostTermIsTakenAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, leader := newPair(t)
	var ca changes
	a := leader("a", &ca)
	var first, second int64
	_, err := a.Act(ctx, func(_ context.Context, tm maintenance.Term) error { first = tm.Epoch(); tm.Lost(); return nil })
	require.NoError(t, err)
	_, err = a.Act(ctx, func(_ context.Context, tm maintenance.Term) error { second = tm.Epoch(); return nil })
	require.NoError(t, err)
	require.NotZero(t, second)
	require.Equal(t, []string{"acquired", "lost", "acquired"}, ca.got[:3])
	require.GreaterOrEqual(t, second, first)
}

// Start's loop acts again at once when a pass answers that work is due
// now, until its context ends; then it releases the lease, and Wait
// returns.
func TestLoopReleasesWhenItStops(t *testing.T) {
	t.Parallel()
	clk, _, leader := newPair(t)
	var ca, cb changes
	a, b := leader("a", &ca), leader("b", &cb)
	ctx, cancel := context.WithCancel(context.Background())
	passes := make(chan struct{}, 1)
	run := a.Start(ctx, time.Second, func(ctx context.Context) (time.Time, error) {
		_, err := a.Act(ctx, func(context.Context, maintenance.Term) error { return nil })
		select {
		case passes <- struct{}{}:
		default:
		}
		return clk.Now(), err // due again now: no tick to wait for
	})
	<-passes
	<-passes
	cancel()
	run.Wait()
	leading, err := b.Act(context.Background(), func(context.Context, maintenance.Term) error { return nil })
	require.NoError(t, err)
	require.True(t, leading, "a stopped loop must have released the lease")
}
