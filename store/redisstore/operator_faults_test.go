package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
)

// TestOperatorWritesWhenRedisIsFull runs a real redis-server into
// maxmemory: a task control and a bulk delete run (declared allow-oom: they
// end work or free memory), a note is refused whole with ErrStoreFull, and
// is written once memory is freed.
func TestOperatorWritesWhenRedisIsFull(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, 3, nil)
	ids := e.createOneTaskRuns(t, 3)
	claimed, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 2, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed.Tasks, 2)
	done, running := claimed.Tasks[0], claimed.Tasks[1]
	fin, err := e.store.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: succeeded([]*store.ClaimedTask{done})})
	require.NoError(t, err)
	require.NoError(t, fin[0].Err)

	e.fill(t)
	keys, err := e.direct.DBSize(ctx).Result()
	require.NoError(t, err)
	err = e.store.RunNote(ctx, &store.RunNoteParams{RunID: done.Lease.RunID, Text: "why"})
	require.ErrorIs(t, err, store.ErrStoreFull, "a note is refused")
	after, err := e.direct.DBSize(ctx).Result()
	require.NoError(t, err)
	require.Equal(t, keys, after, "the refused note wrote no key")

	res, err := e.store.TaskControl(ctx, &store.TaskControlParams{RunID: running.Lease.RunID, Task: running.Lease.Task, Action: store.TaskCancel, Reason: "stop"})
	require.NoError(t, err, "a task control runs when Redis is full")
	require.Equal(t, store.TaskCancelled, res.Run.Task(running.Lease.Task).Status)
	require.Empty(t, e.activeLeases(t, 1), "the cancelled attempt's lease is gone")
	errs, err := e.store.RunDeleteMany(ctx, &store.RunDeleteManyParams{IDs: []string{done.Lease.RunID, running.Lease.RunID}})
	require.NoError(t, err, "a bulk delete runs when Redis is full")
	require.NoError(t, errs[0])
	require.NoError(t, errs[1], "the run ended with its only task cancelled")

	require.NoError(t, e.direct.ConfigSet(ctx, "maxmemory", "0").Err())
	require.NoError(t, e.store.RunNote(ctx, &store.RunNoteParams{RunID: ids[2], Text: "why"}), "once memory is freed")
	for _, id := range []string{done.Lease.RunID, running.Lease.RunID} {
		_, err := e.store.RunGet(ctx, &store.RunGetParams{ID: id})
		require.ErrorIs(t, err, store.ErrNotFound)
	}
}

// TestLostTaskControlReply loses the reply of a task control: the caller
// sends it again and is refused with the status the first call left, and
// the task was moved once.
func TestLostTaskControlReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, -1, nil)
	ids := e.createOneTaskRuns(t, 1)
	claimed, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed.Tasks, 1)

	p := &store.TaskControlParams{RunID: ids[0], Task: "t", Action: store.TaskCancel, Reason: "lost-control-1"}
	e.proxy.DropReplyTo("lost-control-1")
	_, err = e.store.TaskControl(ctx, p)
	require.Error(t, err, "the reply was lost")
	require.Equal(t, 1, e.proxy.Dropped())
	_, err = e.store.TaskControl(ctx, p)
	var ce *store.TaskControlError
	require.ErrorAs(t, err, &ce, "sent again, it finds the task cancelled")
	require.Equal(t, store.TaskCancelled, ce.Status)

	run, err := e.store.RunGet(ctx, &store.RunGetParams{ID: ids[0]})
	require.NoError(t, err)
	require.Equal(t, store.RunCompleted, run.Status)
	require.Equal(t, 1, run.Cancelled)
	require.Len(t, run.Tasks[0].Attempts, 1, "one attempt record, cancelled once")
	require.Empty(t, e.activeLeases(t, 1))
}
