package storetest

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
)

// testSchedules is the suite of [plait.ScheduleStore]: the records and the
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
}

func newRig(t *testing.T, h *Harness) *schedRig {
	t.Helper()
	r := &schedRig{h: h}
	s, err := plait.New(h.Store, plait.WithClock(harnessClock{h}), plait.WithRemoteHandlers(),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		plait.WithObserver(func(e plait.Event) {
			if e.Type == plait.EventScheduleFired {
				r.mu.Lock()
				r.ev = append(r.ev, fired{e.Schedule, e.Instant, e.RunID})
				r.mu.Unlock()
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

func scheduleStore(t *testing.T, h *Harness) plait.ScheduleStore {
	t.Helper()
	ss, ok := h.Store.(plait.ScheduleStore)
	require.True(t, ok)
	return ss
}

func testScheduleRecords(t *testing.T, h *Harness, rule string) {
	ss := scheduleStore(t, h)
	now := h.Now()
	_, err := ss.ScheduleGet(bg, &plait.ScheduleGetParams{Name: "a"})
	require.ErrorIs(t, err, plait.ErrNotFound, rule)
	for i, name := range []string{"c", "a", "b", "d"} {
		next := now.Add(time.Duration(4-i) * time.Minute)
		if name == "d" {
			next = time.Time{}
		}
		rec, err := ss.ScheduleSave(bg, &plait.ScheduleSaveParams{Name: name, Definition: []byte(`{"x":` + name + `}`), NextFire: next})
		require.NoError(t, err, rule)
		require.Equal(t, int64(1), rec.Version, rule)
	}
	rec, err := ss.ScheduleSave(bg, &plait.ScheduleSaveParams{Name: "a", Definition: []byte("v2"), NextFire: now.Add(time.Minute)})
	require.NoError(t, err, rule)
	require.Equal(t, int64(2), rec.Version, rule)
	got, err := ss.ScheduleGet(bg, &plait.ScheduleGetParams{Name: "a"})
	require.NoError(t, err, rule)
	require.Equal(t, "v2", string(got.Definition), rule)
	require.True(t, got.NextFire.Equal(now.Add(time.Minute)), rule)

	page, err := ss.ScheduleList(bg, &plait.ScheduleListParams{Limit: 2})
	require.NoError(t, err, rule)
	require.True(t, page.More, rule)
	require.Equal(t, []string{"a", "b"}, names(page.Schedules), rule)
	page, err = ss.ScheduleList(bg, &plait.ScheduleListParams{After: "b", Limit: 5})
	require.NoError(t, err, rule)
	require.False(t, page.More, rule)
	require.Equal(t, []string{"c", "d"}, names(page.Schedules), rule)

	due, err := ss.ScheduleList(bg, &plait.ScheduleListParams{DueBy: now.Add(3 * time.Minute), Limit: 10})
	require.NoError(t, err, rule)
	require.Equal(t, []string{"a", "b"}, names(due.Schedules), "%s: due by next instant, earliest first, none without one", rule)

	require.NoError(t, ss.ScheduleDelete(bg, &plait.ScheduleDeleteParams{Name: "a"}), rule)
	require.ErrorIs(t, ss.ScheduleDelete(bg, &plait.ScheduleDeleteParams{Name: "a"}), plait.ErrNotFound, rule)
	due, err = ss.ScheduleList(bg, &plait.ScheduleListParams{DueBy: now.Add(3 * time.Minute), Limit: 10})
	require.NoError(t, err, rule)
	require.Equal(t, []string{"b"}, names(due.Schedules), rule)
}

func names(recs []*plait.ScheduleRecord) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.Name)
	}
	return out
}

func testScheduleLease(t *testing.T, h *Harness, rule string) {
	ss := scheduleStore(t, h)
	ttl := 10 * time.Second
	a, err := ss.LeaderAcquire(bg, &plait.LeaderAcquireParams{Holder: "p1", TTL: ttl})
	require.NoError(t, err, rule)
	require.True(t, a.Acquired, rule)
	b, err := ss.LeaderAcquire(bg, &plait.LeaderAcquireParams{Holder: "p2", TTL: ttl})
	require.NoError(t, err, rule)
	require.False(t, b.Acquired, rule)
	require.Equal(t, "p1", b.Lease.Holder, rule)
	require.Equal(t, a.Lease.Epoch, b.Lease.Epoch, rule)

	_, err = ss.ScheduleSave(bg, &plait.ScheduleSaveParams{Name: "s", Definition: []byte("d"), NextFire: h.Now()})
	require.NoError(t, err, rule)
	next := h.Now().Add(time.Minute)
	rec, err := ss.ScheduleRecordFire(bg, &plait.ScheduleRecordFireParams{Name: "s", LeaderEpoch: a.Lease.Epoch, Version: 1,
		NextFire: next, LastFire: h.Now(), LastRunID: "r1"})
	require.NoError(t, err, rule)
	require.True(t, rec.NextFire.Equal(next), rule)
	require.Equal(t, "r1", rec.LastRunID, rule)

	h.Advance(ttl / 2)
	renew, err := ss.LeaderAcquire(bg, &plait.LeaderAcquireParams{Holder: "p1", Epoch: a.Lease.Epoch, TTL: ttl})
	require.NoError(t, err, rule)
	require.True(t, renew.Acquired, rule)
	require.Equal(t, a.Lease.Epoch, renew.Lease.Epoch, "%s: a renewal keeps the epoch", rule)
	again, err := ss.LeaderAcquire(bg, &plait.LeaderAcquireParams{Holder: "p1", TTL: ttl})
	require.NoError(t, err, rule)
	require.True(t, again.Acquired, "%s: a holder that lost its epoch (a lost reply) gets its lease back", rule)
	require.Equal(t, a.Lease.Epoch, again.Lease.Epoch, rule)
	h.Advance(ttl)
	c, err := ss.LeaderAcquire(bg, &plait.LeaderAcquireParams{Holder: "p2", TTL: ttl})
	require.NoError(t, err, rule)
	require.True(t, c.Acquired, "%s: an expired lease is free", rule)
	require.Greater(t, c.Lease.Epoch, a.Lease.Epoch, rule)

	_, err = ss.ScheduleRecordFire(bg, &plait.ScheduleRecordFireParams{Name: "s", LeaderEpoch: a.Lease.Epoch, Version: 1, NextFire: h.Now()})
	require.ErrorIs(t, err, plait.ErrStaleEpoch, rule)
	got, err := ss.ScheduleGet(bg, &plait.ScheduleGetParams{Name: "s"})
	require.NoError(t, err, rule)
	require.True(t, got.NextFire.Equal(next), "%s: a deposed leader changed nothing", rule)

	// A save since the leader read the schedule keeps its next instant.
	_, err = ss.ScheduleSave(bg, &plait.ScheduleSaveParams{Name: "s", Definition: []byte("d2"), NextFire: next.Add(time.Hour)})
	require.NoError(t, err, rule)
	got, err = ss.ScheduleRecordFire(bg, &plait.ScheduleRecordFireParams{Name: "s", LeaderEpoch: c.Lease.Epoch, Version: 1,
		NextFire: next, LastFire: next, LastRunID: "r2"})
	require.NoError(t, err, rule)
	require.True(t, got.NextFire.Equal(next.Add(time.Hour)), rule)
	require.Equal(t, "r2", got.LastRunID, rule)

	// A release by the old holder does nothing; by the holder frees it.
	require.NoError(t, ss.LeaderRelease(bg, &plait.LeaderReleaseParams{Holder: "p1", Epoch: a.Lease.Epoch}), rule)
	d, err := ss.LeaderAcquire(bg, &plait.LeaderAcquireParams{Holder: "p3", TTL: ttl})
	require.NoError(t, err, rule)
	require.False(t, d.Acquired, rule)
	require.NoError(t, ss.LeaderRelease(bg, &plait.LeaderReleaseParams{Holder: "p2", Epoch: c.Lease.Epoch}), rule)
	d, err = ss.LeaderAcquire(bg, &plait.LeaderAcquireParams{Holder: "p3", TTL: ttl})
	require.NoError(t, err, rule)
	require.True(t, d.Acquired, rule)
	require.Greater(t, d.Lease.Epoch, c.Lease.Epoch, rule)
}

func testScheduleCron(t *testing.T, h *Harness, rule string) {
	r := newRig(t, h)
	info := r.save(t, &plait.Schedule{Name: "five", Spec: "*/5 * * * *", Metadata: map[string]string{"team": "x"}})
	first := ceil(h.Now(), 5*time.Minute)
	require.True(t, info.NextFire.Equal(first), rule)
	requireInstants(t, rule, nil, r.to(t, first.Add(-time.Second)))
	got := r.to(t, first)
	requireInstants(t, rule, []time.Time{first}, got)
	requireInstants(t, rule, nil, r.to(t, first.Add(time.Minute)))
	requireInstants(t, rule, []time.Time{first.Add(5 * time.Minute)}, r.to(t, first.Add(5*time.Minute)))

	run, err := r.s.Get(bg, got[0].RunID)
	require.NoError(t, err, rule)
	require.Equal(t, "five", run.Metadata[plait.MetadataSchedule], rule)
	require.Equal(t, first.UTC().Format(time.RFC3339Nano), run.Metadata[plait.MetadataInstant], rule)
	require.Equal(t, "x", run.Metadata["team"], rule)
	info, err = r.s.ScheduleGet(bg, "five")
	require.NoError(t, err, rule)
	require.True(t, info.LastFire.Equal(first.Add(5*time.Minute)), rule)
	require.True(t, info.NextFire.Equal(first.Add(10*time.Minute)), rule)
	require.NotEmpty(t, info.LastRunID, rule)
	require.Equal(t, plait.RunPending, info.LastRunStatus, rule)
}

func testScheduleSeconds(t *testing.T, h *Harness, rule string) {
	r := newRig(t, h)
	r.save(t, &plait.Schedule{Name: "tens", Spec: "*/10 * * * * *"})
	first := ceil(h.Now(), 10*time.Second)
	for i := 0; i < 3; i++ {
		at := first.Add(time.Duration(i) * 10 * time.Second)
		requireInstants(t, rule, []time.Time{at}, r.to(t, at))
	}
}

func testScheduleInterval(t *testing.T, h *Harness, rule string) {
	r := newRig(t, h)
	r.save(t, &plait.Schedule{Name: "ninety", Spec: "@every 90s"})
	first := time.UnixMilli((h.Now().UnixMilli()/90000 + 1) * 90000).UTC()
	for i := 0; i < 3; i++ {
		at := first.Add(time.Duration(i) * 90 * time.Second)
		requireInstants(t, rule, []time.Time{at}, r.to(t, at))
	}
}

func testScheduleOneTime(t *testing.T, h *Harness, rule string) {
	r := newRig(t, h)
	at := h.Now().Add(time.Hour).Truncate(time.Second)
	r.save(t, &plait.Schedule{Name: "once", Spec: "@at " + at.Format(time.RFC3339)})
	requireInstants(t, rule, []time.Time{at}, r.to(t, at))
	requireInstants(t, rule, nil, r.to(t, at.Add(24*time.Hour)))
	info, err := r.s.ScheduleGet(bg, "once")
	require.NoError(t, err, rule)
	require.True(t, info.NextFire.IsZero(), rule)
}

// newYork loads the zone the DST cases use, or skips without tzdata.
func newYork(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	return loc
}

func testScheduleDSTSpring(t *testing.T, h *Harness, rule string) {
	ny := newYork(t)
	r := newRig(t, h)
	// 2030-03-10: clocks go from 02:00 EST to 03:00 EDT.
	r.to(t, time.Date(2030, 3, 9, 12, 0, 0, 0, ny))
	r.save(t, &plait.Schedule{Name: "spring", Spec: "30 2 * * *", TimeZone: "America/New_York"})
	var got []fired
	for at := h.Now(); at.Before(time.Date(2030, 3, 11, 12, 0, 0, 0, ny)); at = at.Add(30 * time.Minute) {
		got = append(got, r.to(t, at)...)
	}
	requireInstants(t, rule, []time.Time{time.Date(2030, 3, 11, 2, 30, 0, 0, ny).UTC()}, got)
}

func testScheduleDSTAutumn(t *testing.T, h *Harness, rule string) {
	ny := newYork(t)
	r := newRig(t, h)
	// 2030-11-03: clocks go from 02:00 EDT back to 01:00 EST.
	r.to(t, time.Date(2030, 11, 2, 12, 0, 0, 0, ny))
	r.save(t, &plait.Schedule{Name: "autumn", Spec: "*/30 1 * * *", TimeZone: "America/New_York"})
	var got []fired
	for at := h.Now(); at.Before(time.Date(2030, 11, 3, 12, 0, 0, 0, ny)); at = at.Add(15 * time.Minute) {
		got = append(got, r.to(t, at)...)
	}
	edt := time.FixedZone("EDT", -4*3600)
	requireInstants(t, rule, []time.Time{
		time.Date(2030, 11, 3, 1, 0, 0, 0, edt).UTC(),
		time.Date(2030, 11, 3, 1, 30, 0, 0, edt).UTC(),
	}, got)
}

func testSchedulePause(t *testing.T, h *Harness, rule string) {
	r := newRig(t, h)
	r.save(t, &plait.Schedule{Name: "p", Spec: "@every 1m"})
	first := ceil(h.Now(), time.Minute)
	info, err := r.s.SchedulePause(bg, "p")
	require.NoError(t, err, rule)
	require.True(t, info.Paused, rule)
	require.True(t, info.NextFire.IsZero(), rule)
	requireInstants(t, rule, nil, r.to(t, first.Add(3*time.Minute)))
	info, err = r.s.ScheduleResume(bg, "p")
	require.NoError(t, err, rule)
	require.False(t, info.Paused, rule)
	require.True(t, info.NextFire.Equal(first.Add(4*time.Minute)), rule)
	requireInstants(t, rule, []time.Time{first.Add(4 * time.Minute)}, r.to(t, first.Add(4*time.Minute)))
}

func testCatchUpSkip(t *testing.T, h *Harness, rule string) {
	r := newRig(t, h)
	r.save(t, &plait.Schedule{Name: "c", Spec: "@every 1m"})
	first := ceil(h.Now(), time.Minute)
	// Ten instants late: only the latest, 30s old, is within the window.
	requireInstants(t, rule, []time.Time{first.Add(9 * time.Minute)}, r.to(t, first.Add(9*time.Minute+30*time.Second)))
	// A window shorter than the lateness fires nothing.
	r.save(t, &plait.Schedule{Name: "c", Spec: "@every 1m", CatchUpWindow: 10 * time.Second})
	requireInstants(t, rule, nil, r.to(t, first.Add(12*time.Minute+30*time.Second)))
	requireInstants(t, rule, []time.Time{first.Add(13 * time.Minute)}, r.to(t, first.Add(13*time.Minute)))
}

func testCatchUpEach(t *testing.T, h *Harness, rule string) {
	r := newRig(t, h)
	r.save(t, &plait.Schedule{Name: "c", Spec: "@every 1m", CatchUp: plait.CatchUpEach, CatchUpWindow: 5 * time.Minute})
	first := ceil(h.Now(), time.Minute)
	now := first.Add(9*time.Minute + 30*time.Second)
	var want []time.Time
	for i := 5; i <= 9; i++ {
		want = append(want, first.Add(time.Duration(i)*time.Minute))
	}
	requireInstants(t, rule, want, r.to(t, now))
	requireInstants(t, rule, nil, r.to(t, now))
}

func testCatchUpOnce(t *testing.T, h *Harness, rule string) {
	r := newRig(t, h)
	r.save(t, &plait.Schedule{Name: "c", Spec: "@every 1m", CatchUp: plait.CatchUpOnce, CatchUpWindow: time.Second})
	first := ceil(h.Now(), time.Minute)
	requireInstants(t, rule, []time.Time{first.Add(9 * time.Minute)}, r.to(t, first.Add(9*time.Minute+30*time.Second)))
}

// overlapRig fires the first instant of an every-minute schedule with the
// policy and returns the rig, the first instant and its run id. No process
// works the runs, so that run is still going.
func overlapRig(t *testing.T, h *Harness, rule string, p plait.OverlapPolicy) (*schedRig, time.Time, string) {
	r := newRig(t, h)
	r.save(t, &plait.Schedule{Name: "o", Spec: "@every 1m", Overlap: p})
	first := ceil(h.Now(), time.Minute)
	got := r.to(t, first)
	requireInstants(t, rule, []time.Time{first}, got)
	return r, first, got[0].RunID
}

func testOverlapAllow(t *testing.T, h *Harness, rule string) {
	r, first, _ := overlapRig(t, h, rule, plait.OverlapAllow)
	requireInstants(t, rule, []time.Time{first.Add(time.Minute)}, r.to(t, first.Add(time.Minute)))
}

func testOverlapSkip(t *testing.T, h *Harness, rule string) {
	r, first, prev := overlapRig(t, h, rule, plait.OverlapSkip)
	requireInstants(t, rule, nil, r.to(t, first.Add(time.Minute)))
	_, err := r.s.Cancel(bg, prev)
	require.NoError(t, err, rule)
	requireInstants(t, rule, []time.Time{first.Add(2 * time.Minute)}, r.to(t, first.Add(2*time.Minute)))
}

func testOverlapBuffer(t *testing.T, h *Harness, rule string) {
	r, first, prev := overlapRig(t, h, rule, plait.OverlapBuffer)
	requireInstants(t, rule, nil, r.to(t, first.Add(time.Minute)))
	requireInstants(t, rule, nil, r.to(t, first.Add(5*time.Minute+10*time.Second)))
	_, err := r.s.Cancel(bg, prev)
	require.NoError(t, err, rule)
	// The held instant fires once, as the latest due, late as it is.
	requireInstants(t, rule, []time.Time{first.Add(5 * time.Minute)}, r.to(t, first.Add(5*time.Minute+20*time.Second)))
	requireInstants(t, rule, nil, r.to(t, first.Add(5*time.Minute+30*time.Second)))
}

func testOverlapCancel(t *testing.T, h *Harness, rule string) {
	r, first, prev := overlapRig(t, h, rule, plait.OverlapCancel)
	requireInstants(t, rule, []time.Time{first.Add(time.Minute)}, r.to(t, first.Add(time.Minute)))
	run, err := r.s.Get(bg, prev)
	require.NoError(t, err, rule)
	require.Equal(t, plait.RunCancelled, run.Status, rule)
}

func testScheduleBackfill(t *testing.T, h *Harness, rule string) {
	r := newRig(t, h)
	r.save(t, &plait.Schedule{Name: "b", Spec: "@every 1m", Paused: true})
	from := h.Now().Truncate(time.Minute).Add(-10 * time.Minute)
	to := from.Add(4 * time.Minute)
	runs, err := r.s.ScheduleBackfill(bg, "b", from, to)
	require.NoError(t, err, rule)
	require.Len(t, runs, 5, rule)
	again, err := r.s.ScheduleBackfill(bg, "b", from.Add(-time.Minute), to)
	require.NoError(t, err, rule)
	require.Len(t, again, 6, rule)
	for i, run := range runs {
		require.Equal(t, run.ID, again[i+1].ID, "%s: instant %d fired twice", rule, i)
		require.Equal(t, from.Add(time.Duration(i)*time.Minute).UTC().Format(time.RFC3339Nano), run.Metadata[plait.MetadataInstant], rule)
	}
}

func testScheduleUpdate(t *testing.T, h *Harness, rule string) {
	r := newRig(t, h)
	r.save(t, &plait.Schedule{Name: "u", Spec: "@every 1m"})
	first := ceil(h.Now(), time.Minute)
	requireInstants(t, rule, []time.Time{first}, r.to(t, first))
	info := r.save(t, &plait.Schedule{Name: "u", Spec: "@every 10m"})
	tenth := ceil(first, 10*time.Minute)
	require.True(t, info.NextFire.Equal(tenth), rule)
	require.True(t, info.LastFire.Equal(first), "%s: an update keeps the last instant", rule)
	requireInstants(t, rule, nil, r.to(t, first.Add(time.Minute)))
	requireInstants(t, rule, []time.Time{tenth}, r.to(t, tenth))
	// Saving the same schedule again does not move it.
	info = r.save(t, &plait.Schedule{Name: "u", Spec: "@every 10m"})
	require.True(t, info.NextFire.Equal(tenth.Add(10*time.Minute)), rule)
}

func testScheduleTwoLeaders(t *testing.T, h *Harness, rule string) {
	a, b := newRig(t, h), newRig(t, h)
	a.save(t, &plait.Schedule{Name: "two", Spec: "@every 1m"})
	first := ceil(h.Now(), time.Minute)
	h.Advance(first.Sub(h.Now()))
	ra, err := a.s.ScheduleFireDue(bg)
	require.NoError(t, err, rule)
	rb, err := b.s.ScheduleFireDue(bg)
	require.NoError(t, err, rule)
	require.True(t, ra.Leader != rb.Leader, "%s: one leader at a time", rule)
	// The follower fires the same instant as a second leader would: the
	// keyed create answers the first run.
	runs, err := b.s.ScheduleBackfill(bg, "two", first, first)
	require.NoError(t, err, rule)
	got := append(a.take(), b.take()...)
	require.Len(t, got, 1, rule)
	require.Equal(t, got[0].RunID, runs[0].ID, rule)
	require.NoError(t, a.s.ScheduleLeaderRelease(context.Background()), rule)
	rb, err = b.s.ScheduleFireDue(bg)
	require.NoError(t, err, rule)
	require.True(t, rb.Leader, "%s: a released lease is taken at once", rule)
	if errors.Is(err, plait.ErrStaleEpoch) {
		t.Fatal(rule)
	}
}

func testScheduleJitter(t *testing.T, h *Harness, rule string) {
	r := newRig(t, h)
	const jitter = 40 * time.Second
	r.save(t, &plait.Schedule{Name: "spread", Spec: "@every 1m", Jitter: jitter})
	first := ceil(h.Now(), time.Minute)
	var got []fired
	var firedAt time.Time
	for at := first; at.Before(first.Add(time.Minute)); at = at.Add(time.Second) {
		f := r.to(t, at)
		if len(f) > 0 && firedAt.IsZero() {
			firedAt = at
		}
		got = append(got, f...)
	}
	requireInstants(t, rule, []time.Time{first}, got)
	require.False(t, firedAt.Before(first), rule)
	require.Less(t, firedAt.Sub(first), jitter, rule)
}

func testScheduleTriggerListDelete(t *testing.T, h *Harness, rule string) {
	r := newRig(t, h)
	before := r.save(t, &plait.Schedule{Name: "b-hourly", Spec: "@hourly", Tenant: "acme", Service: "billing"})
	r.save(t, &plait.Schedule{Name: "a-daily", Spec: "@daily", Paused: true})
	run, err := r.s.ScheduleTrigger(bg, "b-hourly")
	require.NoError(t, err, rule)
	require.Equal(t, "b-hourly", run.Metadata[plait.MetadataSchedule], rule)
	require.Equal(t, h.Now().UTC().Format(time.RFC3339Nano), run.Metadata[plait.MetadataInstant], rule)
	require.Equal(t, "acme", run.Tenant, rule)
	require.Equal(t, "billing", run.Service, rule)
	after, err := r.s.ScheduleGet(bg, "b-hourly")
	require.NoError(t, err, rule)
	require.True(t, after.NextFire.Equal(before.NextFire), "%s: a trigger does not move the next instant", rule)
	require.True(t, after.LastFire.IsZero(), rule)

	_, err = r.s.ScheduleTrigger(bg, "a-daily")
	require.NoError(t, err, "%s: a paused schedule can be triggered", rule)
	list, err := r.s.ScheduleList(bg)
	require.NoError(t, err, rule)
	require.Len(t, list, 2, rule)
	require.Equal(t, "a-daily", list[0].Name, rule)
	require.True(t, list[0].Paused, rule)
	require.Equal(t, "b-hourly", list[1].Name, rule)

	require.NoError(t, r.s.ScheduleDelete(bg, "b-hourly"), rule)
	_, err = r.s.ScheduleGet(bg, "b-hourly")
	require.ErrorIs(t, err, plait.ErrNotFound, rule)
	require.ErrorIs(t, r.s.ScheduleDelete(bg, "b-hourly"), plait.ErrNotFound, rule)
	requireInstants(t, rule, nil, r.to(t, before.NextFire.Add(time.Hour)))
	_, err = r.s.ScheduleTrigger(bg, "b-hourly")
	require.ErrorIs(t, err, plait.ErrNotFound, rule)
}
