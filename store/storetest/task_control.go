package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testTaskControls is the suite of [store.TaskControlStore].
func testTaskControls(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, append(taskControlRefusals(), []testCase{
		{
			name: "RunNowMakesADelayedTaskReady",
			rule: "run now makes a pending task waiting on its delay ready at once, its attempt kept, and records the reason as the Error of its task_ready event",
			run: func(t *testing.T, h *Harness, rule string) {
				a := task("a")
				a.Delay = time.Hour
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, a)})
				claimNone(t, h, rule+": the task waits on its delay")
				res := control(t, h, r.ID, "a", store.TaskRunNow, "customer waiting", rule)
				require.Equal(t, store.TaskReady, res.Run.Task("a").Status, rule)
				require.Zero(t, res.Run.Task("a").Attempt, rule)
				_, err := h.Store.(store.TaskControlStore).TaskControl(bg, &store.TaskControlParams{RunID: r.ID, Task: "a", Action: store.TaskRunNow})
				var ce *store.TaskControlError
				require.ErrorAs(t, err, &ce, rule+": sent again, it finds the task ready and changes nothing")
				require.Equal(t, store.TaskReady, ce.Status, rule)
				ct := claimOne(t, h, "a", rule)
				require.Equal(t, 1, ct.Attempt, rule+": the first attempt")
				succeed(t, h, ct.Lease, "ok", rule)
				require.Equal(t, store.RunCompleted, getRun(t, h, r.ID).Status, rule)
				requireTaskEvent(t, h, r.ID, "a", store.TaskEventType(store.TaskReady), "customer waiting", rule)
				h.Advance(2 * time.Hour)
				claimNone(t, h, rule+": the entry it waited in runs nothing when due")
			},
		},
		{
			name: "RunNowCutsARetryBackoffShort",
			rule: "run now makes a retrying task ready at once, its attempt number kept; its backoff entry runs nothing once due",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				first := claimOne(t, h, "a", rule)
				res := finish(t, h, store.TaskOutcome{Lease: first.Lease, Outcome: store.OutcomeRetry, Error: "flaky", RetryDelay: 10 * time.Minute})
				require.NoError(t, res.Err, rule)
				require.Equal(t, store.TaskRetrying, taskOf(t, h, r.ID, "a").Status, rule)
				claimNone(t, h, rule+": the task waits out its backoff")
				before := taskOf(t, h, r.ID, "a").Attempt
				got := control(t, h, r.ID, "a", store.TaskRunNow, "", rule)
				require.Equal(t, store.TaskReady, got.Run.Task("a").Status, rule)
				require.Equal(t, before, got.Run.Task("a").Attempt, rule)
				second := claimOne(t, h, "a", rule)
				require.Equal(t, before, second.Attempt, rule+": the attempt the retry scheduled")
				require.Greater(t, second.Lease.Epoch, first.Lease.Epoch, rule)
				succeed(t, h, second.Lease, "ok", rule)
				h.Advance(20 * time.Minute)
				claimNone(t, h, rule)
				require.Equal(t, store.RunCompleted, getRun(t, h, r.ID).Status, rule)
			},
		},
		{
			name: "SkipReleasesChildrenByTheirConditions",
			rule: "skip moves a ready task to skipped with the reason as its error and its event's, and its children are released as for any skipped parent",
			run: func(t *testing.T, h *Harness, rule string) {
				c := task("c")
				c.Deps = []store.Dep{{Task: "a", On: store.OnCompletion}}
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"), c)})
				res := control(t, h, r.ID, "a", store.TaskSkip, "not needed today", rule)
				require.Equal(t, store.TaskSkipped, res.Run.Task("a").Status, rule)
				require.Equal(t, "not needed today", res.Run.Task("a").Error, rule)
				require.Equal(t, map[string]store.TaskStatus{"a": store.TaskSkipped, "b": store.TaskSkipped, "c": store.TaskReady}, statuses(t, h, r.ID), rule)
				succeed(t, h, claimOne(t, h, "c", rule).Lease, "ok", rule)
				run := getRun(t, h, r.ID)
				require.Equal(t, store.RunCompleted, run.Status, rule)
				require.Equal(t, 2, run.Skipped, rule)
				require.Equal(t, 1, run.Succeeded, rule)
				requireTaskEvent(t, h, r.ID, "a", store.TaskEventType(store.TaskSkipped), "not needed today", rule)
			},
		},
		{
			name: "SkipOfTheLastTaskEndsTheRun",
			rule: "skip of a run's last open task ends the run, even one never claimed; a skipped delayed or retrying task is never claimed",
			run: func(t *testing.T, h *Harness, rule string) {
				// never claimed: the run is pending until the skip
				a := task("a")
				a.Delay = time.Minute
				r1 := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, a)})
				res := control(t, h, r1.ID, "a", store.TaskSkip, "", rule)
				require.Equal(t, store.RunCompleted, res.Run.Status, rule)
				ended, err := h.Store.RunWait(bg, &store.RunWaitParams{ID: r1.ID})
				require.NoError(t, err, rule)
				require.Equal(t, store.RunCompleted, ended.Status, rule)
				require.Equal(t, 1, ended.Skipped, rule)

				// retrying
				r2 := createRun(t, h, nil)
				ct := claimOne(t, h, "a", rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeRetry, Error: "flaky", RetryDelay: time.Minute}).Err, rule)
				res = control(t, h, r2.ID, "a", store.TaskSkip, "gave up", rule)
				require.Equal(t, store.TaskSkipped, res.Run.Task("a").Status, rule)
				require.Equal(t, store.RunCompleted, res.Run.Status, rule)
				h.Advance(2 * time.Minute)
				claimNone(t, h, rule+": the skipped tasks' entries run nothing once due")
			},
		},
		{
			name: "CancelFencesARunningAttempt",
			rule: "cancel of a running task ends it cancelled with the reason as its error: the attempt's lease no longer holds (extend and finish answer ErrStaleEpoch) and its children are settled as for a cancelled parent",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				ct := claimOne(t, h, "a", rule)
				res := control(t, h, r.ID, "a", store.TaskCancel, "wrong input", rule)
				a := res.Run.Task("a")
				require.Equal(t, store.TaskCancelled, a.Status, rule)
				require.Equal(t, "wrong input", a.Error, rule)
				require.Equal(t, store.TaskSkipped, res.Run.Task("b").Status, rule)
				require.Equal(t, store.RunCompleted, res.Run.Status, rule)
				require.Equal(t, 1, res.Run.Cancelled, rule)

				ext, err := h.Store.LeaseExtend(bg, &store.LeaseExtendParams{WorkerID: defaultWorker, Leases: []store.Lease{ct.Lease}, Duration: time.Minute})
				require.NoError(t, err, rule)
				require.ErrorIs(t, ext[0].Err, store.ErrStaleEpoch, rule)
				fin := finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded, Result: []byte("late")})
				require.ErrorIs(t, fin.Err, store.ErrStaleEpoch, rule)
				require.Equal(t, store.TaskCancelled, taskOf(t, h, r.ID, "a").Status, rule)
				h.Advance(time.Hour)
				swept, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10})
				require.NoError(t, err, rule)
				require.Empty(t, swept.Requeued, rule+": no lease is left to sweep")
				require.Empty(t, swept.Dead, rule)
				claimNone(t, h, rule)
				requireTaskEvent(t, h, r.ID, "a", store.TaskEventType(store.TaskCancelled), "wrong input", rule)
			},
		},
		{
			name: "CancelGivesTheLimitSlotBack",
			rule: "cancel of a running task gives back its limit slots once, so a task held back on the key runs",
			run: func(t *testing.T, h *Harness, rule string) {
				if _, ok := h.Store.(store.Limiter); !ok {
					t.Skip("needs store.Limiter")
				}
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, limited("a", conc("k", 1)), limited("b", conc("k", 1)))})
				first := claim(t, h, nil)
				require.Len(t, first.Tasks, 1, rule+": the key admits one")
				held := "b"
				if first.Tasks[0].Lease.Task == "b" {
					held = "a"
				}
				control(t, h, r.ID, first.Tasks[0].Lease.Task, store.TaskCancel, "", rule)
				next := claim(t, h, nil)
				require.Equal(t, []string{held}, claimedNames(next), rule)
				succeed(t, h, next.Tasks[0].Lease, "ok", rule)
				require.Equal(t, store.RunCompleted, getRun(t, h, r.ID).Status, rule)
			},
		},
		{
			name: "CancelOfAWaitingTask",
			rule: "cancel of a pending or ready task ends it cancelled; the rest of the run goes on and ends",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"), task("c"))})
				res := control(t, h, r.ID, "b", store.TaskCancel, "", rule)
				require.Equal(t, store.TaskCancelled, res.Run.Task("b").Status, rule)
				res = control(t, h, r.ID, "c", store.TaskCancel, "", rule)
				require.Equal(t, store.TaskCancelled, res.Run.Task("c").Status, rule)
				succeed(t, h, claimOne(t, h, "a", rule).Lease, "ok", rule)
				run := getRun(t, h, r.ID)
				require.Equal(t, store.RunCompleted, run.Status, rule)
				require.Equal(t, 2, run.Cancelled, rule)
				require.Equal(t, store.TaskCancelled, run.Task("b").Status, rule+": a finished parent does not revive it")
			},
		},
	}...))
}

// taskControlRefusals are the cases of what a control refuses.
func taskControlRefusals() []testCase {
	return []testCase{
		{
			name: "RefusesAStatusTheActionDoesNotApplyTo",
			rule: "a control on a task in a status it does not apply to answers a *TaskControlError matching ErrInvalidArgument and changes nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				tc := h.Store.(store.TaskControlStore)
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"), task("c"))})
				refused := func(name string, action store.TaskControlAction, st store.TaskStatus) {
					t.Helper()
					_, err := tc.TaskControl(bg, &store.TaskControlParams{RunID: r.ID, Task: name, Action: action, Reason: "x"})
					require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
					var ce *store.TaskControlError
					require.ErrorAs(t, err, &ce, rule)
					require.Equal(t, st, ce.Status, rule)
					require.Equal(t, name, ce.Task, rule)
					require.Equal(t, action, ce.Action, rule)
				}
				refused("a", store.TaskRunNow, store.TaskReady)
				refused("b", store.TaskRunNow, store.TaskPending) // it waits for its parent
				got := claimNames(t, h)
				refused("a", store.TaskRunNow, store.TaskRunning)
				refused("a", store.TaskSkip, store.TaskRunning)
				succeed(t, h, got["a"].Lease, "ok", rule)
				for _, action := range []store.TaskControlAction{store.TaskRunNow, store.TaskSkip, store.TaskCancel} {
					refused("a", action, store.TaskSucceeded)
				}
				require.Equal(t, map[string]store.TaskStatus{"a": store.TaskSucceeded, "b": store.TaskReady, "c": store.TaskRunning}, statuses(t, h, r.ID), rule)
				run := getRun(t, h, r.ID)
				require.Equal(t, store.RunRunning, run.Status, rule)
				require.Equal(t, 1, run.Succeeded, rule)
				require.Zero(t, run.Skipped+run.Cancelled, rule)
			},
		},
		{
			name: "UnknownRunOrTask",
			rule: "a control on an unknown run or task answers ErrNotFound; bad arguments answer ErrInvalidArgument",
			run: func(t *testing.T, h *Harness, rule string) {
				tc := h.Store.(store.TaskControlStore)
				r := createRun(t, h, nil)
				_, err := tc.TaskControl(bg, &store.TaskControlParams{RunID: "no-such-run", Task: "a", Action: store.TaskSkip})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
				_, err = tc.TaskControl(bg, &store.TaskControlParams{RunID: r.ID, Task: "zz", Action: store.TaskSkip})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
				_, err = tc.TaskControl(bg, &store.TaskControlParams{RunID: r.ID, Task: "a", Action: "pause"})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
				long := make([]byte, store.TaskControlReasonMax+1)
				_, err = tc.TaskControl(bg, &store.TaskControlParams{RunID: r.ID, Task: "a", Action: store.TaskSkip, Reason: string(long)})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
				require.Equal(t, store.TaskReady, taskOf(t, h, r.ID, "a").Status, rule)
			},
		},
	}
}

// control applies a task control and requires it applied.
func control(t *testing.T, h *Harness, runID, name string, action store.TaskControlAction, reason, rule string) *store.TaskControlResult {
	t.Helper()
	res, err := h.Store.(store.TaskControlStore).TaskControl(bg, &store.TaskControlParams{RunID: runID, Task: name, Action: action, Reason: reason})
	require.NoError(t, err, rule)
	require.NotNil(t, res.Run, rule)
	require.Equal(t, runID, res.Run.ID, rule)
	return res
}

// requireTaskEvent requires, on a store with events, that the run's stream
// holds an event of type typ for task name with the given Error.
func requireTaskEvent(t *testing.T, h *Harness, runID, name string, typ store.StoreEventType, errText, rule string) {
	t.Helper()
	if _, ok := h.Store.(store.EventStore); !ok {
		return
	}
	evs, _ := readEvents(t, h, runID, "", 100)
	for _, e := range evs {
		if e.Task == name && e.Type == typ {
			require.Equal(t, errText, e.Error, rule)
			return
		}
	}
	require.Failf(t, rule, "no %s event of task %s in %v", typ, name, eventTypes(evs))
}
