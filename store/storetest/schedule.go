package storetest

import (
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

// testSchedules is the suite of [store.ScheduleStore]: the records and the
// leader lease as the store keeps them, then the Scheduler's schedules on
// top of the store, driven one leader pass at a time on the harness clock.
func testSchedules(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{"Records", "a schedule is saved, read, listed by name and by next instant, and deleted", testScheduleRecords},
		{"Lease", "one holder at a time leads, with an epoch that grows, and a stale epoch cannot record a fire", testScheduleLease},
		{"Cron", "a five-field cron spec fires each instant once", testScheduleCron},
		{"Seconds", "a cron spec with a seconds field fires each instant once", testScheduleSeconds},
		{"Interval", "an @every spec fires on the multiples of its interval since the epoch", testScheduleInterval},
		{"OneTime", "an @at spec fires once and then has no next instant", testScheduleOneTime},
		{"DSTSpring", "a wall-clock time the spring DST change skips does not fire that day", testScheduleDSTSpring},
		{"DSTAutumn", "a wall-clock time the autumn DST change repeats fires once", testScheduleDSTAutumn},
		{"PauseResume", "a paused schedule fires nothing, and resumes from its first instant after now", testSchedulePause},
		{"CatchUpSkip", "after downtime only the latest instant fires, when within the window", testCatchUpSkip},
		{"CatchUpEach", "after downtime each instant within the window fires once", testCatchUpEach},
		{"CatchUpOnce", "after downtime one run fires for all missed instants", testCatchUpOnce},
		{"OverlapAllow", "a new instant fires beside a run still going", testOverlapAllow},
		{"OverlapSkip", "an instant is skipped while the previous run is going", testOverlapSkip},
		{"OverlapBuffer", "an instant waits for the previous run and then fires once", testOverlapBuffer},
		{"OverlapCancel", "the previous run is cancelled and the new instant fires", testOverlapCancel},
		{"Backfill", "a backfill fires each instant of the range once, even twice over", testScheduleBackfill},
		{"Update", "a spec updated while the schedule runs takes effect from its next instant", testScheduleUpdate},
		{"Jitter", "a jittered instant fires once, within its jitter after the instant, carrying the instant", testScheduleJitter},
		{"TriggerListDelete", "a trigger fires now without moving the schedule; list shows every schedule; a deleted one is gone and fires nothing", testScheduleTriggerListDelete},
		{"TwoLeaders", "two processes on one store fire each instant once", testScheduleTwoLeaders},
	})
}

// harnessClock is a plait.Clock over the harness: the schedule cases call
// ScheduleFireDue themselves, so no timer ever needs to fire.
type harnessClock struct{ h *Harness }

func (c harnessClock) Now() time.Time { return c.h.Now() }
func (c harnessClock) NewTimer(time.Duration) plait.Timer {
	return idleTimer{}
}
func (c harnessClock) AfterFunc(time.Duration, func()) plait.Timer { return idleTimer{} }

type idleTimer struct{}

func (idleTimer) C() <-chan time.Time { return nil }
func (idleTimer) Stop() bool          { return true }

// fired is one EventScheduleFired.
type fired struct {
	Schedule string
	Instant  time.Time
	RunID    string
}

// schedRig is a Scheduler over the harness store with what it fired.
type schedRig struct {
	h  *Harness
	s  *plait.Scheduler
	mu sync.Mutex
	ev []fired
	// lease is the schedule leader lease this rig's Scheduler last took.
	lease store.LeaderReleaseParams
}

func newRig(t *testing.T, h *Harness) *schedRig {
	t.Helper()
	r := &schedRig{h: h}
	s, err := plait.New(h.Store, plait.WithClock(harnessClock{h}), plait.WithRemoteHandlers(),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		plait.WithObserver(func(e plait.Event) {
			r.mu.Lock()
			defer r.mu.Unlock()
			switch e.Type {
			case plait.EventScheduleFired:
				r.ev = append(r.ev, fired{e.Schedule, e.Instant, e.RunID})
			case plait.EventLeaderAcquired:
				r.lease = store.LeaderReleaseParams{Holder: e.Node, Epoch: e.Epoch}
			}
		}))
	require.NoError(t, err)
	r.s = s
	return r
}

// take returns and forgets the instants fired so far.
func (r *schedRig) take() []fired {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.ev
	r.ev = nil
	return out
}

// pass makes one leader pass, which must lead.
func (r *schedRig) pass(t *testing.T) *plait.ScheduleFireReport {
	t.Helper()
	rep, err := r.s.ScheduleFireDue(bg)
	require.NoError(t, err)
	require.True(t, rep.Leader, "a lone process leads")
	return rep
}

// to moves the harness clock to at (forward only) and makes a pass.
func (r *schedRig) to(t *testing.T, at time.Time) []fired {
	t.Helper()
	if d := at.Sub(r.h.Now()); d > 0 {
		r.h.Advance(d)
	}
	r.pass(t)
	return r.take()
}

func (r *schedRig) save(t *testing.T, sc *plait.Schedule) *plait.ScheduleInfo {
	t.Helper()
	if sc.Workflow == nil && sc.Build == nil {
		sc.Workflow = plait.NewWorkflow("sched").Task("a", "h-a", nil)
	}
	info, err := r.s.ScheduleSave(bg, sc)
	require.NoError(t, err)
	return info
}

func instantsOf(fs []fired) []time.Time {
	out := make([]time.Time, len(fs))
	for i, f := range fs {
		out[i] = f.Instant.UTC()
	}
	return out
}

// requireInstants checks the instants fired, to the millisecond.
func requireInstants(t *testing.T, rule string, want []time.Time, got []fired) {
	t.Helper()
	g := instantsOf(got)
	require.Len(t, g, len(want), "%s: fired %v, want %v", rule, g, want)
	for i := range want {
		require.True(t, want[i].Equal(g[i]), "%s: instant %d is %v, want %v", rule, i, g[i], want[i])
	}
}

// ceil returns the first multiple of d strictly after t.
func ceil(t time.Time, d time.Duration) time.Time {
	return t.Truncate(d).Add(d)
}

func scheduleStore(t *testing.T, h *Harness) store.ScheduleStore {
	t.Helper()
	ss, ok := h.Store.(store.ScheduleStore)
	require.True(t, ok)
	return ss
}
