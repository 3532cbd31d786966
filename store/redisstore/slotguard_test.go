package redisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestClusterSplitSlotRefusesScriptsWhole finishes a task while its
// shard's slot is split mid-migration: the ready and wake lists its child
// goes to already moved, the run hash and the lease zset still on the
// source. The finish must be refused whole, before it writes anything (a
// TRYAGAIN, not a refusal of what the call carries), and apply once the
// slot is moved, its child then claimable. Without the guard key
// (slotguard.go: guarded answering keys unchanged) Redis runs the script
// on the source until its RPUSH of the child meets a list that is no
// longer there: the task is recorded succeeded and the child ready, but
// the child is on no list and the run never ends.
func TestClusterSplitSlotRefusesScriptsWhole(t *testing.T) {
	cluster, err := redistest.StartCluster(3)
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(cluster.Close)
	ctx := context.Background()
	c := cluster.Client()
	t.Cleanup(func() { _ = c.Close() })
	s, err := redisstore.New(ctx, c, redisstore.WithPrefix("split"), redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{
		{Name: "a", Handler: "h", Queue: store.DefaultQueue},
		{Name: "b", Handler: "h", Queue: store.DefaultQueue, Deps: []store.Dep{{Task: "a", On: store.OnSuccess}}}}}
	for i := 0; i < 2; i++ {
		_, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
	}
	claim := func(limit int) []*store.ClaimedTask {
		res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: limit, LeaseDuration: time.Minute})
		require.NoError(t, err)
		return res.Tasks
	}
	held := claim(1)
	require.Len(t, held, 1)
	runID := held[0].Lease.RunID

	slot, err := cluster.SlotOf(ctx, "split:{0}:")
	require.NoError(t, err)
	from, err := cluster.SlotOwner(ctx, slot)
	require.NoError(t, err)
	move, err := cluster.SlotMoveBegin(ctx, slot, (from+1)%3)
	require.NoError(t, err)
	// The ready list (holding the other run's task) and the wake list
	// move first; the run hashes and the lease zset stay behind.
	require.NoError(t, move.Keys(ctx, "split:{0}:q:default:1", "split:{0}:n:default"))

	finish := &store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{{Lease: held[0].Lease, Outcome: store.OutcomeSucceeded}}}
	_, err = s.TaskFinish(ctx, finish)
	require.Error(t, err, "a finish on a split slot must be refused")
	require.NotErrorIs(t, err, store.ErrRejected, "the refusal is of the server's state, to be sent again")
	require.True(t, strings.HasPrefix(err.Error(), "TRYAGAIN") || strings.HasPrefix(err.Error(), "ASK"), "refused up front: %v", err)
	run, err := s.RunGet(ctx, &store.RunGetParams{ID: runID})
	require.NoError(t, err)
	require.Equal(t, store.TaskRunning, run.Task("a").Status, "the refused finish wrote nothing")

	for {
		n, err := move.Next(ctx, 10)
		require.NoError(t, err)
		if n == 0 {
			break
		}
	}
	require.NoError(t, move.End(ctx))
	res, err := s.TaskFinish(ctx, finish)
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	got := map[string]bool{}
	for _, ct := range claim(10) {
		got[ct.Lease.RunID+"/"+ct.Lease.Task] = true
	}
	require.True(t, got[runID+"/b"], "the child of the finished task is claimable: %v", got)
	require.Len(t, got, 2, "the child and the other run's first task")
}
