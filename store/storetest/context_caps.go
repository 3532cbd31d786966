package storetest

import (
	"log/slog"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// capOf returns the store as the capability T, or skips the case, naming
// the capability, when the store lacks it.
func capOf[T any](t *testing.T, h *Harness, name string) T {
	t.Helper()
	c, ok := h.Store.(T)
	if !ok {
		t.Skip("needs " + name)
	}
	return c
}

// capContextCases are the cases of testContext for the capability methods
// that write.
func capContextCases() []testCase {
	return []testCase{
		{
			name: "RunDelete",
			rule: "RunDelete with a done context answers its error and deletes nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				qs := capOf[store.QueryStore](t, h, "QueryStore")
				r := createRun(t, h, nil)
				succeed(t, h, claimOne(t, h, "a", rule).Lease, "ok", rule)
				requireCanceled(t, qs.RunDelete(doneCtx(), &store.RunDeleteParams{ID: r.ID}), rule)
				require.Equal(t, store.RunCompleted, getRun(t, h, r.ID).Status, rule)
				require.NoError(t, qs.RunDelete(bg, &store.RunDeleteParams{ID: r.ID}), rule+": the run is still there to delete")
			},
		},
		{
			name: "RunPrune",
			rule: "RunPrune with a done context answers its error",
			run: func(t *testing.T, h *Harness, rule string) {
				qs := capOf[store.QueryStore](t, h, "QueryStore")
				_, err := qs.RunPrune(doneCtx(), &store.RunPruneParams{Limit: 10})
				requireCanceled(t, err, rule)
			},
		},
		{
			name: "RunReplay",
			rule: "RunReplay with a done context answers its error and opens no generation",
			run: func(t *testing.T, h *Harness, rule string) {
				rs := capOf[store.ReplayStore](t, h, "ReplayStore")
				r := createRun(t, h, nil)
				failTask(t, h, claimOne(t, h, "a", rule).Lease, "boom", rule)
				_, err := rs.RunReplay(doneCtx(), &store.RunReplayParams{RunID: r.ID})
				requireCanceled(t, err, rule)
				got := getRun(t, h, r.ID)
				require.Equal(t, store.RunFailed, got.Status, rule)
				require.Zero(t, got.Generation, rule)
				claimNone(t, h, rule)
			},
		},
		{
			name: "TaskLogAppend",
			rule: "TaskLogAppend with a done context answers its error and stores no line",
			run: func(t *testing.T, h *Harness, rule string) {
				ls := capOf[store.TaskLogStore](t, h, "TaskLogStore")
				r := createRun(t, h, nil)
				ct := claimOne(t, h, "a", rule)
				l := line(h.Now(), slog.LevelInfo, "x")
				_, err := ls.TaskLogAppend(doneCtx(), &store.TaskLogAppendParams{Lease: ct.Lease, Attempt: ct.Attempt, Seq: 1, Lines: []store.LogLine{l}})
				requireCanceled(t, err, rule)
				require.Empty(t, readLogs(t, ls, r.ID, "a", 0, rule).Lines, rule)
				res := appendLines(t, ls, ct.Lease, ct.Attempt, 1, rule, l)
				require.Equal(t, 1, res.Stored, rule+": the append's sequence number is still new")
			},
		},
		{
			name: "DeadLetterPurge",
			rule: "DeadLetterPurge with a done context answers its error and purges nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				d := capOf[store.DeadLetterStore](t, h, "DeadLetterStore")
				r := createRun(t, h, nil)
				failTask(t, h, claimOne(t, h, "a", rule).Lease, "boom", rule)
				_, err := d.DeadLetterPurge(doneCtx(), &store.DeadLetterPurgeParams{Letters: []store.DeadLetterRef{{RunID: r.ID, Task: "a"}}})
				requireCanceled(t, err, rule)
				require.Equal(t, []string{r.ID + " a"}, letterKeys(listDead(t, d, store.DeadLetterListParams{Limit: 10}, rule).Letters), rule)
			},
		},
		{
			name: "ScheduleSave",
			rule: "ScheduleSave with a done context answers its error and saves nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				ss := capOf[store.ScheduleStore](t, h, "ScheduleStore")
				_, err := ss.ScheduleSave(doneCtx(), &store.ScheduleSaveParams{Name: "s", Definition: []byte("d"), NextFire: h.Now()})
				requireCanceled(t, err, rule)
				_, err = ss.ScheduleGet(bg, &store.ScheduleGetParams{Name: "s"})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
			},
		},
		{
			name: "ScheduleDelete",
			rule: "ScheduleDelete with a done context answers its error and deletes nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				ss := capOf[store.ScheduleStore](t, h, "ScheduleStore")
				_, err := ss.ScheduleSave(bg, &store.ScheduleSaveParams{Name: "s", Definition: []byte("d"), NextFire: h.Now()})
				require.NoError(t, err, rule)
				requireCanceled(t, ss.ScheduleDelete(doneCtx(), &store.ScheduleDeleteParams{Name: "s"}), rule)
				_, err = ss.ScheduleGet(bg, &store.ScheduleGetParams{Name: "s"})
				require.NoError(t, err, rule)
			},
		},
		{
			name: "ScheduleRecordFire",
			rule: "ScheduleRecordFire with a done context answers its error and records nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				ss := capOf[store.ScheduleStore](t, h, "ScheduleStore")
				a, err := ss.LeaderAcquire(bg, &store.LeaderAcquireParams{Holder: "p1", TTL: time.Minute})
				require.NoError(t, err, rule)
				first := h.Now().Add(time.Minute)
				_, err = ss.ScheduleSave(bg, &store.ScheduleSaveParams{Name: "s", Definition: []byte("d"), NextFire: first})
				require.NoError(t, err, rule)
				_, err = ss.ScheduleRecordFire(doneCtx(), &store.ScheduleRecordFireParams{Name: "s", LeaderEpoch: a.Lease.Epoch, Version: 1,
					NextFire: h.Now().Add(time.Hour), LastFire: h.Now(), LastRunID: "r1"})
				requireCanceled(t, err, rule)
				rec, err := ss.ScheduleGet(bg, &store.ScheduleGetParams{Name: "s"})
				require.NoError(t, err, rule)
				sameTime(t, first, rec.NextFire, rule)
				require.True(t, rec.LastFire.IsZero(), rule)
				require.Empty(t, rec.LastRunID, rule)
			},
		},
		{
			name: "LeaderAcquire",
			rule: "LeaderAcquire with a done context answers its error and takes no lease",
			run: func(t *testing.T, h *Harness, rule string) {
				ss := capOf[store.ScheduleStore](t, h, "ScheduleStore")
				_, err := ss.LeaderAcquire(doneCtx(), &store.LeaderAcquireParams{Holder: "p1", TTL: time.Minute})
				requireCanceled(t, err, rule)
				b, err := ss.LeaderAcquire(bg, &store.LeaderAcquireParams{Holder: "p2", TTL: time.Minute})
				require.NoError(t, err, rule)
				require.True(t, b.Acquired, rule+": the lease is still free")
			},
		},
		{
			name: "LeaderRelease",
			rule: "LeaderRelease with a done context answers its error and keeps the lease",
			run: func(t *testing.T, h *Harness, rule string) {
				ss := capOf[store.ScheduleStore](t, h, "ScheduleStore")
				a, err := ss.LeaderAcquire(bg, &store.LeaderAcquireParams{Holder: "p1", TTL: time.Minute})
				require.NoError(t, err, rule)
				requireCanceled(t, ss.LeaderRelease(doneCtx(), &store.LeaderReleaseParams{Holder: "p1", Epoch: a.Lease.Epoch}), rule)
				b, err := ss.LeaderAcquire(bg, &store.LeaderAcquireParams{Holder: "p2", TTL: time.Minute})
				require.NoError(t, err, rule)
				require.False(t, b.Acquired, rule+": p1 still holds the lease")
			},
		},
		{
			name: "NodeHeartbeat",
			rule: "NodeHeartbeat with a done context answers its error and registers nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				ns := capOf[store.NodeStore](t, h, "NodeStore")
				_, err := ns.NodeHeartbeat(doneCtx(), &store.NodeHeartbeatParams{Node: nodeInfo("n1"), TTL: nodeTTL, HistoryLimit: 3})
				requireCanceled(t, err, rule)
				_, err = ns.NodeGet(bg, &store.NodeGetParams{ID: "n1"})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
			},
		},
		{
			name: "NodeRemove",
			rule: "NodeRemove with a done context answers its error and removes nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				ns := capOf[store.NodeStore](t, h, "NodeStore")
				beat(t, h, nodeInfo("n1"), rule)
				requireCanceled(t, ns.NodeRemove(doneCtx(), &store.NodeRemoveParams{ID: "n1"}), rule)
				getNode(t, h, "n1", rule)
			},
		},
		{
			name: "NodeDrain",
			rule: "NodeDrain with a done context answers its error and sets no drain flag",
			run: func(t *testing.T, h *Harness, rule string) {
				ns := capOf[store.NodeStore](t, h, "NodeStore")
				beat(t, h, nodeInfo("n1"), rule)
				requireCanceled(t, ns.NodeDrain(doneCtx(), &store.NodeDrainParams{ID: "n1"}), rule)
				require.False(t, getNode(t, h, "n1", rule).DrainRequested, rule)
			},
		},
		{
			name: "QueuePause",
			rule: "QueuePause with a done context answers its error and pauses nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				ns := capOf[store.NodeStore](t, h, "NodeStore")
				_, err := ns.QueuePause(doneCtx(), &store.QueuePauseParams{Queue: "mail"})
				requireCanceled(t, err, rule)
				res, err := ns.QueueListPaused(bg, &store.QueueListPausedParams{})
				require.NoError(t, err, rule)
				require.Empty(t, res.Queues, rule)
				require.Zero(t, res.ControlVersion, rule)
			},
		},
	}
}
