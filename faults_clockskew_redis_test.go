package plait_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/clock"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
)

// skewed is the wall clock of a process whose clock is off by skew: its
// Now is off, its timers count real durations, as an NTP-less host's do.
type skewed struct {
	clock.Real
	skew time.Duration
}

func (c skewed) Now() time.Time { return time.Now().Add(c.skew) }

// TestClockSkewBetweenProcesses runs two processes whose clocks are 30 s
// ahead of and 30 s behind the store's (Redis TIME, which the store uses
// for every due time and lease deadline), sharing one redis-server:
//
//   - a handler longer than the lease, run by either, keeps its lease:
//     leases are extended on the store's clock and each process keeps its
//     own lease timers on durations, so the process ahead, sweeping every
//     50 ms, never finds the lease expired (no crash, one call);
//   - a task delayed by 700 ms submitted by the process ahead starts no
//     earlier than 700 ms after its submit: the store adds the delay to
//     its own clock;
//   - a schedule fires each instant once across a change of leader from
//     the process behind to the process ahead, with no instant skipped in
//     between; the leader fires an instant when its own clock reaches it,
//     so the process ahead fires up to its lead (30 s) early. That bound is
//     documented in docs/failure-modes.md.
//
// It fails if the store took due times or lease deadlines from the
// caller's clock (the delay would run 30 s early, the sweep of the process
// ahead would take the lease), or if a new leader computed its next
// instant from its own clock instead of the one recorded (instants
// skipped or fired twice).
func TestClockSkewBetweenProcesses(t *testing.T) {
	t.Parallel()
	const (
		skew  = 30 * time.Second
		lease = time.Second
		hold  = 1500 * time.Millisecond
		delay = 700 * time.Millisecond
		every = time.Second
	)
	srv, err := sharedRedis()
	if err != nil {
		redistest.Skip(t, err)
	}
	st := newRedisStore(t, srv.Addr, nil) // Redis TIME: the store's one clock
	ahead, behind := skewed{skew: skew}, skewed{skew: -skew}

	var mu sync.Mutex
	calls := map[string]int{}
	started := map[string]time.Time{}
	handlers := func(w *worker) {
		for _, name := range []string{"hold", "delayed"} {
			work := time.Duration(0)
			if name == "hold" {
				work = hold
			}
			require.NoError(t, w.s.Handle(name, func(ctx context.Context, task *plait.Task) (any, error) {
				mu.Lock()
				calls[task.RunID]++
				started[task.RunID] = time.Now()
				mu.Unlock()
				tm := time.NewTimer(work) // the handler's work
				defer tm.Stop()
				select {
				case <-tm.C:
					return nil, nil
				case <-ctx.Done():
					return nil, context.Cause(ctx)
				}
			}))
		}
	}
	opts := []plait.Option{plait.WithLeaseDuration(lease), plait.WithSweepInterval(50 * time.Millisecond),
		plait.WithIdleWait(50 * time.Millisecond), plait.WithConcurrency(4)}
	// The process behind leads first and runs no task, so stopping it
	// cuts no attempt short.
	lead := newWorker(t, st, "behind", append(opts, plait.WithClock(behind))...)
	work := newWorker(t, st, "ahead", append(opts, plait.WithClock(ahead), plait.WithoutScheduleLeader())...)
	handlers(work)

	_, err = lead.s.ScheduleSave(context.Background(), &plait.Schedule{
		Name: "tick", Spec: "@every 1s", CatchUp: plait.CatchUpEach,
		Workflow: plait.NewWorkflow("tick").Task("t", "tick", nil),
	})
	require.NoError(t, err)
	lead.start(t)
	work.start(t)

	var holds, delayed []string
	submitted := map[string]time.Time{}
	for i := 0; i < 2; i++ {
		r, err := work.s.Submit(context.Background(), plait.NewWorkflow("hold").Task("x", "hold", nil, plait.Retry(0)))
		require.NoError(t, err)
		holds = append(holds, r.ID)
	}
	for i := 0; i < 4; i++ {
		begin := time.Now()
		r, err := work.s.Submit(context.Background(), plait.NewWorkflow("delayed").Task("x", "delayed", nil, plait.Delay(delay)))
		require.NoError(t, err)
		submitted[r.ID] = begin
		delayed = append(delayed, r.ID)
	}

	// The process behind leads: it fires two instants, late by its lag.
	lead.events.waitFor(t, 2, is(plait.EventRunSubmitted, ""))
	lead.stop(t) // hands the leader lease back
	// The process ahead takes over and fires the instants missed since,
	// then the next ones, early by its lead: wait for one it fired on its
	// own second pass.
	next := newWorker(t, st, "ahead-leader", append(opts, plait.WithClock(ahead))...)
	handlers(next)
	next.start(t)
	first := instantOf(t, st, next.events.waitFor(t, 1, is(plait.EventRunSubmitted, "")).RunID)
	for n := 2; ; n++ {
		if instantOf(t, st, next.events.waitFor(t, n, is(plait.EventRunSubmitted, "")).RunID).After(first.Add(every)) {
			break
		}
	}

	for _, id := range holds {
		run := waitRun(t, st, id)
		require.Equal(t, plait.RunCompleted, run.Status)
		require.Zero(t, run.Task("x").Crashes, "no lease is stolen")
		require.Len(t, run.Task("x").Attempts, 1)
	}
	var earliest time.Duration = time.Hour
	for _, id := range delayed {
		run := waitRun(t, st, id)
		require.Equal(t, plait.RunCompleted, run.Status)
		mu.Lock()
		after := started[id].Sub(submitted[id])
		mu.Unlock()
		// The store reads its clock cut down to the millisecond, so the
		// due time may fall up to a millisecond before submit + delay.
		require.GreaterOrEqual(t, after, delay-time.Millisecond, "a delayed task never starts early, whatever the submitter's clock")
		earliest = min(earliest, after)
	}
	mu.Lock()
	for id, n := range calls {
		require.Equal(t, 1, n, "run %s runs once", id)
	}
	mu.Unlock()
	for _, w := range []*worker{work, next} {
		require.Zero(t, w.events.count(is(plait.EventTaskLeaseLost, "")), "no lease is lost")
	}

	// Each instant once, none skipped, and none earlier than the lead of
	// the clock of the process that fired it.
	next.stop(t)
	fired := map[int64]int{}
	var lo, hi int64
	var early, late time.Duration
	res, err := next.s.RunList(context.Background(), plait.RunListParams{Filter: store.RunFilter{Workflow: "tick"}, Limit: store.QueryLimitMax})
	require.NoError(t, err)
	require.Empty(t, res.NextCursor)
	for _, run := range res.Runs {
		at, err := time.Parse(time.RFC3339Nano, run.Metadata[plait.MetadataInstant])
		require.NoError(t, err)
		ms := at.UnixMilli()
		fired[ms]++
		if lo == 0 || ms < lo {
			lo = ms
		}
		hi = max(hi, ms)
		early = max(early, at.Sub(run.CreatedAt))
		late = max(late, run.CreatedAt.Sub(at))
	}
	for ms := lo; ms <= hi; ms += every.Milliseconds() {
		require.Equal(t, 1, fired[ms], "instant %s fires once", time.UnixMilli(ms).UTC())
	}
	require.Len(t, fired, len(res.Runs))
	require.Greater(t, early, skew/2, "the process ahead fired instants early: the skew took effect")
	require.LessOrEqual(t, early, skew+10*time.Millisecond, "a leader fires no earlier than its clock's lead")
	t.Logf("FIGURE clock skew: processes at -%s and +%s of Redis TIME: delayed task started %s after submit (delay %s, never early); leases stolen 0 of %d held %s on a %s lease; %d schedule instants each fired once across a leader change, earliest %s before its instant (bound: the leader's lead, %s), latest %s after",
		skew, skew, earliest.Round(time.Millisecond), delay, len(holds), hold, lease, len(fired), early.Round(time.Millisecond), skew, late.Round(time.Millisecond))
}

// instantOf is the schedule instant of a fired run.
func instantOf(t *testing.T, st store.Store, runID string) time.Time {
	t.Helper()
	run, err := st.RunGet(context.Background(), &store.RunGetParams{ID: runID})
	require.NoError(t, err)
	at, err := time.Parse(time.RFC3339Nano, run.Metadata[plait.MetadataInstant])
	require.NoError(t, err)
	return at
}
