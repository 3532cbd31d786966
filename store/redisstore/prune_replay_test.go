package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
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
if not ok then return code_illegal end
return 0
`)

// TestPruneSkipsARunActiveAgain: the expiry list entry a run left when it
// ended does not remove it once a replay has made it active again, nor
// once it has ended again later; the entry of its last end does.
func TestPruneSkipsARunActiveAgain(t *testing.T) {
	luaServers(t, func(t *testing.T, c *redis.Client) {
		ctx := context.Background()
		clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		s, err := New(ctx, c, WithClock(clk), WithRetention(time.Hour))
		require.NoError(t, err)
		res, err := s.RunCreate(ctx, &plait.RunCreateParams{Workflow: &plait.WorkflowSpec{Name: "wf",
			Tasks: []plait.TaskSpec{{Name: "a", Handler: "h"}}}})
		require.NoError(t, err)
		id := res.Run.ID
		shard, err := s.runShard(id)
		require.NoError(t, err)
		rk, base := s.keys.run(shard, id), s.keys.base(shard)
		moveRun := func(mode string) {
			t.Helper()
			require.Equal(t, int64(0), replayMoveScript.Run(ctx, c, []string{rk}, s.stepArg(), base, id, mode).Val(), mode)
		}
		status := func() plait.RunStatus {
			t.Helper()
			r, err := s.RunGet(ctx, &plait.RunGetParams{ID: id})
			require.NoError(t, err)
			return r.Status
		}
		prune := func() int {
			t.Helper()
			res, err := s.RunPrune(ctx, &plait.RunPruneParams{Limit: 10})
			require.NoError(t, err)
			return res.Pruned
		}
		_, err = s.RunCancel(ctx, &plait.RunCancelParams{ID: id})
		require.NoError(t, err)
		require.Equal(t, plait.RunCancelled, status())

		// Active again when its entry comes due: the entry goes, the run stays.
		moveRun("replay")
		clk.Advance(2 * time.Hour)
		require.Zero(t, prune())
		require.Equal(t, plait.RunRunning, status())

		// Ended again half an hour later than an entry that comes due first.
		moveRun("end")
		clk.Advance(30 * time.Minute)
		moveRun("replay")
		moveRun("end")
		clk.Advance(40 * time.Minute)
		require.Zero(t, prune(), "an entry of an earlier end removed the run")
		require.Equal(t, plait.RunFailed, status())

		clk.Advance(30 * time.Minute)
		require.Equal(t, 1, prune())
		_, err = s.RunGet(ctx, &plait.RunGetParams{ID: id})
		require.ErrorIs(t, err, plait.ErrNotFound)
	})
}
