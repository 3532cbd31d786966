package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// routed returns the routed queue of the default queue for caps.
func routed(caps ...string) string { return store.RoutedQueue(store.DefaultQueue, caps) }

// needs returns task name requiring caps.
func needs(name string, caps ...string) store.TaskSpec {
	ts := task(name)
	ts.Requires = caps
	return ts
}

// routeRows is the routing table by capability: which queue a claim names
// and whether it finds a task with the given requirements. Written out, so
// each row can be checked by hand.
var routeRows = []struct {
	requires []string
	queues   []string
	claimed  bool
}{
	{nil, []string{store.DefaultQueue}, true},
	{nil, []string{routed("gpu")}, false},
	{[]string{"gpu"}, []string{store.DefaultQueue}, false},
	{[]string{"gpu"}, []string{routed("gpu")}, true},
	{[]string{"gpu"}, []string{routed("gpu", "ssd")}, false},
	{[]string{"ssd", "gpu"}, []string{routed("gpu")}, false},
	{[]string{"ssd", "gpu"}, []string{routed("gpu", "ssd")}, true},
	{[]string{"gpu", "gpu"}, []string{routed("gpu")}, true},
	{[]string{"gpu"}, []string{"other+gpu"}, false},
}

// waitingEvents reads the run's task_waiting events, skipping the case on
// a store without events.
func waitingEvents(t *testing.T, h *Harness, runID string) []store.StoreEvent {
	t.Helper()
	es, ok := h.Store.(store.EventStore)
	if !ok {
		t.Skip("needs EventStore")
	}
	res, err := es.EventRead(bg, &store.EventReadParams{RunID: runID, Limit: 1000})
	require.NoError(t, err)
	var out []store.StoreEvent
	for _, ev := range res.Events {
		if ev.Type == store.EventTaskWaiting {
			out = append(out, ev)
		}
	}
	return out
}

// testClaimRouter is the suite of [store.ClaimRouter].
func testClaimRouter(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "RoutedQueues",
			rule: "a task that requires capabilities is claimed only by a claim naming the routed queue of exactly its sorted, distinct capabilities",
			run: func(t *testing.T, h *Harness, rule string) {
				for i, row := range routeRows {
					r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, needs("a", row.requires...))})
					res := claim(t, h, &claimOpts{Queues: row.queues})
					require.Equal(t, row.claimed, len(res.Tasks) == 1, "row %d: %s", i, rule)
					if !row.claimed {
						// Clean up for the next row: claim it where it is.
						claim(t, h, &claimOpts{Queues: []string{routed(row.requires...)}})
					}
					require.Equal(t, store.TaskRunning, taskOf(t, h, r.ID, "a").Status, "row %d: %s", i, rule)
				}
			},
		},
		{
			name: "WaitingForCapability",
			rule: "a ready task that requires capabilities says it waits for them; a running one, or one that requires nothing, waits for nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, needs("a", "ssd", "gpu"), task("b"))})
				require.Equal(t, "capability gpu,ssd", taskOf(t, h, r.ID, "a").WaitingFor, rule)
				require.Empty(t, taskOf(t, h, r.ID, "b").WaitingFor, rule)
				claim(t, h, &claimOpts{Queues: []string{routed("gpu", "ssd")}})
				require.Empty(t, taskOf(t, h, r.ID, "a").WaitingFor, rule)
			},
		},
		{
			name: "RoutedThroughEveryPath",
			rule: "a routed task stays on its routed queue when it is delayed, retried, released, returned and recovered by the sweep",
			run: func(t *testing.T, h *Harness, rule string) {
				a := needs("a", "gpu")
				a.Delay = time.Second
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, a)})
				gpu := &claimOpts{Queues: []string{routed("gpu")}}
				res := claim(t, h, gpu)
				require.Empty(t, res.Tasks, rule)
				sameTime(t, h.Now().Add(time.Second), res.NextDueAt, rule)
				require.True(t, claim(t, h, nil).NextDueAt.IsZero(), rule)
				h.Advance(time.Second)
				claimNone(t, h, rule)
				ct := claim(t, h, gpu).Tasks[0]
				finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeRetry, Error: "again", RetryDelay: time.Second})
				h.Advance(time.Second)
				claimNone(t, h, rule)
				for _, o := range []store.Outcome{store.OutcomeReleased, store.OutcomeReturned} {
					ct = claim(t, h, gpu).Tasks[0]
					finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: o})
					claimNone(t, h, rule)
				}
				claim(t, h, &claimOpts{Queues: gpu.Queues, Lease: time.Second})
				h.Advance(2 * time.Second)
				sw, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10, CrashLimit: 3})
				require.NoError(t, err, rule)
				require.Len(t, sw.Requeued, 1, rule)
				claimNone(t, h, rule)
				require.Equal(t, "capability gpu", taskOf(t, h, r.ID, "a").WaitingFor, rule)
				require.Len(t, claim(t, h, gpu).Tasks, 1, rule)
			},
		},
		{
			name: "ChildrenRouted",
			rule: "a child that requires capabilities is released to its routed queue, also by a finish that claims",
			run: func(t *testing.T, h *Harness, rule string) {
				b := needs("b", "gpu")
				b.Deps = []store.Dep{{Task: "a", On: store.OnSuccess}}
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), b)})
				ct := claimOne(t, h, "a", rule)
				res := finishClaim(t, h, []store.TaskOutcome{{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}},
					store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
				require.Empty(t, res.Claimed.Tasks, rule)
				got := claim(t, h, &claimOpts{Queues: []string{store.DefaultQueue, routed("gpu")}})
				require.Len(t, got.Tasks, 1, rule)
				require.Equal(t, "b", got.Tasks[0].Lease.Task, rule)
			},
		},
		{
			name: "ReadyWaitOnRoutedQueue",
			rule: "ReadyWait on a routed queue returns when a task requiring its capabilities becomes ready",
			run: func(t *testing.T, h *Harness, rule string) {
				claim(t, h, &claimOpts{Queues: []string{routed("gpu")}})
				ctx, cancel := context.WithCancel(bg)
				defer cancel()
				done := readyWait(h, ctx, []string{routed("gpu")}, time.Minute)
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, needs("a", "gpu"))})
				require.NoError(t, returned(t, done, rule), rule)
			},
		},
		{
			name: "ReadyWaitForHandlersSetAside",
			rule: "ReadyWait naming handlers returns when another claim set a task aside for one of them, though no task is ready",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"))})
				// Take the queue's wake-up, as an idle process would.
				require.NoError(t, returned(t, readyWait(h, bg, nil, time.Minute), rule), rule)
				require.Empty(t, claim(t, h, &claimOpts{Handlers: []string{"h-b"}}).Tasks, rule)
				ctx, cancel := context.WithCancel(bg)
				defer cancel()
				done := make(chan error, 1)
				go func() {
					done <- h.Store.ReadyWait(ctx, &store.ReadyWaitParams{Timeout: time.Minute, Handlers: []string{"h-a"}})
				}()
				require.NoError(t, returned(t, done, rule), rule)
				require.Len(t, claim(t, h, &claimOpts{Handlers: []string{"h-a"}}).Tasks, 1, rule)
			},
		},
		{
			name: "HandlerSetAsideEvent",
			rule: "a task set aside for want of its handler makes one task_waiting event naming the handler, with the task still ready (stores with events)",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"))})
				require.Empty(t, claim(t, h, &claimOpts{Handlers: []string{"h-b"}}).Tasks, rule)
				evs := waitingEvents(t, h, r.ID)
				require.Len(t, evs, 1, rule)
				ev := evs[0]
				require.Equal(t, "a", ev.Task, rule)
				require.Equal(t, store.TaskReady, ev.TaskStatus, rule)
				require.Equal(t, "handler h-a", ev.WaitingFor, rule)
				require.Equal(t, "h-a", ev.Handler, rule)
				sameTime(t, h.Now(), ev.At, rule)
			},
		},
		{
			name: "HandlerSetAside",
			rule: "a claim listing its handlers never takes a task whose handler it lacks: the task stays ready, says which handler it waits for, and the next claim listing that handler takes it first",
			run: func(t *testing.T, h *Harness, rule string) {
				urgent := task("u")
				urgent.Priority = store.PriorityUrgent
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"), urgent)})
				res := claim(t, h, &claimOpts{Handlers: []string{"h-b"}})
				require.Len(t, res.Tasks, 1, rule)
				require.Equal(t, "b", res.Tasks[0].Lease.Task, rule)
				ta := taskOf(t, h, r.ID, "a")
				require.Equal(t, store.TaskReady, ta.Status, rule)
				require.Equal(t, "handler h-a", ta.WaitingFor, rule)
				require.Equal(t, "handler h-u", taskOf(t, h, r.ID, "u").WaitingFor, rule)
				require.Empty(t, claim(t, h, &claimOpts{Handlers: []string{"h-b"}}).Tasks, rule)
				require.Empty(t, claim(t, h, &claimOpts{Handlers: []string{}}).Tasks, rule)
				// Set aside first, then the queues.
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("c"))})
				res = claim(t, h, &claimOpts{Handlers: []string{"h-a", "h-c"}, Limit: 1})
				require.Len(t, res.Tasks, 1, rule)
				require.Equal(t, "a", res.Tasks[0].Lease.Task, rule)
				require.Empty(t, taskOf(t, h, r.ID, "a").WaitingFor, rule)
				// A claim for any handler takes what is set aside too.
				got := map[string]bool{}
				for _, ct := range claim(t, h, nil).Tasks {
					got[ct.Lease.Task] = true
				}
				require.Equal(t, map[string]bool{"u": true, "c": true}, got, rule)
			},
		},
		{
			name: "HandlerSetAsideByFinishClaim",
			rule: "a finish that claims sets aside the tasks whose handler it lacks, and a cancelled run's task set aside is never claimed",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"), task("c", "a"))})
				ct := claimOne(t, h, "a", rule)
				res := finishClaim(t, h, []store.TaskOutcome{{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}},
					store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute, Handlers: []string{"h-c"}})
				require.Len(t, res.Claimed.Tasks, 1, rule)
				require.Equal(t, "c", res.Claimed.Tasks[0].Lease.Task, rule)

				r2 := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("x"))})
				require.Empty(t, claim(t, h, &claimOpts{Handlers: []string{"h-c"}}).Tasks, rule)
				_, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: r2.ID, Reason: "stop"})
				require.NoError(t, err, rule)
				require.Empty(t, taskOf(t, h, r2.ID, "x").WaitingFor, rule)
				got := claim(t, h, &claimOpts{Handlers: []string{"h-b", "h-x"}})
				require.Len(t, got.Tasks, 1, rule)
				require.Equal(t, "b", got.Tasks[0].Lease.Task, rule)
			},
		},
	})
}
