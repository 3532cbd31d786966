package plait_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

// A watcher of a replayed run that follows its ends from the oldest event
// kept, with MinGeneration set to the generation the replay opened, sees
// the new generation's run_completed and not the old run_failed; the
// attempts of the two generations read as two sequences.
func TestSubscribeFollowsTheReplayedGeneration(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	st := newMemStore(t, memstore.WithClock(clk))
	s, err := plait.New(st, plait.WithClock(clk))
	require.NoError(t, err)
	created, err := st.RunCreate(ctx, &store.RunCreateParams{Workflow: &plait.WorkflowSpec{Name: "wf",
		Tasks: []plait.TaskSpec{{Name: "a", Handler: "h"}}}})
	require.NoError(t, err)
	id := created.Run.ID
	claimAndFinish := func(o plait.Outcome) {
		t.Helper()
		c, err := st.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
		require.NoError(t, err)
		require.Len(t, c.Tasks, 1)
		res, err := st.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{{Lease: c.Tasks[0].Lease, Outcome: o, Error: "boom"}}})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
	}
	claimAndFinish(plait.OutcomeFailed)
	run, err := s.RunReplay(ctx, id, 0)
	require.NoError(t, err)

	ends := []plait.StoreEventType{plait.RunEventType(plait.RunFailed), plait.RunEventType(plait.RunCompleted)}
	sub, err := s.Subscribe(ctx, &plait.SubscribeFilter{RunID: id, Types: ends, MinGeneration: run.Generation})
	require.NoError(t, err)
	got := make(chan *plait.StoreEvent, 1)
	go func() {
		ev, err := sub.Next(ctx)
		if err != nil {
			ev = nil
		}
		got <- ev
	}()
	claimAndFinish(plait.OutcomeSucceeded)
	ev := <-got
	require.NotNil(t, ev)
	require.Equal(t, plait.RunEventType(plait.RunCompleted), ev.Type)
	require.Equal(t, int64(1), ev.Generation)

	hist, err := s.TaskHistory(ctx, id, "a")
	require.NoError(t, err)
	require.Len(t, hist, 2)
	require.Equal(t, [2]int64{0, 1}, [2]int64{hist[0].Generation, hist[1].Generation})
	require.Equal(t, [2]int{1, 1}, [2]int{hist[0].Attempt, hist[1].Attempt})
}

// A filter names one start at most, and no generation below 0.
func TestSubscribeRefusesTwoStarts(t *testing.T) {
	t.Parallel()
	s, err := plait.New(newMemStore(t))
	require.NoError(t, err)
	ctx := context.Background()
	for _, c := range []struct {
		filter plait.SubscribeFilter
		starts []string
	}{
		{plait.SubscribeFilter{After: "3", FromNow: true}, []string{"After", "FromNow"}},
		{plait.SubscribeFilter{After: "3", Since: time.Now()}, []string{"After", "Since"}},
		{plait.SubscribeFilter{After: "3", FromNow: true, Since: time.Now()}, []string{"After", "FromNow", "Since"}},
	} {
		_, err := s.Subscribe(ctx, &c.filter)
		require.ErrorIs(t, err, plait.ErrInvalidArgument)
		var se *plait.EventStartError
		require.ErrorAs(t, err, &se)
		require.Equal(t, c.starts, se.Starts)
	}
	_, err = s.Subscribe(ctx, &plait.SubscribeFilter{MinGeneration: -1})
	require.ErrorIs(t, err, plait.ErrInvalidArgument)
	_, err = s.Subscribe(ctx, &plait.SubscribeFilter{FromNow: true, RunID: "404"})
	require.ErrorIs(t, err, plait.ErrNotFound, "FromNow reads the run's end at once")
}
