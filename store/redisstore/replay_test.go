package redisstore_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// longPayload makes a definition longer than a listpack value, so a run of
// few tasks keeps it apart, in p:<run>:<task>.
var longPayload = bytes.Repeat([]byte("payload kept apart "), 8)

// finishOne claims the one ready task named name and ends it with outcome.
func finishOne(t *testing.T, s *redisstore.Store, name string, outcome store.Outcome) *store.ClaimedTask {
	t.Helper()
	ctx := context.Background()
	got, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, got.Tasks, 1)
	ct := got.Tasks[0]
	require.Equal(t, name, ct.Spec.Name)
	o := store.TaskOutcome{Lease: ct.Lease, Outcome: outcome}
	if outcome == store.OutcomeFailed {
		o.Error = "boom"
	}
	res, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{o}})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	return ct
}

// TestLostReplayReplyOpensOneGeneration loses the reply of a replay on a
// real redis-server, once resent by the caller and once by the client:
// either way the run opens one generation, its keys lose their retention
// while it runs again and get it back when the generation ends, and the
// payload kept apart of the failed task is there for the new attempt.
func TestLostReplayReplyOpensOneGeneration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, retries := range []int{-1, 3} {
		e := newFaultEnv(t, retries, nil, redisstore.WithRetention(time.Hour))
		wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "replay-me", Handler: "h", Payload: longPayload}}}
		created, err := e.store.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
		id := created.Run.ID
		runKey, payloadKey := "plait:{0}:r:"+id, "plait:{0}:p:"+id+":replay-me"
		first := finishOne(t, e.store, "replay-me", store.OutcomeFailed)
		require.Positive(t, e.direct.PTTL(ctx, runKey).Val(), "a finished run has a retention")
		require.Positive(t, e.direct.PTTL(ctx, payloadKey).Val(), "a failed task keeps its payload until its run expires")

		e.proxy.DropReplyTo("replay-me")
		res, err := e.store.RunReplay(ctx, &store.RunReplayParams{RunID: id, Tasks: []string{"replay-me"}})
		if retries < 0 {
			require.Error(t, err, "the reply was lost and the client does not resend")
			res, err = e.store.RunReplay(ctx, &store.RunReplayParams{RunID: id, Tasks: []string{"replay-me"}})
			require.NoError(t, err)
			require.True(t, res.Existing, "the caller's resend finds the generation open")
		} else {
			require.NoError(t, err)
			require.True(t, res.Existing, "the client's resend finds the generation open")
		}
		require.Equal(t, 1, e.proxy.Dropped())
		require.Equal(t, int64(1), res.Run.Generation)
		require.Equal(t, store.RunRunning, res.Run.Status)
		require.Equal(t, "1", e.direct.HGet(ctx, runKey, "g").Val(), "one generation opened")
		for _, k := range []string{runKey, payloadKey} {
			require.Equal(t, time.Duration(-1), e.direct.PTTL(ctx, k).Val(), "%s: a run that runs again keeps its keys", k)
		}
		require.Zero(t, e.direct.ZCard(ctx, "plait:{0}:dl").Val(), "the replayed task's letter left the index")

		again := finishOne(t, e.store, "replay-me", store.OutcomeSucceeded)
		require.Equal(t, longPayload, again.Spec.Payload, "the payload kept apart reached the new attempt")
		require.Equal(t, 1, again.Attempt)
		require.Greater(t, again.Lease.Epoch, first.Lease.Epoch)
		run, err := e.store.RunGet(ctx, &store.RunGetParams{ID: id})
		require.NoError(t, err)
		require.Equal(t, store.RunCompleted, run.Status)
		require.Equal(t, int64(1), run.Generation)
		// the failure's attempt, folded into the state in format 8, was
		// written out once by the replay that reached Redis, not again by
		// the resend; the new generation's success is folded in its turn
		atts := run.Task("replay-me").Attempts
		require.Len(t, atts, 2)
		require.Equal(t, []string{"failed", "succeeded"}, []string{atts[0].Outcome, atts[1].Outcome})
		require.Equal(t, []int64{0, 1}, []int64{atts[0].Generation, atts[1].Generation})
		require.Equal(t, 1, countPrefixed(e.direct.HKeys(ctx, runKey).Val(), "a:replay-me:"), "one attempt record: the unfolded failure")
		require.Positive(t, e.direct.PTTL(ctx, runKey).Val(), "the generation's end starts a new retention")
		require.Zero(t, e.direct.Exists(ctx, payloadKey).Val(), "a succeeded task's payload goes")
	}
}

// TestReplayRefusesATaskWhosePayloadIsGone: a replay that would reset a
// succeeded task whose payload was kept apart (dropped when it succeeded)
// is refused whole.
func TestReplayRefusesATaskWhosePayloadIsGone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, 3, nil)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{
		{Name: "a", Handler: "h"},
		{Name: "b", Handler: "h", Payload: longPayload, Deps: []store.Dep{{Task: "a", On: store.OnFailure}}},
	}}
	created, err := e.store.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
	require.NoError(t, err)
	finishOne(t, e.store, "a", store.OutcomeFailed)
	finishOne(t, e.store, "b", store.OutcomeSucceeded)
	runKey := "plait:{0}:r:" + created.Run.ID
	before := e.direct.HGetAll(ctx, runKey).Val()

	_, err = e.store.RunReplay(ctx, &store.RunReplayParams{RunID: created.Run.ID})
	require.ErrorIs(t, err, store.ErrReplayConflict)
	require.Equal(t, before, e.direct.HGetAll(ctx, runKey).Val(), "a refused replay writes nothing")
	require.Equal(t, int64(1), e.direct.ZCard(ctx, "plait:{0}:dl").Val())
}

// countPrefixed counts the fields of fs that start with prefix.
func countPrefixed(fs []string, prefix string) int {
	n := 0
	for _, f := range fs {
		if strings.HasPrefix(f, prefix) {
			n++
		}
	}
	return n
}
