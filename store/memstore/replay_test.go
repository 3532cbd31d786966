package memstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// A replayed run leaves the expiry list it was in (from the middle of it
// here), is kept while it runs past its old retention, and is freed one
// retention after its new generation ends; its neighbours in the list are
// freed on time.
func TestReplayedRunLeavesItsRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s := newTestStore(t, WithClock(clk), WithRetention(time.Hour))
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}}}
	var ids []string
	for i := 0; i < 3; i++ {
		res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
		ids = append(ids, res.Run.ID)
	}
	runOnce := func(o store.Outcome) {
		t.Helper()
		c, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
		require.NoError(t, err)
		require.NotEmpty(t, c.Tasks)
		for _, ct := range c.Tasks {
			res, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{{Lease: ct.Lease, Outcome: o, Error: "boom"}}})
			require.NoError(t, err)
			require.NoError(t, res[0].Err)
		}
	}
	runOnce(store.OutcomeFailed)
	_, err := s.RunReplay(ctx, &store.RunReplayParams{RunID: ids[1]})
	require.NoError(t, err)

	clk.Advance(2 * time.Hour)
	for i, id := range ids {
		_, err := s.RunGet(ctx, &store.RunGetParams{ID: id})
		if i == 1 {
			require.NoError(t, err, "a replayed run is kept while it runs")
		} else {
			require.ErrorIs(t, err, store.ErrNotFound, "its neighbours in the expiry list are freed on time")
		}
	}
	runOnce(store.OutcomeSucceeded)
	clk.Advance(30 * time.Minute)
	run, err := s.RunGet(ctx, &store.RunGetParams{ID: ids[1]})
	require.NoError(t, err, "kept for a retention after its new end")
	require.Equal(t, store.RunCompleted, run.Status)
	clk.Advance(time.Hour)
	_, err = s.RunGet(ctx, &store.RunGetParams{ID: ids[1]})
	require.ErrorIs(t, err, store.ErrNotFound)
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Empty(t, s.runs)
	require.Empty(t, s.expiry)
	require.Empty(t, s.dead)
}
