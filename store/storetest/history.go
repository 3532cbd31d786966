package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testHistory is the suite of [store.HistoryStore].
func testHistory(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "OneRecordPerEndedClaim",
			rule: "every ended claim leaves one attempt record, appended in order and never changed: attempt, epoch, worker, queued time, start, end, duration, outcome, error and the retry delay chosen; an attempt is queued when its task was created, when a retry's backoff ended, or when a lost lease or a release put it back",
			run: func(t *testing.T, h *Harness, rule string) {
				hs := h.Store.(store.HistoryStore)
				r := createRun(t, h, nil)
				t0 := h.Now()
				ct := claim(t, h, &claimOpts{Worker: "node-1.w1"}).Tasks[0]
				h.Advance(250 * time.Millisecond)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeRetry, Error: "boom", RetryDelay: 1500 * time.Millisecond}).Err, rule)
				first := history(t, hs, r.ID, "a", rule)
				require.Len(t, first, 1, rule)

				h.Advance(1500 * time.Millisecond)
				t1 := h.Now()
				claim(t, h, &claimOpts{Worker: "node-2.w1", Lease: time.Second})
				h.Advance(2 * time.Second)
				sw, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10, CrashLimit: 3})
				require.NoError(t, err, rule)
				require.Len(t, sw.Requeued, 1, rule)

				t2 := h.Now()
				ct = claimOne(t, h, "a", rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeReleased, Error: "shutdown"}).Err, rule)
				h.Advance(10 * time.Millisecond)
				t3 := h.Now()
				ct = claimOne(t, h, "a", rule)
				h.Advance(40 * time.Millisecond)
				succeed(t, h, ct.Lease, "ok", rule)

				got := history(t, hs, r.ID, "a", rule)
				want := []store.Attempt{
					{Attempt: 1, Epoch: 1, Worker: "node-1.w1", QueuedAt: t0, StartedAt: t0, Duration: 250 * time.Millisecond, Outcome: "retry", Error: "boom", RetryDelay: 1500 * time.Millisecond},
					{Attempt: 2, Epoch: 2, Worker: "node-2.w1", QueuedAt: t1, StartedAt: t1, Duration: 2 * time.Second, Outcome: "crashed"},
					{Attempt: 2, Epoch: 4, Worker: defaultWorker, QueuedAt: t2, StartedAt: t2, Outcome: "released", Error: "shutdown"},
					{Attempt: 2, Epoch: 6, Worker: defaultWorker, QueuedAt: t2, StartedAt: t3, Duration: 40 * time.Millisecond, Outcome: "succeeded"},
				}
				require.Len(t, got, len(want), rule)
				for i := range want {
					w, g := want[i], got[i]
					require.Equal(t, [...]any{w.Attempt, w.Epoch, w.Worker, w.Outcome, w.Error}, [...]any{g.Attempt, g.Epoch, g.Worker, g.Outcome, g.Error}, rule)
					sameTime(t, w.QueuedAt, g.QueuedAt, rule)
					sameTime(t, w.StartedAt, g.StartedAt, rule)
					sameTime(t, w.StartedAt.Add(w.Duration), g.EndedAt, rule)
					sameDuration(t, w.Duration, g.Duration, rule)
					sameDuration(t, w.RetryDelay, g.RetryDelay, rule)
				}
				require.Equal(t, first[0], got[0], rule+": an earlier record is never rewritten")
				require.Equal(t, got, taskOf(t, h, r.ID, "a").Attempts, rule+": RunGet answers the same records")
			},
		},
		{
			name: "RecordsNameTheNode",
			rule: "a claim made under a node id (a worker id, a dot, 8 hex digits) is answered with the worker id and the node id apart, in the task, its attempt record and its events",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				got := claim(t, h, &claimOpts{Worker: "host-7.0123abcd", Limit: 1})
				require.Len(t, got.Tasks, 1, rule)
				succeed(t, h, got.Tasks[0].Lease, "", rule)
				ti := getRun(t, h, r.ID).Task("a")
				require.Equal(t, [2]string{"host-7", "host-7.0123abcd"}, [2]string{ti.Worker, ti.Node}, rule)
				require.Len(t, ti.Attempts, 1, rule)
				require.Equal(t, [2]string{"host-7", "host-7.0123abcd"}, [2]string{ti.Attempts[0].Worker, ti.Attempts[0].Node}, rule)
				if _, ok := h.Store.(store.EventStore); ok {
					evs, _ := readEvents(t, h, r.ID, store.EventCursor(""), 100)
					seen := 0
					for _, e := range evs {
						if e.Task == "a" && e.TaskStatus == store.TaskSucceeded {
							require.Equal(t, [2]string{"host-7", "host-7.0123abcd"}, [2]string{e.Worker, e.Node}, rule)
							seen++
						}
					}
					require.Equal(t, 1, seen, rule)
				}
			},
		},
		{
			name: "QueuedAtOfDelayedAndReleasedTasks",
			rule: "a delayed task's attempt is queued at its due time, however late a claim takes it; a child's when its parent's end released it; a claim given back unstarted keeps the time its task was queued",
			run: func(t *testing.T, h *Harness, rule string) {
				hs := h.Store.(store.HistoryStore)
				a := task("a")
				a.Delay = 2 * time.Second
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, a, task("b", "a"))})
				due := h.Now().Add(2 * time.Second)
				h.Advance(5 * time.Second)
				ct := claimOne(t, h, "a", rule)
				h.Advance(100 * time.Millisecond)
				released := h.Now()
				succeed(t, h, ct.Lease, "", rule)
				h.Advance(time.Second)
				ct = claimOne(t, h, "b", rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeReturned}).Err, rule)
				h.Advance(time.Second)
				started := h.Now()
				ct = claimOne(t, h, "b", rule)
				succeed(t, h, ct.Lease, "", rule)

				ah := history(t, hs, r.ID, "a", rule)
				require.Len(t, ah, 1, rule)
				sameTime(t, due, ah[0].QueuedAt, rule)
				bh := history(t, hs, r.ID, "b", rule)
				require.Len(t, bh, 1, rule)
				sameTime(t, released, bh[0].QueuedAt, rule)
				sameTime(t, started, bh[0].StartedAt, rule)
			},
		},
		{
			name: "HistoryOutlivesItsRun",
			rule: "a store that keeps history longer than runs answers a finished run's attempt records, per run and per task, after the run is gone and until the history retention is over; a deleted run takes its records with it",
			run: func(t *testing.T, h *Harness, rule string) {
				if !h.Caps.ExpiresKeys || h.Caps.HistoryRetention <= h.Caps.Retention {
					t.Skip("needs Caps.ExpiresKeys and Caps.HistoryRetention above Caps.Retention")
				}
				hs := h.Store.(store.HistoryStore)
				qs, deletes := h.Store.(store.QueryStore)
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				ct := claimOne(t, h, "a", rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeRetry, Error: "once"}).Err, rule)
				succeed(t, h, claimOne(t, h, "a", rule).Lease, "", rule)
				succeed(t, h, claimOne(t, h, "b", rule).Lease, "", rule)
				require.Equal(t, store.RunCompleted, getRun(t, h, r.ID).Status, rule)
				var gone *store.Run
				if deletes {
					gone = createRun(t, h, nil)
					succeed(t, h, claimOne(t, h, "a", rule).Lease, "", rule)
				}
				before, err := hs.AttemptHistory(bg, &store.AttemptHistoryParams{RunID: r.ID})
				require.NoError(t, err, rule)
				require.Len(t, before.Tasks, 2, rule)
				require.Len(t, before.Tasks[0].Attempts, 2, rule)
				if deletes {
					require.NoError(t, qs.RunDelete(bg, &store.RunDeleteParams{ID: gone.ID}), rule)
				}

				h.Advance(h.Caps.Retention + time.Second)
				_, err = h.Store.RunGet(bg, &store.RunGetParams{ID: r.ID})
				require.ErrorIs(t, err, store.ErrNotFound, rule+": the run is gone")
				after, err := hs.AttemptHistory(bg, &store.AttemptHistoryParams{RunID: r.ID})
				require.NoError(t, err, rule)
				require.Equal(t, before, after, rule)
				one, err := hs.AttemptHistory(bg, &store.AttemptHistoryParams{RunID: r.ID, Task: "b"})
				require.NoError(t, err, rule)
				require.Equal(t, []store.TaskHistory{before.Tasks[1]}, one.Tasks, rule)
				if deletes {
					_, err = hs.AttemptHistory(bg, &store.AttemptHistoryParams{RunID: gone.ID})
					require.ErrorIs(t, err, store.ErrNotFound, rule+": a deleted run's records")
				}

				h.Advance(h.Caps.HistoryRetention - h.Caps.Retention)
				_, err = hs.AttemptHistory(bg, &store.AttemptHistoryParams{RunID: r.ID})
				require.ErrorIs(t, err, store.ErrNotFound, rule+": the records after the history retention")
			},
		},
		{
			name: "PerRunAndPerTask",
			rule: "AttemptHistory answers every task of the run in definition order, or the one task asked for; an unknown run or task is not found",
			run: func(t *testing.T, h *Harness, rule string) {
				hs := h.Store.(store.HistoryStore)
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"), task("c", "a"))})
				got := claimNames(t, h)
				succeed(t, h, got["b"].Lease, "", rule)
				failTask(t, h, got["a"].Lease, "no", rule)
				res, err := hs.AttemptHistory(bg, &store.AttemptHistoryParams{RunID: r.ID})
				require.NoError(t, err, rule)
				require.Len(t, res.Tasks, 3, rule)
				require.Equal(t, []string{"a", "b", "c"}, []string{res.Tasks[0].Task, res.Tasks[1].Task, res.Tasks[2].Task}, rule)
				require.Len(t, res.Tasks[0].Attempts, 1, rule)
				require.Equal(t, "failed", res.Tasks[0].Attempts[0].Outcome, rule)
				require.Equal(t, "no", res.Tasks[0].Attempts[0].Error, rule)
				require.Equal(t, "succeeded", res.Tasks[1].Attempts[0].Outcome, rule)
				require.Empty(t, res.Tasks[2].Attempts, rule+": a task that never ran has no record")
				one, err := hs.AttemptHistory(bg, &store.AttemptHistoryParams{RunID: r.ID, Task: "b"})
				require.NoError(t, err, rule)
				require.Equal(t, []store.TaskHistory{res.Tasks[1]}, one.Tasks, rule)
				_, err = hs.AttemptHistory(bg, &store.AttemptHistoryParams{RunID: r.ID, Task: "zz"})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
				_, err = hs.AttemptHistory(bg, &store.AttemptHistoryParams{RunID: "no-such-run"})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
			},
		},
		{
			name: "CancelAndReturn",
			rule: "a cancel records the running attempt as cancelled with the reason; a claim returned unstarted leaves no record and keeps the records before it",
			run: func(t *testing.T, h *Harness, rule string) {
				hs := h.Store.(store.HistoryStore)
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"))})
				got := claimNames(t, h)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: got["b"].Lease, Outcome: store.OutcomeReleased}).Err, rule)
				ct := claimOne(t, h, "b", rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeReturned}).Err, rule)
				b := taskOf(t, h, r.ID, "b")
				require.Equal(t, 1, b.Attempt, rule+": a returned claim after a released one undoes nothing")
				require.False(t, b.StartedAt.IsZero(), rule)
				_, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: r.ID, Reason: "stop"})
				require.NoError(t, err, rule)
				a := history(t, hs, r.ID, "a", rule)
				require.Len(t, a, 1, rule)
				require.Equal(t, "cancelled", a[0].Outcome, rule)
				require.Equal(t, "stop", a[0].Error, rule)
				bh := history(t, hs, r.ID, "b", rule)
				require.Len(t, bh, 1, rule)
				require.Equal(t, "released", bh[0].Outcome, rule)
			},
		},
		{
			name: "TimedOut",
			rule: "a retry or failure marked TimedOut is recorded as timed out, with its error and retry delay, and moves the task as the outcome says; TimedOut on a success changes nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				hs := h.Store.(store.HistoryStore)
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"))})
				got := claimNames(t, h)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: got["a"].Lease, Outcome: store.OutcomeRetry, Error: "timeout after 1s", RetryDelay: time.Second, TimedOut: true}).Err, rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: got["b"].Lease, Outcome: store.OutcomeFailed, Error: "timeout after 1s", TimedOut: true}).Err, rule)
				a := history(t, hs, r.ID, "a", rule)
				require.Len(t, a, 1, rule)
				require.Equal(t, [...]any{"timed out", "timeout after 1s"}, [...]any{a[0].Outcome, a[0].Error}, rule)
				sameDuration(t, time.Second, a[0].RetryDelay, rule)
				require.Equal(t, store.TaskRetrying, taskOf(t, h, r.ID, "a").Status, rule)
				b := history(t, hs, r.ID, "b", rule)
				require.Len(t, b, 1, rule)
				require.Equal(t, [...]any{"timed out", "timeout after 1s"}, [...]any{b[0].Outcome, b[0].Error}, rule)
				require.Equal(t, store.TaskFailed, taskOf(t, h, r.ID, "b").Status, rule)

				h.Advance(time.Second)
				ct := claimOne(t, h, "a", rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded, TimedOut: true}).Err, rule)
				a = history(t, hs, r.ID, "a", rule)
				require.Len(t, a, 2, rule)
				require.Equal(t, "succeeded", a[1].Outcome, rule)
			},
		},
	})
}

// history answers one task's attempt records and requires the call to
// succeed.
func history(t *testing.T, hs store.HistoryStore, runID, name, rule string) []store.Attempt {
	t.Helper()
	res, err := hs.AttemptHistory(bg, &store.AttemptHistoryParams{RunID: runID, Task: name})
	require.NoError(t, err, rule)
	require.Len(t, res.Tasks, 1, rule)
	require.Equal(t, name, res.Tasks[0].Task, rule)
	return res.Tasks[0].Attempts
}
