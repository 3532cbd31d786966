package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

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

	run, err := r.s.RunGet(bg, got[0].RunID)
	require.NoError(t, err, rule)
	require.Equal(t, "five", run.Metadata[plait.MetadataSchedule], rule)
	require.Equal(t, first.UTC().Format(time.RFC3339Nano), run.Metadata[plait.MetadataInstant], rule)
	require.Equal(t, "x", run.Metadata["team"], rule)
	info, err = r.s.ScheduleGet(bg, "five")
	require.NoError(t, err, rule)
	require.True(t, info.LastFire.Equal(first.Add(5*time.Minute)), rule)
	require.True(t, info.NextFire.Equal(first.Add(10*time.Minute)), rule)
	require.NotEmpty(t, info.LastRunID, rule)
	require.Equal(t, store.RunPending, info.LastRunStatus, rule)
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
