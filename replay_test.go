package plait_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store/memstore"
)

func TestReplayIsUnsupportedWithoutTheCapability(t *testing.T) {
	t.Parallel()
	s, err := plait.New(coreOnly{memstore.New()})
	require.NoError(t, err)
	_, err = s.Replay(context.Background(), "1", 0)
	require.ErrorIs(t, err, plait.ErrUnsupported)
	var ue *plait.UnsupportedError
	require.True(t, errors.As(err, &ue))
	require.Equal(t, "ReplayStore", ue.Capability)
	_, err = s.RequeueDeadLetters(context.Background(), "1")
	require.ErrorIs(t, err, plait.ErrUnsupported)
}

// A requeue of a run's dead letters replays their tasks as generation 1,
// and Wait then answers the end of that generation.
func TestRequeueDeadLettersOpensANewGeneration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	store := memstore.New(memstore.WithClock(clk))
	s, err := plait.New(store, plait.WithClock(clk))
	require.NoError(t, err)
	created, err := store.RunCreate(ctx, &plait.RunCreateParams{Workflow: &plait.WorkflowSpec{Name: "wf",
		Tasks: []plait.TaskSpec{{Name: "a", Handler: "h"}, {Name: "b", Handler: "h", Deps: []plait.Dep{{Task: "a"}}}}}})
	require.NoError(t, err)
	id := created.Run.ID
	claimAndFinish := func(o plait.Outcome) {
		t.Helper()
		c, err := store.TaskClaim(ctx, &plait.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
		require.NoError(t, err)
		require.Len(t, c.Tasks, 1)
		res, err := store.TaskFinish(ctx, &plait.TaskFinishParams{WorkerID: "w", Outcomes: []plait.TaskOutcome{{Lease: c.Tasks[0].Lease, Outcome: o, Error: "boom"}}})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
	}
	claimAndFinish(plait.OutcomeFailed)
	first, err := s.Wait(ctx, id)
	require.NoError(t, err)
	require.Equal(t, plait.RunFailed, first.Status)

	_, err = s.Replay(ctx, id, 3)
	require.ErrorIs(t, err, plait.ErrReplayConflict)
	gen, err := s.RequeueDeadLetters(ctx, id)
	require.NoError(t, err)
	require.Equal(t, int64(1), gen)
	letters, err := s.DeadLetters(ctx, plait.DeadLetterListParams{RunID: id})
	require.NoError(t, err)
	require.Empty(t, letters.Letters)
	_, err = s.Replay(ctx, id, 1)
	var re *plait.ReplayError
	require.True(t, errors.As(err, &re), "a running generation is not replayed")
	require.Equal(t, plait.RunRunning, re.Status)

	claimAndFinish(plait.OutcomeSucceeded)
	claimAndFinish(plait.OutcomeSucceeded)
	end, err := s.Wait(ctx, id)
	require.NoError(t, err)
	require.Equal(t, plait.RunCompleted, end.Status)
	require.Equal(t, int64(1), end.Generation)
}
