package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

func testCancel(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "Cancel",
			rule: "a cancel ends every unfinished task cancelled with the reason as its error, fences running ones, keeps finished ones and ends the run cancelled",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"), task("c"), task("d", "b"))})
				got := claim(t, h, &claimOpts{Limit: 2}).Tasks
				require.Len(t, got, 2, rule)
				a, b := got[0], got[1]
				succeed(t, h, a.Lease, "A", rule)
				h.Advance(time.Second)
				run, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: r.ID, Reason: "operator"})
				require.NoError(t, err, rule)
				require.Equal(t, store.RunCancelled, run.Status, rule)
				sameTime(t, h.Now(), run.EndedAt, rule)
				require.Equal(t, 1, run.Succeeded, rule)
				require.Equal(t, 3, run.Cancelled, rule)
				for _, name := range []string{"b", "c", "d"} {
					ti := run.Task(name)
					require.Equal(t, store.TaskCancelled, ti.Status, rule)
					require.Equal(t, "operator", ti.Error, rule)
					sameTime(t, h.Now(), ti.EndedAt, rule)
				}
				require.Equal(t, store.TaskSucceeded, run.Task("a").Status, rule)
				require.Equal(t, []byte("A"), run.Task("a").Result, rule)
				tb := run.Task("b")
				require.Equal(t, int64(2), tb.Epoch, rule)
				require.Len(t, tb.Attempts, 1, rule)
				require.Equal(t, "cancelled", tb.Attempts[0].Outcome, rule)

				require.ErrorIs(t, finish(t, h, store.TaskOutcome{Lease: b.Lease, Outcome: store.OutcomeSucceeded}).Err, store.ErrStaleEpoch, rule)
				claimNone(t, h, rule)
				require.Equal(t, store.RunCancelled, getRun(t, h, r.ID).Status, rule)
			},
		},
		{
			name: "CancelFinished",
			rule: "cancelling a finished run changes nothing and returns it as it is",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				succeed(t, h, claimOne(t, h, "a", rule).Lease, "A", rule)
				ended := getRun(t, h, r.ID).EndedAt
				h.Advance(time.Minute)
				run, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: r.ID, Reason: "late"})
				require.NoError(t, err, rule)
				require.Equal(t, store.RunCompleted, run.Status, rule)
				sameTime(t, ended, run.EndedAt, rule)
				require.Zero(t, run.Cancelled, rule)
				require.Equal(t, store.TaskSucceeded, run.Task("a").Status, rule)
				require.Empty(t, run.Task("a").Error, rule)
			},
		},
		{
			name: "CancelTwice",
			rule: "cancelling a cancelled run changes nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				_, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: r.ID, Reason: "one"})
				require.NoError(t, err, rule)
				h.Advance(time.Second)
				run, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: r.ID, Reason: "two"})
				require.NoError(t, err, rule)
				require.Equal(t, store.RunCancelled, run.Status, rule)
				require.Equal(t, 1, run.Cancelled, rule)
				require.Equal(t, "one", run.Task("a").Error, rule)
				require.True(t, run.StartedAt.IsZero(), rule)
			},
		},
		{
			name: "CancelledNeverClaimed",
			rule: "the tasks of a cancelled run are never claimed, whether ready, delayed or retrying",
			run: func(t *testing.T, h *Harness, rule string) {
				b := task("b")
				b.Delay = time.Minute
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), b, task("c"))})
				got := claim(t, h, &claimOpts{Limit: 1}).Tasks
				require.Len(t, got, 1, rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: got[0].Lease, Outcome: store.OutcomeRetry, RetryDelay: 10 * time.Second}).Err, rule)
				_, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: r.ID})
				require.NoError(t, err, rule)
				claimNone(t, h, rule)
				h.Advance(time.Hour)
				claimNone(t, h, rule)
				require.Empty(t, sweep(t, h, 10, 0).Requeued, rule)
				for _, st := range statuses(t, h, r.ID) {
					require.Equal(t, store.TaskCancelled, st, rule)
				}
			},
		},
	})
}
