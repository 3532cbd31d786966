package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

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
	_, err := r.s.RunCancel(bg, prev)
	require.NoError(t, err, rule)
	requireInstants(t, rule, []time.Time{first.Add(2 * time.Minute)}, r.to(t, first.Add(2*time.Minute)))
}

func testOverlapBuffer(t *testing.T, h *Harness, rule string) {
	r, first, prev := overlapRig(t, h, rule, plait.OverlapBuffer)
	requireInstants(t, rule, nil, r.to(t, first.Add(time.Minute)))
	requireInstants(t, rule, nil, r.to(t, first.Add(5*time.Minute+10*time.Second)))
	_, err := r.s.RunCancel(bg, prev)
	require.NoError(t, err, rule)
	// The held instant fires once, as the latest due, late as it is.
	requireInstants(t, rule, []time.Time{first.Add(5 * time.Minute)}, r.to(t, first.Add(5*time.Minute+20*time.Second)))
	requireInstants(t, rule, nil, r.to(t, first.Add(5*time.Minute+30*time.Second)))
}

func testOverlapCancel(t *testing.T, h *Harness, rule string) {
	r, first, prev := overlapRig(t, h, rule, plait.OverlapCancel)
	requireInstants(t, rule, []time.Time{first.Add(time.Minute)}, r.to(t, first.Add(time.Minute)))
	run, err := r.s.RunGet(bg, prev)
	require.NoError(t, err, rule)
	require.Equal(t, store.RunCancelled, run.Status, rule)
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
	a.mu.Lock()
	lease := a.lease
	a.mu.Unlock()
	require.NoError(t, h.Store.(store.ScheduleStore).LeaderRelease(context.Background(), &lease), rule)
	rb, err = b.s.ScheduleFireDue(bg)
	require.NoError(t, err, rule)
	require.True(t, rb.Leader, "%s: a released lease is taken at once", rule)
	if errors.Is(err, store.ErrStaleEpoch) {
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
	require.ErrorIs(t, err, store.ErrNotFound, rule)
	require.ErrorIs(t, r.s.ScheduleDelete(bg, "b-hourly"), store.ErrNotFound, rule)
	requireInstants(t, rule, nil, r.to(t, before.NextFire.Add(time.Hour)))
	_, err = r.s.ScheduleTrigger(bg, "b-hourly")
	require.ErrorIs(t, err, store.ErrNotFound, rule)
}
