package plait_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

func scheduleWorkflow() *plait.Workflow { return plait.NewWorkflow("tick").Task("a", "noop", nil) }

// TestScheduleSaveRefuses pins each refused schedule to its typed error,
// found before anything is written and in well under a millisecond.
func TestScheduleSaveRefuses(t *testing.T) {
	t.Parallel()
	s, err := plait.New(newMemStore(t), plait.WithRemoteHandlers(), plait.WithScheduleMinInterval(time.Minute))
	require.NoError(t, err)
	wf := scheduleWorkflow()
	cases := []struct {
		name  string
		sc    *plait.Schedule
		field string
	}{
		{"never fires", &plait.Schedule{Name: "a", Spec: "0 0 31 2 *", Workflow: wf}, "Spec"},
		{"zero interval", &plait.Schedule{Name: "a", Spec: "@every 0s", Workflow: wf}, "Spec"},
		{"negative interval", &plait.Schedule{Name: "a", Spec: "@every -1m", Workflow: wf}, "Spec"},
		{"below minimum", &plait.Schedule{Name: "a", Spec: "@every 30s", Workflow: wf}, "Spec"},
		{"cron below minimum", &plait.Schedule{Name: "a", Spec: "*/10 * * * * *", Workflow: wf}, "Spec"},
		{"unknown zone", &plait.Schedule{Name: "a", Spec: "@daily", TimeZone: "Mars/Olympus", Workflow: wf}, "TimeZone"},
		{"Local zone", &plait.Schedule{Name: "a", Spec: "@daily", TimeZone: "Local", Workflow: wf}, "TimeZone"},
		{"blank zone", &plait.Schedule{Name: "a", Spec: "@daily", TimeZone: " ", Workflow: wf}, "TimeZone"},
		{"long spec", &plait.Schedule{Name: "a", Spec: "@daily " + strings.Repeat(" ", 300), Workflow: wf}, "Spec"},
		{"empty spec", &plait.Schedule{Name: "a", Workflow: wf}, "Spec"},
		{"bad name", &plait.Schedule{Name: "a b", Spec: "@daily", Workflow: wf}, "Name"},
		{"empty name", &plait.Schedule{Spec: "@daily", Workflow: wf}, "Name"},
		{"long name", &plait.Schedule{Name: strings.Repeat("n", plait.ScheduleNameMax+1), Spec: "@daily", Workflow: wf}, "Name"},
		{"no workflow", &plait.Schedule{Name: "a", Spec: "@daily"}, "Workflow"},
		{"unknown policy", &plait.Schedule{Name: "a", Spec: "@daily", Workflow: wf, CatchUp: "later"}, "CatchUp"},
		{"negative jitter", &plait.Schedule{Name: "a", Spec: "@daily", Workflow: wf, Jitter: -time.Second}, "Jitter"},
	}
	for _, c := range cases {
		start := time.Now()
		_, err := s.ScheduleSave(context.Background(), c.sc)
		took := time.Since(start)
		require.ErrorIs(t, err, plait.ErrInvalidSchedule, c.name)
		var se *plait.ScheduleError
		require.True(t, errors.As(err, &se), c.name)
		require.Equal(t, c.field, se.Field, c.name)
		require.Less(t, took, 50*time.Millisecond, c.name)
	}
	list, err := s.ScheduleList(context.Background())
	require.NoError(t, err)
	require.Empty(t, list, "nothing was written")
}

func TestScheduleOptionsRefused(t *testing.T) {
	t.Parallel()
	_, err := plait.New(newMemStore(t), plait.WithScheduleTick(0), plait.WithLeaderLease(time.Microsecond), plait.WithScheduleMinInterval(-1))
	var oe *plait.OptionError
	require.ErrorAs(t, err, &oe)
	for _, name := range []string{"WithScheduleTick", "WithLeaderLease", "WithScheduleMinInterval"} {
		require.Contains(t, err.Error(), name)
	}
}

func TestScheduleUnsupported(t *testing.T) {
	t.Parallel()
	s, err := plait.New(coreOnly{newMemStore(t)})
	require.NoError(t, err)
	_, err = s.ScheduleSave(context.Background(), &plait.Schedule{Name: "a", Spec: "@daily", Workflow: scheduleWorkflow()})
	require.ErrorIs(t, err, plait.ErrUnsupported)
	_, err = s.ScheduleFireDue(context.Background())
	require.ErrorIs(t, err, plait.ErrUnsupported)
}

// TestRunLeadsSchedules runs the leader loop inside Run on a fake clock: the
// first process leads, fires each instant once as the clock reaches it, and
// hands the lease to a second process when it stops.
func TestRunLeadsSchedules(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	store := newMemStore(t, memstore.WithClock(clk))
	events := make(chan plait.Event, 64)
	observe := plait.WithObserver(func(e plait.Event) {
		switch e.Type {
		case plait.EventScheduleFired, plait.EventLeaderAcquired, plait.EventLeaderLost:
			events <- e
		}
	})
	a, err := plait.New(store, plait.WithClock(clk), plait.WithRemoteHandlers(), observe, quietLogger())
	require.NoError(t, err)
	b, err := plait.New(store, plait.WithClock(clk), plait.WithRemoteHandlers(), quietLogger())
	require.NoError(t, err)
	var seen []time.Time
	_, err = a.ScheduleSave(context.Background(), &plait.Schedule{Name: "sec", Spec: "@every 1s", Build: func(instant time.Time) (*plait.Workflow, error) {
		seen = append(seen, instant)
		return scheduleWorkflow(), nil
	}})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	next := func(want plait.EventType) plait.Event {
		t.Helper()
		select {
		case e := <-events:
			require.Equal(t, want, e.Type)
			return e
		case <-time.After(failAfter):
			t.Fatalf("no %s", want)
		}
		return plait.Event{}
	}
	require.Equal(t, int64(1), next(plait.EventLeaderAcquired).Epoch)
	for i := 1; i <= 3; i++ {
		at := clk.Now().Truncate(time.Second).Add(time.Second)
		// The leader waits for exactly the next instant.
		require.True(t, clk.WaitForDeadline(at, ctx.Done()))
		clk.Set(at)
		e := next(plait.EventScheduleFired)
		require.True(t, e.Instant.Equal(at), "instant %d: %v, want %v", i, e.Instant, at)
		require.Equal(t, "sec", e.Schedule)
	}
	require.Len(t, seen, 3, "Build is called once per instant")
	rep, err := b.ScheduleFireDue(context.Background())
	require.NoError(t, err)
	require.False(t, rep.Leader, "one leader at a time")

	cancel()
	require.NoError(t, <-done)
	next(plait.EventLeaderLost)
	rep, err = b.ScheduleFireDue(context.Background())
	require.NoError(t, err)
	require.True(t, rep.Leader, "the stopped leader gave its lease up")
}

// quietLogger is an option that discards the log.
func quietLogger() plait.Option {
	return plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// failingLeases is a memstore whose lease renewals fail once told to, as a
// store the leader can no longer reach would.
type failingLeases struct {
	*memstore.Store
	fail atomic.Bool
}

func (f *failingLeases) LeaderAcquire(ctx context.Context, p *store.LeaderAcquireParams) (*store.LeaderAcquireResult, error) {
	if f.fail.Load() {
		return nil, errors.New("store unreachable")
	}
	return f.Store.LeaderAcquire(ctx, p)
}

// TestLeaderGivesUpBeforeItsLeaseExpires pins that a leader that cannot
// renew keeps firing only until four fifths of its lease have passed on its
// own clock, so it has stopped before another process can take the lease.
func TestLeaderGivesUpBeforeItsLeaseExpires(t *testing.T) {
	t.Parallel()
	const lease = 10 * time.Second
	clk := fakeclock.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	st := &failingLeases{Store: newMemStore(t, memstore.WithClock(clk))}
	fired := 0
	s, err := plait.New(st, plait.WithClock(clk), plait.WithRemoteHandlers(), plait.WithLeaderLease(lease), quietLogger(),
		plait.WithObserver(func(e plait.Event) {
			if e.Type == plait.EventScheduleFired {
				fired++
			}
		}))
	require.NoError(t, err)
	ctx := context.Background()
	_, err = s.ScheduleSave(ctx, &plait.Schedule{Name: "sec", Spec: "@every 1s", Workflow: scheduleWorkflow()})
	require.NoError(t, err)
	rep, err := s.ScheduleFireDue(ctx)
	require.NoError(t, err)
	require.True(t, rep.Leader)

	st.fail.Store(true)
	clk.Advance(lease*4/5 - time.Second)
	rep, _ = s.ScheduleFireDue(ctx)
	require.True(t, rep.Leader, "within four fifths of the lease the leader still acts")
	require.Equal(t, 1, fired)
	clk.Advance(time.Second)
	rep, _ = s.ScheduleFireDue(ctx)
	require.False(t, rep.Leader, "past four fifths of the lease the leader has given up")
	require.Equal(t, 1, fired, "and fires nothing")

	// The lease has not expired in the store yet, and the deposed leader
	// cannot move the schedule.
	res, err := st.Store.LeaderAcquire(ctx, &store.LeaderAcquireParams{Holder: "other", TTL: lease})
	require.NoError(t, err)
	require.False(t, res.Acquired)
	clk.Advance(lease / 5)
	res, err = st.Store.LeaderAcquire(ctx, &store.LeaderAcquireParams{Holder: "other", TTL: lease})
	require.NoError(t, err)
	require.True(t, res.Acquired, "the lease expires after the leader gave up")
	_, err = st.ScheduleRecordFire(ctx, &store.ScheduleRecordFireParams{Name: "sec", LeaderEpoch: res.Lease.Epoch - 1, Version: 1})
	require.ErrorIs(t, err, plait.ErrStaleEpoch)
}
