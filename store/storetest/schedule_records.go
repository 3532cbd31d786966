package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

func testScheduleRecords(t *testing.T, h *Harness, rule string) {
	ss := scheduleStore(t, h)
	now := h.Now()
	_, err := ss.ScheduleGet(bg, &store.ScheduleGetParams{Name: "a"})
	require.ErrorIs(t, err, store.ErrNotFound, rule)
	for i, name := range []string{"c", "a", "b", "d"} {
		next := now.Add(time.Duration(4-i) * time.Minute)
		if name == "d" {
			next = time.Time{}
		}
		rec, err := ss.ScheduleSave(bg, &store.ScheduleSaveParams{Name: name, Definition: []byte(`{"x":` + name + `}`), NextFire: next})
		require.NoError(t, err, rule)
		require.Equal(t, int64(1), rec.Version, rule)
	}
	rec, err := ss.ScheduleSave(bg, &store.ScheduleSaveParams{Name: "a", Definition: []byte("v2"), NextFire: now.Add(time.Minute)})
	require.NoError(t, err, rule)
	require.Equal(t, int64(2), rec.Version, rule)
	got, err := ss.ScheduleGet(bg, &store.ScheduleGetParams{Name: "a"})
	require.NoError(t, err, rule)
	require.Equal(t, "v2", string(got.Definition), rule)
	require.True(t, got.NextFire.Equal(now.Add(time.Minute)), rule)

	page, err := ss.ScheduleList(bg, &store.ScheduleListParams{Limit: 2})
	require.NoError(t, err, rule)
	require.True(t, page.More, rule)
	require.Equal(t, []string{"a", "b"}, names(page.Schedules), rule)
	page, err = ss.ScheduleList(bg, &store.ScheduleListParams{After: "b", Limit: 5})
	require.NoError(t, err, rule)
	require.False(t, page.More, rule)
	require.Equal(t, []string{"c", "d"}, names(page.Schedules), rule)

	due, err := ss.ScheduleList(bg, &store.ScheduleListParams{DueBy: now.Add(3 * time.Minute), Limit: 10})
	require.NoError(t, err, rule)
	require.Equal(t, []string{"a", "b"}, names(due.Schedules), "%s: due by next instant, earliest first, none without one", rule)

	require.NoError(t, ss.ScheduleDelete(bg, &store.ScheduleDeleteParams{Name: "a"}), rule)
	require.ErrorIs(t, ss.ScheduleDelete(bg, &store.ScheduleDeleteParams{Name: "a"}), store.ErrNotFound, rule)
	due, err = ss.ScheduleList(bg, &store.ScheduleListParams{DueBy: now.Add(3 * time.Minute), Limit: 10})
	require.NoError(t, err, rule)
	require.Equal(t, []string{"b"}, names(due.Schedules), rule)
}

func names(recs []*store.ScheduleRecord) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.Name)
	}
	return out
}

func testScheduleLease(t *testing.T, h *Harness, rule string) {
	ss := scheduleStore(t, h)
	ttl := 10 * time.Second
	a, err := ss.LeaderAcquire(bg, &store.LeaderAcquireParams{Holder: "p1", TTL: ttl})
	require.NoError(t, err, rule)
	require.True(t, a.Acquired, rule)
	b, err := ss.LeaderAcquire(bg, &store.LeaderAcquireParams{Holder: "p2", TTL: ttl})
	require.NoError(t, err, rule)
	require.False(t, b.Acquired, rule)
	require.Equal(t, "p1", b.Lease.Holder, rule)
	require.Equal(t, a.Lease.Epoch, b.Lease.Epoch, rule)

	_, err = ss.ScheduleSave(bg, &store.ScheduleSaveParams{Name: "s", Definition: []byte("d"), NextFire: h.Now()})
	require.NoError(t, err, rule)
	next := h.Now().Add(time.Minute)
	rec, err := ss.ScheduleRecordFire(bg, &store.ScheduleRecordFireParams{Name: "s", LeaderEpoch: a.Lease.Epoch, Version: 1,
		NextFire: next, LastFire: h.Now(), LastRunID: "r1"})
	require.NoError(t, err, rule)
	require.True(t, rec.NextFire.Equal(next), rule)
	require.Equal(t, "r1", rec.LastRunID, rule)

	h.Advance(ttl / 2)
	renew, err := ss.LeaderAcquire(bg, &store.LeaderAcquireParams{Holder: "p1", Epoch: a.Lease.Epoch, TTL: ttl})
	require.NoError(t, err, rule)
	require.True(t, renew.Acquired, rule)
	require.Equal(t, a.Lease.Epoch, renew.Lease.Epoch, "%s: a renewal keeps the epoch", rule)
	again, err := ss.LeaderAcquire(bg, &store.LeaderAcquireParams{Holder: "p1", TTL: ttl})
	require.NoError(t, err, rule)
	require.True(t, again.Acquired, "%s: a holder that lost its epoch (a lost reply) gets its lease back", rule)
	require.Equal(t, a.Lease.Epoch, again.Lease.Epoch, rule)
	h.Advance(ttl)
	c, err := ss.LeaderAcquire(bg, &store.LeaderAcquireParams{Holder: "p2", TTL: ttl})
	require.NoError(t, err, rule)
	require.True(t, c.Acquired, "%s: an expired lease is free", rule)
	require.Greater(t, c.Lease.Epoch, a.Lease.Epoch, rule)

	_, err = ss.ScheduleRecordFire(bg, &store.ScheduleRecordFireParams{Name: "s", LeaderEpoch: a.Lease.Epoch, Version: 1, NextFire: h.Now()})
	require.ErrorIs(t, err, store.ErrStaleEpoch, rule)
	got, err := ss.ScheduleGet(bg, &store.ScheduleGetParams{Name: "s"})
	require.NoError(t, err, rule)
	require.True(t, got.NextFire.Equal(next), "%s: a deposed leader changed nothing", rule)

	// A save since the leader read the schedule keeps its next instant.
	_, err = ss.ScheduleSave(bg, &store.ScheduleSaveParams{Name: "s", Definition: []byte("d2"), NextFire: next.Add(time.Hour)})
	require.NoError(t, err, rule)
	got, err = ss.ScheduleRecordFire(bg, &store.ScheduleRecordFireParams{Name: "s", LeaderEpoch: c.Lease.Epoch, Version: 1,
		NextFire: next, LastFire: next, LastRunID: "r2"})
	require.NoError(t, err, rule)
	require.True(t, got.NextFire.Equal(next.Add(time.Hour)), rule)
	require.Equal(t, "r2", got.LastRunID, rule)

	// A release by the old holder does nothing; by the holder frees it.
	require.NoError(t, ss.LeaderRelease(bg, &store.LeaderReleaseParams{Holder: "p1", Epoch: a.Lease.Epoch}), rule)
	d, err := ss.LeaderAcquire(bg, &store.LeaderAcquireParams{Holder: "p3", TTL: ttl})
	require.NoError(t, err, rule)
	require.False(t, d.Acquired, rule)
	require.NoError(t, ss.LeaderRelease(bg, &store.LeaderReleaseParams{Holder: "p2", Epoch: c.Lease.Epoch}), rule)
	d, err = ss.LeaderAcquire(bg, &store.LeaderAcquireParams{Holder: "p3", TTL: ttl})
	require.NoError(t, err, rule)
	require.True(t, d.Acquired, rule)
	require.Greater(t, d.Lease.Epoch, c.Lease.Epoch, rule)
}
