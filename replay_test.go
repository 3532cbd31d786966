package plait_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

func TestReplayIsUnsupportedWithoutTheCapability(t *testing.T) {
	t.Parallel()
	s, err := plait.New(coreOnly{newMemStore(t)})
	require.NoError(t, err)
	_, err = s.RunReplay(context.Background(), "1", 0)
	require.ErrorIs(t, err, plait.ErrUnsupported)
	var ue *plait.UnsupportedError
	require.True(t, errors.As(err, &ue))
	require.Equal(t, "ReplayStore", ue.Capability)
	_, err = s.DeadLetterRequeue(context.Background(), "1")
	require.ErrorIs(t, err, plait.ErrUnsupported)
}

// A requeue of a run's dead letters replays their tasks as generation 1,
// and Wait then answers the end of that generation.
func TestRequeueDeadLettersOpensANewGeneration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	st := newMemStore(t, memstore.WithClock(clk))
	s, err := plait.New(st, plait.WithClock(clk))
	require.NoError(t, err)
	created, err := st.RunCreate(ctx, &store.RunCreateParams{Workflow: &plait.WorkflowSpec{Name: "wf",
		Tasks: []plait.TaskSpec{{Name: "a", Handler: "h"}, {Name: "b", Handler: "h", Deps: []plait.Dep{{Task: "a"}}}}}})
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
	first, err := s.RunWait(ctx, id)
	require.NoError(t, err)
	require.Equal(t, plait.RunFailed, first.Status)

	_, err = s.RunReplay(ctx, id, 3)
	require.ErrorIs(t, err, plait.ErrReplayConflict)
	gen, err := s.DeadLetterRequeue(ctx, id)
	require.NoError(t, err)
	require.Equal(t, int64(1), gen)
	letters, err := s.DeadLetterList(ctx, plait.DeadLetterListParams{RunID: id})
	require.NoError(t, err)
	require.Empty(t, letters.Letters)
	_, err = s.RunReplay(ctx, id, 1)
	var re *plait.ReplayError
	require.True(t, errors.As(err, &re), "a running generation is not replayed")
	require.Equal(t, plait.RunRunning, re.Status)

	claimAndFinish(plait.OutcomeSucceeded)
	claimAndFinish(plait.OutcomeSucceeded)
	end, err := s.RunWait(ctx, id)
	require.NoError(t, err)
	require.Equal(t, plait.RunCompleted, end.Status)
	require.Equal(t, int64(1), end.Generation)
}

// On every backend, a workflow whose task failed for good runs again from
// the failed task once its dead letters are requeued, at once, in the
// process that saw it fail (which remembers the run ended for a lease
// duration, to stop siblings of a stopped run, and must not take the new
// generation's tasks for those): the handler sees the same payload, the
// task below it runs, and Wait answers the end of the new generation.
func TestRequeueRunsTheFailedPartAgainOnEveryStore(t *testing.T) {
	forEachStore(t, func(t *testing.T, f storeFactory) {
		ctx := context.Background()
		clk := fakeclock.New(epoch)
		store := f.new(t, clk)
		s, err := plait.New(store, plait.WithClock(clk), plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		require.NoError(t, err)
		var calls atomic.Int32
		payloads := make(chan string, 4)
		require.NoError(t, s.Handle("flaky", func(ctx context.Context, task *plait.Task) (any, error) {
			var p string
			if err := task.Decode(&p); err != nil {
				return nil, plait.Permanent(err)
			}
			payloads <- p
			if calls.Add(1) == 1 {
				return nil, plait.Permanent(errors.New("boom"))
			}
			return "ok", nil
		}))
		require.NoError(t, s.Handle("after", func(ctx context.Context, task *plait.Task) (any, error) { return "after", nil }))
		long := strings.Repeat("a payload long enough to be kept apart ", 3)
		run, err := s.Submit(ctx, plait.NewWorkflow("requeue").
			Task("a", "flaky", long).
			Task("b", "after", nil, plait.After("a")))
		require.NoError(t, err)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- s.Run(runCtx) }()
		defer func() {
			cancel()
			require.NoError(t, <-done)
		}()
		wctx, wcancel := context.WithTimeout(ctx, failAfter)
		defer wcancel()
		first, err := s.RunWait(wctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, plait.RunFailed, first.Status)
		require.Equal(t, plait.TaskSkipped, first.Task("b").Status)

		gen, err := s.DeadLetterRequeue(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, int64(1), gen)
		end, err := s.RunWait(wctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, plait.RunCompleted, end.Status, "the new generation ran to its end")
		require.Equal(t, int64(1), end.Generation)
		require.Equal(t, plait.TaskSucceeded, end.Task("b").Status)
		require.Equal(t, long, <-payloads)
		require.Equal(t, long, <-payloads, "the second attempt got the same payload")
	})
}
