package storetest

import (
	"context"
	"testing"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testReplays is the suite of [store.ReplayStore].
func testReplays(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, append(generationCases(), []testCase{
		{
			name: "ReplayRestartsTheTaskAndItsDescendants",
			rule: "a replay of a failed task of a finished run resets it and every task below it to pending, opens generation 1, drops its dead letter, keeps the other tasks, and the counters are those of the new generation",
			run: func(t *testing.T, h *Harness, rule string) {
				rs := h.Store.(store.ReplayStore)
				// a -> b -> c, and d on its own.
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"), task("c", "b"), task("d"))})
				got := claimNames(t, h)
				failTask(t, h, got["a"].Lease, "boom", rule)
				succeed(t, h, got["d"].Lease, "ok", rule)
				done := getRun(t, h, r.ID)
				require.Equal(t, store.RunFailed, done.Status, rule)
				require.Zero(t, done.Generation, rule)
				require.Equal(t, 2, done.Skipped, rule)

				res, err := rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID, Generation: 0, Tasks: []string{"a"}})
				require.NoError(t, err, rule)
				require.False(t, res.Existing, rule)
				require.Equal(t, []string{"a", "b", "c"}, res.Reset, rule)
				require.Equal(t, int64(1), res.Run.Generation, rule)
				require.Equal(t, store.RunRunning, res.Run.Status, rule)
				require.Equal(t, 1, res.Run.Succeeded, rule)
				require.Zero(t, res.Run.Failed+res.Run.Skipped+res.Run.Cancelled, rule)
				require.Equal(t, map[string]store.TaskStatus{"a": store.TaskReady, "b": store.TaskPending, "c": store.TaskPending, "d": store.TaskSucceeded}, statuses(t, h, r.ID), rule)
				require.Empty(t, res.Run.Task("a").Error, rule)
				if d, ok := h.Store.(store.DeadLetterStore); ok {
					require.Empty(t, listDead(t, d, store.DeadLetterListParams{RunID: r.ID, Limit: 10}, rule).Letters, rule)
				}

				a := claimOne(t, h, "a", rule)
				require.Equal(t, 1, a.Attempt, rule+": the retry budget starts again")
				require.Greater(t, a.Lease.Epoch, got["a"].Lease.Epoch, rule+": the epoch keeps growing")
				succeed(t, h, a.Lease, "ok", rule)
				succeed(t, h, claimOne(t, h, "b", rule).Lease, "ok", rule)
				succeed(t, h, claimOne(t, h, "c", rule).Lease, "ok", rule)
				end := getRun(t, h, r.ID)
				require.Equal(t, store.RunCompleted, end.Status, rule)
				require.Equal(t, int64(1), end.Generation, rule)
				require.Equal(t, 4, end.Succeeded, rule)
				require.Zero(t, end.Failed+end.Skipped, rule)
				if hs, ok := h.Store.(store.HistoryStore); ok {
					hist, err := hs.AttemptHistory(bg, &store.AttemptHistoryParams{RunID: r.ID, Task: "a"})
					require.NoError(t, err, rule)
					require.Len(t, hist.Tasks, 1, rule)
					recs := hist.Tasks[0].Attempts
					require.Len(t, recs, 2, rule+": history keeps both generations")
					require.Equal(t, store.OutcomeFailed.String(), recs[0].Outcome, rule)
					require.Less(t, recs[0].Epoch, recs[1].Epoch, rule)
				}
			},
		},
		{
			name: "EachGenerationCompletesOnce",
			rule: "RunWait after a replay waits for the end of the new generation; a replay sent again opens nothing more; a replay of an active run or of another generation is refused with ErrReplayConflict",
			run: func(t *testing.T, h *Harness, rule string) {
				rs := h.Store.(store.ReplayStore)
				r := createRun(t, h, nil)
				failTask(t, h, claimOne(t, h, "a", rule).Lease, "boom", rule)
				_, err := rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID, Generation: 0})
				require.NoError(t, err, rule)

				ctx, cancel := context.WithCancel(bg)
				defer cancel()
				waited := make(chan *store.Run, 1)
				go func() {
					run, err := h.Store.RunWait(ctx, &store.RunWaitParams{ID: r.ID})
					if err != nil {
						run = nil
					}
					waited <- run
				}()

				again, err := rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID, Generation: 0})
				require.NoError(t, err, rule)
				require.True(t, again.Existing, rule+": a retried replay opens no second generation")
				require.Equal(t, int64(1), again.Run.Generation, rule)
				require.Empty(t, again.Reset, rule)

				_, err = rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID, Generation: 1})
				require.ErrorIs(t, err, store.ErrReplayConflict, rule+": an active run is refused")
				_, err = rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID, Generation: 7})
				require.ErrorIs(t, err, store.ErrReplayConflict, rule+": another generation is refused")

				succeed(t, h, claimOne(t, h, "a", rule).Lease, "ok", rule)
				run := <-waited
				require.NotNil(t, run, rule)
				require.Equal(t, store.RunCompleted, run.Status, rule+": the waiter saw the new generation end")
				require.Equal(t, int64(1), run.Generation, rule)
				claimNone(t, h, rule)
			},
		},
		{
			name: "RefusesWhatItCannotReplay",
			rule: "a replay names only failed, dead, cancelled or skipped tasks of a known run (ErrReplayConflict, ErrNotFound), and changes nothing when refused",
			run: func(t *testing.T, h *Harness, rule string) {
				rs := h.Store.(store.ReplayStore)
				r := createRun(t, h, nil)
				succeed(t, h, claimOne(t, h, "a", rule).Lease, "ok", rule)
				_, err := rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID, Tasks: []string{"a"}})
				require.ErrorIs(t, err, store.ErrReplayConflict, rule)
				_, err = rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule+": nothing to replay")
				_, err = rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID, Tasks: []string{"zz"}})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
				_, err = rs.RunReplay(bg, &store.RunReplayParams{RunID: "no-such-run"})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
				run := getRun(t, h, r.ID)
				require.Equal(t, store.RunCompleted, run.Status, rule)
				require.Zero(t, run.Generation, rule)
			},
		},
		{
			name: "LettersOfOtherRunsStay",
			rule: "a replay drops the dead letters of the tasks it resets and no other; a purge of another run's letters never loses this run's dead task",
			run: func(t *testing.T, h *Harness, rule string) {
				rs := h.Store.(store.ReplayStore)
				d, ok := h.Store.(store.DeadLetterStore)
				if !ok {
					t.Skip("the store keeps no dead letters")
				}
				r1 := createRun(t, h, nil)
				r2 := createRun(t, h, nil)
				for _, ct := range claim(t, h, nil).Tasks {
					failTask(t, h, ct.Lease, "boom", rule)
				}
				_, err := rs.RunReplay(bg, &store.RunReplayParams{RunID: r1.ID})
				require.NoError(t, err, rule)
				require.Equal(t, []string{r2.ID + " a"}, letterKeys(listDead(t, d, store.DeadLetterListParams{Limit: 10}, rule).Letters), rule)
				failTask(t, h, claimOne(t, h, "a", rule).Lease, "again", rule)
				res, err := d.DeadLetterPurge(bg, &store.DeadLetterPurgeParams{Letters: []store.DeadLetterRef{{RunID: r2.ID, Task: "a"}}})
				require.NoError(t, err, rule)
				require.Equal(t, 1, res.Purged, rule)
				left := listDead(t, d, store.DeadLetterListParams{Limit: 10}, rule).Letters
				require.Equal(t, []string{r1.ID + " a"}, letterKeys(left), rule)
				require.Equal(t, "again", left[0].Error, rule)
				require.Equal(t, int64(1), getRun(t, h, r1.ID).Generation, rule)
			},
		},
	}...))
}
