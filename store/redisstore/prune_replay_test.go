package redisstore

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// replayMoveScript moves finished run ARGV[3] back to running the way a
// replay does (run_to inside a replay), or, with ARGV[4] = "end", ends it
// again as failed.
//
// KEYS[1] the run hash; ARGV: step, shard base, run id, "replay" or "end".
var replayMoveScript = redis.NewScript(libSource() + `
local ctx = new_ctx(ARGV[2], ARGV[1], 3600000)
local r = meta_get(KEYS[1])
local to = 'F'
if ARGV[4] == 'replay' then
  ctx.replay = true
  to = 'U'
end
local ok = run_to(ctx, KEYS[1], ARGV[3], r, to)
flush()
if not ok then return ILLEGAL end
return 0
`)

// TestPruneSkipsARunActiveAgain: the expiry list entry a run left when it
// ended does not remove it once a replay has made it active again, nor
// once it has ended again later; the entry of its last end does.
func TestPruneSkipsARunActiveAgain(t *testing.T) {
	luaServers(t, func(t *testing.T, c *redis.Client) {
		ctx := context.Background()
		s, clk := pruneStore(t, c)
		res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: &store.WorkflowSpec{Name: "wf",
			Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}}}})
		require.NoError(t, err)
		id := res.Run.ID
		shard, err := s.runShard(id)
		require.NoError(t, err)
		rk, base := s.keys.run(shard, id), s.keys.base(shard)
		moveRun := func(mode string) {
			t.Helper()
			require.Equal(t, int64(0), replayMoveScript.Run(ctx, c, []string{rk}, s.stepArg(), base, id, mode).Val(), mode)
		}
		status := func() store.RunStatus {
			t.Helper()
			r, err := s.RunGet(ctx, &store.RunGetParams{ID: id})
			require.NoError(t, err)
			return r.Status
		}
		prune := func() int {
			t.Helper()
			res, err := s.RunPrune(ctx, &store.RunPruneParams{Limit: 10})
			require.NoError(t, err)
			return res.Pruned
		}
		_, err = s.RunCancel(ctx, &store.RunCancelParams{ID: id})
		require.NoError(t, err)
		require.Equal(t, store.RunCancelled, status())

		// Active again when its entry comes due: the entry goes, the run stays.
		moveRun("replay")
		clk.Advance(2 * time.Hour)
		require.Zero(t, prune())
		require.Equal(t, store.RunRunning, status())

		// Ended again half an hour later than an entry that comes due first.
		moveRun("end")
		clk.Advance(30 * time.Minute)
		moveRun("replay")
		moveRun("end")
		clk.Advance(40 * time.Minute)
		require.Zero(t, prune(), "an entry of an earlier end removed the run")
		require.Equal(t, store.RunFailed, status())

		clk.Advance(30 * time.Minute)
		require.Equal(t, 1, prune())
		_, err = s.RunGet(ctx, &store.RunGetParams{ID: id})
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

// TestPruneReadsEntriesOfTheEarlierForm: an expiry entry written before
// entries carried the run's end and query field ("<due>:<run>:<st>:<wf>:
// <svc>:<tenant>") is still pruned at its due time, with the run's index
// entries; one of the current form beside it is due at its end plus the
// list's retention.
func TestPruneReadsEntriesOfTheEarlierForm(t *testing.T) {
	luaServers(t, func(t *testing.T, c *redis.Client) {
		ctx := context.Background()
		s, clk := pruneStore(t, c)
		spec := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}}}
		var ids []string
		for i := 0; i < 2; i++ {
			res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: spec, Service: "svc"})
			require.NoError(t, err)
			_, err = s.RunCancel(ctx, &store.RunCancelParams{ID: res.Run.ID})
			require.NoError(t, err)
			ids = append(ids, res.Run.ID)
		}
		shard, err := s.runShard(ids[0])
		require.NoError(t, err)
		list := s.keys.expiryList(shard, time.Hour.Milliseconds())
		entries := c.LRange(ctx, list, 0, -1).Val()
		require.Len(t, entries, 2)
		end := clk.Now().UnixMilli()
		require.Equal(t, strconv.FormatInt(end, 10)+":"+ids[1]+"@"+strconv.FormatInt(end, 10)+":C:wf:svc::", entries[1],
			"an entry of the current form: the run with its creation, here its end too")
		// The first entry rewritten in the earlier form, due at the same time.
		old := strconv.FormatInt(end+time.Hour.Milliseconds(), 10) + ":" + ids[0] + ":C:wf:svc:"
		require.NoError(t, c.LSet(ctx, list, 0, old).Err())

		clk.Advance(time.Hour - time.Millisecond)
		res, err := s.RunPrune(ctx, &store.RunPruneParams{Limit: 10})
		require.NoError(t, err)
		require.Zero(t, res.Pruned, "pruned before its time")
		clk.Advance(time.Millisecond)
		res, err = s.RunPrune(ctx, &store.RunPruneParams{Limit: 10})
		require.NoError(t, err)
		require.Equal(t, 2, res.Pruned)
		for _, k := range []string{s.keys.allIndex(shard), s.keys.workflowIndex(shard, "wf"), s.keys.serviceIndex(shard, "svc"), s.keys.statusIndex(shard, "C")} {
			require.Zero(t, c.ZCard(ctx, k).Val(), "%s keeps entries", k)
		}
		for _, k := range []string{s.keys.nameStream(shard, s.keys.workflowIndex(shard, "wf")), s.keys.nameStream(shard, s.keys.serviceIndex(shard, "svc"))} {
			require.Zero(t, c.Exists(ctx, k).Val(), "%s is left", k)
		}
		require.Zero(t, c.Exists(ctx, list).Val())
	})
}

// pruneStore is a store on c with a fake clock and an hour's retention,
// for the pruner's tests.
func pruneStore(t *testing.T, c *redis.Client) (*Store, *fakeclock.Clock) {
	t.Helper()
	clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := New(context.Background(), c, WithClock(clk), WithRetention(time.Hour))
	require.NoError(t, err)
	return s, clk
}
