package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestShards drives runs spread over several shards: ids stay increasing,
// keyed runs are found again, and claim, finish, sweep and wait reach every
// shard. (Priority and FIFO order hold within a shard; across shards a
// claim visits shards one after another, so the suite's ordering cases run
// on one shard only.)
func TestShards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := miniredis.RunT(t)
	clk := fakeclock.New(start)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	s, err := redisstore.New(ctx, c, redisstore.WithClock(clk), redisstore.WithShards(3), redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)

	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{
		{Name: "a", Handler: "h", Queue: store.DefaultQueue},
		{Name: "b", Handler: "h", Queue: store.DefaultQueue, Deps: []store.Dep{{Task: "a"}}},
	}}
	var ids []string
	prev := ""
	for i := 0; i < 9; i++ {
		p := &store.RunCreateParams{Workflow: wf}
		if i%3 == 0 {
			p.Key = "key-" + strconv.Itoa(i)
		}
		res, err := s.RunCreate(ctx, p)
		require.NoError(t, err)
		id := res.Run.ID
		require.Regexp(t, `^[1-9][0-9]*-[a-z0-9]{10}$`, id, "run ids are <n>-<nonce>")
		require.True(t, len(id) > len(prev) || (len(id) == len(prev) && id > prev), "run ids increase: %q then %q", prev, id)
		prev = id
		ids = append(ids, id)
	}
	again, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf, Key: "key-3"})
	require.NoError(t, err)
	require.True(t, again.Existing, "a keyed run is found again on its shard")
	require.Equal(t, ids[3], again.Run.ID)

	require.NoError(t, s.ReadyWait(ctx, &store.ReadyWaitParams{Timeout: time.Second}))
	for round := 0; round < 2; round++ {
		claimed, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 100, LeaseDuration: time.Minute})
		require.NoError(t, err)
		require.Len(t, claimed.Tasks, len(ids), "a claim reaches every shard")
		var out []store.TaskOutcome
		for _, ct := range claimed.Tasks {
			out = append(out, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded, Result: []byte("r")})
		}
		if round == 1 {
			// Let the second round's leases expire instead: the sweep
			// visits every shard.
			clk.Advance(2 * time.Minute)
			sw, err := s.LeaseSweep(ctx, &store.LeaseSweepParams{Limit: 100, CrashLimit: 0})
			require.NoError(t, err)
			require.Len(t, sw.Dead, len(ids))
			break
		}
		res, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: out})
		require.NoError(t, err)
		for _, r := range res {
			require.NoError(t, r.Err)
		}
	}
	for _, id := range ids {
		run, err := s.RunWait(ctx, &store.RunWaitParams{ID: id})
		require.NoError(t, err)
		require.Equal(t, store.RunFailed, run.Status)
		require.Equal(t, store.TaskDead, run.Task("b").Status)
	}
}
