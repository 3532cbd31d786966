package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestHistoryOutlivesItsRunOnRealTTLs: on a real redis-server, with its own
// clock and TTLs, a finished run's hash expires after its retention while
// its attempt records stay readable until the history retention, and then
// the key that kept them expires too, leaving the server with the keys it
// had before the run.
func TestHistoryOutlivesItsRunOnRealTTLs(t *testing.T) {
	c := redistest.Private(t)
	ctx := context.Background()
	s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()),
		redisstore.WithRetention(300*time.Millisecond), redisstore.WithHistoryRetention(1500*time.Millisecond))
	require.NoError(t, err)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}}}
	run := func() string {
		res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
		claimed, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
		require.NoError(t, err)
		require.Len(t, claimed.Tasks, 1)
		fin, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{{Lease: claimed.Tasks[0].Lease, Outcome: store.OutcomeSucceeded}}})
		require.NoError(t, err)
		require.NoError(t, fin[0].Err)
		return res.Run.ID
	}
	// warm up: the shard keys that outlive runs exist, then go quiet.
	warm := run()
	require.Eventually(t, func() bool {
		_, err := s.AttemptHistory(ctx, &store.AttemptHistoryParams{RunID: warm})
		return err != nil
	}, 10*time.Second, 20*time.Millisecond)
	_, err = s.RunPrune(ctx, &store.RunPruneParams{Limit: 10})
	require.NoError(t, err)
	base, err := c.DBSize(ctx).Result()
	require.NoError(t, err)

	id := run()
	want, err := s.AttemptHistory(ctx, &store.AttemptHistoryParams{RunID: id})
	require.NoError(t, err)
	require.Len(t, want.Tasks, 1)
	require.Len(t, want.Tasks[0].Attempts, 1)
	require.Eventually(t, func() bool {
		_, err := s.RunGet(ctx, &store.RunGetParams{ID: id})
		return err != nil
	}, 10*time.Second, 10*time.Millisecond, "the run hash expires after its retention")
	got, err := s.AttemptHistory(ctx, &store.AttemptHistoryParams{RunID: id})
	require.NoError(t, err, "the records outlive the run")
	require.Equal(t, want, got)
	require.Eventually(t, func() bool {
		_, err := s.AttemptHistory(ctx, &store.AttemptHistoryParams{RunID: id})
		return err != nil
	}, 10*time.Second, 20*time.Millisecond, "the records expire after the history retention")
	_, err = s.AttemptHistory(ctx, &store.AttemptHistoryParams{RunID: id})
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.RunPrune(ctx, &store.RunPruneParams{Limit: 10})
	require.NoError(t, err)
	after, err := c.DBSize(ctx).Result()
	require.NoError(t, err)
	require.Equal(t, base, after, "no key of the run is left")
}
