package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

func testComplete(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "Succeed",
			rule: "a success stores the result, ends the task at now, counts it and appends an attempt record",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"))})
				claimed := h.Now()
				ct := claimNames(t, h)["a"]
				h.Advance(1500 * time.Millisecond)
				res := succeed(t, h, ct.Lease, "result", rule)
				require.Equal(t, store.RunRunning, res.RunStatus, rule)
				got := getRun(t, h, r.ID)
				require.Equal(t, 1, got.Succeeded, rule)
				ti := got.Task("a")
				require.Equal(t, store.TaskSucceeded, ti.Status, rule)
				require.Equal(t, []byte("result"), ti.Result, rule)
				sameTime(t, h.Now(), ti.EndedAt, rule)
				require.Len(t, ti.Attempts, 1, rule)
				at := ti.Attempts[0]
				require.Equal(t, 1, at.Attempt, rule)
				require.Equal(t, int64(1), at.Epoch, rule)
				require.Equal(t, defaultWorker, at.Worker, rule)
				sameTime(t, claimed, at.StartedAt, rule)
				sameDuration(t, 1500*time.Millisecond, at.Duration, rule)
				require.Equal(t, "succeeded", at.Outcome, rule)
			},
		},
		{
			name: "RunCompletes",
			rule: "a run completes when its last task finishes, with EndedAt now and its counters",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				ct := claimOne(t, h, "a", rule)
				require.Equal(t, store.RunRunning, succeed(t, h, ct.Lease, "", rule).RunStatus, rule)
				ct = claimOne(t, h, "b", rule)
				h.Advance(time.Second)
				require.Equal(t, store.RunCompleted, succeed(t, h, ct.Lease, "", rule).RunStatus, rule)
				got := getRun(t, h, r.ID)
				require.Equal(t, store.RunCompleted, got.Status, rule)
				require.Equal(t, 2, got.Succeeded, rule)
				sameTime(t, h.Now(), got.EndedAt, rule)
				claimNone(t, h, rule)
			},
		},
		{
			name: "Retry",
			rule: "a retry records the error, bumps the attempt and makes the task claimable again only after RetryDelay",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				first := claimOne(t, h, "a", rule)
				h.Advance(time.Second)
				res := finish(t, h, store.TaskOutcome{Lease: first.Lease, Outcome: store.OutcomeRetry, Error: "flaky", RetryDelay: 5 * time.Second})
				require.NoError(t, res.Err, rule)
				require.Equal(t, store.RunRunning, res.RunStatus, rule)
				ti := taskOf(t, h, r.ID, "a")
				require.Equal(t, store.TaskRetrying, ti.Status, rule)
				require.Equal(t, 2, ti.Attempt, rule)
				require.Equal(t, "flaky", ti.Error, rule)
				require.Len(t, ti.Attempts, 1, rule)
				require.Equal(t, "retry", ti.Attempts[0].Outcome, rule)
				require.Equal(t, "flaky", ti.Attempts[0].Error, rule)
				require.Equal(t, 1, ti.Attempts[0].Attempt, rule)

				cl := claimNone(t, h, rule)
				sameTime(t, h.Now().Add(5*time.Second), cl.NextDueAt, rule)
				h.Advance(5*time.Second - time.Millisecond)
				claimNone(t, h, rule)
				h.Advance(time.Millisecond)
				second := claimOne(t, h, "a", rule)
				require.Equal(t, 2, second.Attempt, rule)
				require.Equal(t, int64(2), second.Lease.Epoch, rule)
				sameTime(t, first.FirstStartedAt, second.FirstStartedAt, rule)
				succeed(t, h, second.Lease, "ok", rule)
				ti = taskOf(t, h, r.ID, "a")
				require.Len(t, ti.Attempts, 2, rule)
				require.Equal(t, 2, ti.Attempts[1].Attempt, rule)
			},
		},
		{
			name: "RetryNow",
			rule: "a retry with no delay makes the task ready at once",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				ct := claimOne(t, h, "a", rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeRetry, Error: "again"}).Err, rule)
				require.Equal(t, store.TaskReady, taskOf(t, h, r.ID, "a").Status, rule)
				ct = claimOne(t, h, "a", rule)
				require.Equal(t, 2, ct.Attempt, rule)
			},
		},
		{
			name: "Fail",
			rule: "a final failure fails the task, records its error, ends it at now, counts it, and fails the run under continue",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				ct := claimOne(t, h, "a", rule)
				res := failTask(t, h, ct.Lease, "broken", rule)
				require.Equal(t, store.RunFailed, res.RunStatus, rule)
				got := getRun(t, h, r.ID)
				require.Equal(t, store.RunFailed, got.Status, rule)
				require.Equal(t, 1, got.Failed, rule)
				sameTime(t, h.Now(), got.EndedAt, rule)
				ti := got.Task("a")
				require.Equal(t, store.TaskFailed, ti.Status, rule)
				require.Equal(t, "broken", ti.Error, rule)
				sameTime(t, h.Now(), ti.EndedAt, rule)
				require.Len(t, ti.Attempts, 1, rule)
				require.Equal(t, "failed", ti.Attempts[0].Outcome, rule)
				require.Equal(t, "broken", ti.Attempts[0].Error, rule)
			},
		},
		{
			name: "Release",
			rule: "a release makes the task ready at once with the same attempt, no crash and a new epoch",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				ct := claimOne(t, h, "a", rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeReleased}).Err, rule)
				ti := taskOf(t, h, r.ID, "a")
				require.Equal(t, store.TaskReady, ti.Status, rule)
				require.Equal(t, 1, ti.Attempt, rule)
				require.Equal(t, int64(2), ti.Epoch, rule)
				require.Zero(t, ti.Crashes, rule)
				require.Len(t, ti.Attempts, 1, rule)
				require.Equal(t, "released", ti.Attempts[0].Outcome, rule)
				again := claimOne(t, h, "a", rule)
				require.Equal(t, 1, again.Attempt, rule)
				require.Equal(t, int64(3), again.Lease.Epoch, rule)
			},
		},
		{
			name: "Return",
			rule: "a claim returned unstarted puts the task back at the head of its queue with a new epoch, no attempt record, and its first claim undone; the old lease is stale",
			run: func(t *testing.T, h *Harness, rule string) {
				first := createRun(t, h, nil)
				second := createRun(t, h, nil)
				ct := claim(t, h, &claimOpts{Limit: 1}).Tasks[0]
				require.Equal(t, first.ID, ct.Lease.RunID, rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeReturned}).Err, rule)
				ti := taskOf(t, h, first.ID, "a")
				require.Equal(t, store.TaskReady, ti.Status, rule)
				require.Zero(t, ti.Attempt, rule)
				require.True(t, ti.StartedAt.IsZero(), rule)
				require.Empty(t, ti.Attempts, rule)
				require.Equal(t, int64(2), ti.Epoch, rule)
				require.ErrorIs(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}).Err, store.ErrStaleEpoch, rule)
				got := claim(t, h, &claimOpts{Limit: 2}).Tasks
				require.Len(t, got, 2, rule)
				require.Equal(t, first.ID, got[0].Lease.RunID, rule+": back at the head, before the run created after it")
				require.Equal(t, second.ID, got[1].Lease.RunID, rule)
				require.Equal(t, 1, got[0].Attempt, rule)
				require.Equal(t, int64(3), got[0].Lease.Epoch, rule)

				// After a real attempt, a return keeps attempt and first start.
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: got[0].Lease, Outcome: store.OutcomeRetry, Error: "e"}).Err, rule)
				h.Advance(time.Second)
				again := claimOne(t, h, "a", rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: again.Lease, Outcome: store.OutcomeReturned}).Err, rule)
				ti = taskOf(t, h, first.ID, "a")
				require.Equal(t, 2, ti.Attempt, rule)
				require.False(t, ti.StartedAt.IsZero(), rule)
				require.Len(t, ti.Attempts, 1, rule)
			},
		},
		{
			name: "FanIn",
			rule: "a child with several parents becomes ready only when the last parent succeeds, and is released exactly once",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"), task("c", "a"), task("d", "b", "c"))})
				succeed(t, h, claimOne(t, h, "a", rule).Lease, "A", rule)
				got := claimNames(t, h)
				require.Len(t, got, 2, rule)
				succeed(t, h, got["b"].Lease, "B", rule)
				require.Equal(t, store.TaskPending, taskOf(t, h, r.ID, "d").Status, rule)
				claimNone(t, h, rule)
				succeed(t, h, got["c"].Lease, "C", rule)
				require.Equal(t, store.TaskReady, taskOf(t, h, r.ID, "d").Status, rule)
				d := claimOne(t, h, "d", rule)
				require.Equal(t, map[string][]byte{"b": []byte("B"), "c": []byte("C")}, d.ParentResults, rule)
				claimNone(t, h, rule)
				require.Equal(t, store.RunCompleted, succeed(t, h, d.Lease, "", rule).RunStatus, rule)
			},
		},
		{
			name: "FanOut",
			rule: "a success releases every child at once",
			run: func(t *testing.T, h *Harness, rule string) {
				tasks := []store.TaskSpec{task("root")}
				for _, n := range []string{"c1", "c2", "c3", "c4"} {
					tasks = append(tasks, task(n, "root"))
				}
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, tasks...)})
				succeed(t, h, claimOne(t, h, "root", rule).Lease, "R", rule)
				got := claimNames(t, h)
				require.Len(t, got, 4, rule)
				for _, ct := range got {
					require.Equal(t, map[string][]byte{"root": []byte("R")}, ct.ParentResults, rule)
				}
				claimNone(t, h, rule)
			},
		},
		{
			name: "ChildDelay",
			rule: "a child's Delay counts from the run's creation, not from its parents' end",
			run: func(t *testing.T, h *Harness, rule string) {
				created := h.Now()
				b, c := task("b", "a"), task("c", "a")
				b.Delay, c.Delay = 10*time.Second, time.Minute
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), b, c)})
				ct := claimOne(t, h, "a", rule)
				h.Advance(30 * time.Second)
				succeed(t, h, ct.Lease, "", rule)
				res := claim(t, h, nil)
				require.Len(t, res.Tasks, 1, rule)
				require.Equal(t, "b", res.Tasks[0].Lease.Task, rule)
				sameTime(t, created.Add(time.Minute), res.NextDueAt, rule)
				h.Advance(30 * time.Second)
				claimOne(t, h, "c", rule)
			},
		},
		{
			name: "BatchAppliesEach",
			rule: "each outcome of a batch applies on its own, and answers come back in order",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"), task("c"))})
				got := claimNames(t, h)
				stale := got["b"].Lease
				stale.Epoch++
				res, err := h.Store.TaskFinish(bg, &store.TaskFinishParams{WorkerID: defaultWorker, Outcomes: []store.TaskOutcome{
					{Lease: got["a"].Lease, Outcome: store.OutcomeSucceeded},
					{Lease: stale, Outcome: store.OutcomeSucceeded},
					{Lease: got["c"].Lease, Outcome: store.OutcomeFailed, Error: "x"},
				}})
				require.NoError(t, err, rule)
				require.Len(t, res, 3, rule)
				require.NoError(t, res[0].Err, rule)
				require.ErrorIs(t, res[1].Err, store.ErrStaleEpoch, rule)
				require.NoError(t, res[2].Err, rule)
				require.Equal(t, map[string]store.TaskStatus{"a": store.TaskSucceeded, "b": store.TaskRunning, "c": store.TaskFailed}, statuses(t, h, r.ID), rule)
			},
		},
		{
			name: "SameBatchTwice",
			rule: "an outcome repeated in one batch applies once; the repeat answers ErrStaleEpoch",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				ct := claimOne(t, h, "a", rule)
				o := store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}
				res, err := h.Store.TaskFinish(bg, &store.TaskFinishParams{WorkerID: defaultWorker, Outcomes: []store.TaskOutcome{o, o}})
				require.NoError(t, err, rule)
				require.NoError(t, res[0].Err, rule)
				require.ErrorIs(t, res[1].Err, store.ErrStaleEpoch, rule)
				got := getRun(t, h, r.ID)
				require.Equal(t, 1, got.Succeeded, rule)
				claimOne(t, h, "b", rule)
				claimNone(t, h, rule)
			},
		},
	})
}
