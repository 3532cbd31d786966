package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestLimitSlotsOnceWhenRepliesAreLost loses the replies of a claim, a
// finish and a cancel that move limited tasks, on a real redis-server,
// and go-redis sends each again: the key's holders are exactly the tasks
// running after every step, so no slot is taken or given back twice.
func TestLimitSlotsOnceWhenRepliesAreLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, 3, nil)
	holders := func() []string {
		t.Helper()
		m, err := e.direct.SMembers(ctx, "plait:{0}:l:k").Result()
		require.NoError(t, err)
		return m
	}
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "t", Handler: "h", Queue: store.DefaultQueue,
		Limits: []store.TaskLimit{{Key: "k", Concurrency: 1}}}}}
	var ids []string
	for i := 0; i < 4; i++ {
		res, err := e.store.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
		ids = append(ids, res.Run.ID)
	}

	// A claim whose reply is lost is sent again and answered from its
	// memory: it took one slot.
	e.proxy.DropReplyTo("lim-claim-1")
	first, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute, RequestID: "lim-claim-1"})
	require.NoError(t, err)
	require.Equal(t, 1, e.proxy.Dropped())
	require.Len(t, first.Tasks, 1, "one slot, one task")
	require.Equal(t, leaseEntries(first.Tasks), holders())

	// A finish whose reply is lost is sent again: the second answers
	// stale and gives nothing back.
	e.proxy.DropReplyTo("lim-finish-1")
	res, err := e.store.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{
		{Lease: first.Tasks[0].Lease, Outcome: store.OutcomeSucceeded, Result: []byte("lim-finish-1")}}})
	require.NoError(t, err)
	require.Equal(t, 2, e.proxy.Dropped())
	if res[0].Err != nil {
		require.ErrorIs(t, res[0].Err, store.ErrStaleEpoch)
	}
	require.Empty(t, holders(), "the slot came back once")
	second, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, second.Tasks, 1, "the freed slot starts one waiting task, not two")
	require.Equal(t, leaseEntries(second.Tasks), holders())

	// A cancel whose reply is lost is sent again: the slot of its running
	// task comes back once and the next waiting task starts.
	e.proxy.DropReplyTo("lim-cancel-1")
	_, err = e.store.RunCancel(ctx, &store.RunCancelParams{ID: second.Tasks[0].Lease.RunID, Reason: "lim-cancel-1"})
	require.NoError(t, err)
	require.Equal(t, 3, e.proxy.Dropped())
	require.Empty(t, holders())
	third, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, third.Tasks, 1)

	// A lease lost: the sweep gives the slot back with the task.
	e.clk.Advance(2 * time.Minute)
	sw, err := e.store.LeaseSweep(ctx, &store.LeaseSweepParams{Limit: 10, CrashLimit: 3})
	require.NoError(t, err)
	require.Len(t, sw.Requeued, 1)
	require.Empty(t, holders())
	last, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, last.Tasks, 1)
	require.Equal(t, leaseEntries(last.Tasks), holders())
}

// TestLimitsNeedOneShard: a store with several shards refuses a run with
// limits instead of keeping them per shard.
func TestLimitsNeedOneShard(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t, 0, nil, redisstore.WithShards(2))
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "t", Handler: "h", Queue: store.DefaultQueue,
		Limits: []store.TaskLimit{{Key: "k", Concurrency: 1}}}}}
	_, err := e.store.RunCreate(context.Background(), &store.RunCreateParams{Workflow: wf})
	require.ErrorIs(t, err, store.ErrInvalidArgument)
}
