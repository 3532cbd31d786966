package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// conditionRow is one combination of the dependency table: child c depends
// on parent p under cond and on sibling q (on success) under join; p ends
// with outcome, then q succeeds, then everything claimable runs.
type conditionRow struct {
	cond     store.Condition
	join     store.Join
	strategy store.ErrorStrategy
	outcome  store.TaskStatus // TaskSucceeded or TaskFailed
	// after is c's status once p finished, final its status at the end.
	after, final store.TaskStatus
	run          store.RunStatus
}

const (
	sP = store.TaskPending
	sR = store.TaskReady
	sS = store.TaskSucceeded
	sK = store.TaskSkipped
	sC = store.TaskCancelled
	rC = store.RunCompleted
	rF = store.RunFailed
)

// conditionTable lists every condition × join × strategy × parent outcome,
// with the expected child and run statuses written out, not computed.
var conditionTable = func() []conditionRow {
	var rows []conditionRow
	ok := store.TaskSucceeded
	bad := store.TaskFailed
	all, anyOf := store.JoinAll, store.JoinAny
	onS, onC, onF := store.OnSuccess, store.OnCompletion, store.OnFailure
	for _, st := range []store.ErrorStrategy{store.StrategyContinue, store.StrategySkip, store.StrategyStop} {
		// A succeeded parent behaves the same under every strategy.
		rows = append(rows,
			conditionRow{onS, all, st, ok, sP, sS, rC},
			conditionRow{onS, anyOf, st, ok, sR, sS, rC},
			conditionRow{onC, all, st, ok, sP, sS, rC},
			conditionRow{onC, anyOf, st, ok, sR, sS, rC},
			conditionRow{onF, all, st, ok, sK, sK, rC},
			conditionRow{onF, anyOf, st, ok, sP, sS, rC},
		)
	}
	cont, skip, stop := store.StrategyContinue, store.StrategySkip, store.StrategyStop
	rows = append(rows,
		// continue: the failure is seen as a failure; the run ends failed.
		conditionRow{onS, all, cont, bad, sK, sK, rF},
		conditionRow{onS, anyOf, cont, bad, sP, sS, rF},
		conditionRow{onC, all, cont, bad, sP, sS, rF},
		conditionRow{onC, anyOf, cont, bad, sR, sS, rF},
		conditionRow{onF, all, cont, bad, sP, sS, rF},
		conditionRow{onF, anyOf, cont, bad, sR, sS, rF},
		// skip: the failed parent counts as skipped; the run completes.
		conditionRow{onS, all, skip, bad, sK, sK, rC},
		conditionRow{onS, anyOf, skip, bad, sP, sS, rC},
		conditionRow{onC, all, skip, bad, sP, sS, rC},
		conditionRow{onC, anyOf, skip, bad, sR, sS, rC},
		conditionRow{onF, all, skip, bad, sK, sK, rC},
		conditionRow{onF, anyOf, skip, bad, sP, sS, rC},
		// stop: the run fails at once and every unfinished task is cancelled.
		conditionRow{onS, all, stop, bad, sC, sC, rF},
		conditionRow{onS, anyOf, stop, bad, sC, sC, rF},
		conditionRow{onC, all, stop, bad, sC, sC, rF},
		conditionRow{onC, anyOf, stop, bad, sC, sC, rF},
		conditionRow{onF, all, stop, bad, sC, sC, rF},
		conditionRow{onF, anyOf, stop, bad, sC, sC, rF},
	)
	return rows
}()

func testConditions(t *testing.T, newHarness func(t *testing.T) *Harness) {
	var cases []testCase
	for _, row := range conditionTable {
		cases = append(cases, testCase{
			name: fmt.Sprintf("%s/%s/%s/parent-%s", row.cond, row.join, row.strategy, row.outcome),
			rule: fmt.Sprintf("a child joined %s on its parent's %s under strategy %s is %s once the parent %s, ends %s, and the run ends %s",
				row.join, row.cond, row.strategy, row.after, row.outcome, row.final, row.run),
			run: func(t *testing.T, h *Harness, rule string) { checkCondition(t, h, rule, row) },
		})
	}
	cases = append(cases, []testCase{
		{
			name: "SkipChain",
			rule: "a skip propagates down a long chain of on-success dependents, each skipped exactly once",
			run: func(t *testing.T, h *Harness, rule string) {
				const n = 1000
				tasks := []store.TaskSpec{task("t0"), task("side")}
				for i := 1; i < n; i++ {
					tasks = append(tasks, task(fmt.Sprintf("t%d", i), fmt.Sprintf("t%d", i-1)))
				}
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, tasks...)})
				got := claimNames(t, h)
				require.Len(t, got, 2, rule)
				h.Advance(time.Second)
				res := failTask(t, h, got["t0"].Lease, "boom", rule)
				require.Equal(t, store.RunRunning, res.RunStatus, rule)
				run := getRun(t, h, r.ID)
				require.Equal(t, n-1, run.Skipped, rule)
				for _, ti := range run.Tasks[2:] {
					require.Equal(t, store.TaskSkipped, ti.Status, rule)
					sameTime(t, h.Now(), ti.EndedAt, rule)
					require.Empty(t, ti.Attempts, rule)
				}
				require.Equal(t, store.RunFailed, succeed(t, h, got["side"].Lease, "", rule).RunStatus, rule)
			},
		},
		{
			name: "CompletionAfterSkip",
			rule: "a skipped parent satisfies an on-completion edge, so work after a skipped branch still runs",
			run: func(t *testing.T, h *Harness, rule string) {
				c := task("c")
				c.Deps = []store.Dep{{Task: "b", On: store.OnCompletion}}
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"), c, task("d", "c"))})
				failTask(t, h, claimOne(t, h, "a", rule).Lease, "boom", rule)
				require.Equal(t, store.TaskSkipped, taskOf(t, h, r.ID, "b").Status, rule)
				ct := claimOne(t, h, "c", rule)
				require.Empty(t, ct.ParentResults, rule)
				succeed(t, h, ct.Lease, "", rule)
				require.Equal(t, store.RunFailed, succeed(t, h, claimOne(t, h, "d", rule).Lease, "", rule).RunStatus, rule)
				got := getRun(t, h, r.ID)
				require.Equal(t, 2, got.Succeeded, rule)
				require.Equal(t, 1, got.Failed, rule)
				require.Equal(t, 1, got.Skipped, rule)
			},
		},
		{
			name: "AnyAllUnsatisfied",
			rule: "a child joined any is skipped only when its last edge resolves unsatisfied",
			run: func(t *testing.T, h *Harness, rule string) {
				c := task("c", "a", "b")
				c.Join = store.JoinAny
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"), c)})
				got := claimNames(t, h)
				failTask(t, h, got["a"].Lease, "x", rule)
				require.Equal(t, store.TaskPending, taskOf(t, h, r.ID, "c").Status, rule)
				res := failTask(t, h, got["b"].Lease, "y", rule)
				require.Equal(t, store.TaskSkipped, taskOf(t, h, r.ID, "c").Status, rule)
				require.Equal(t, store.RunFailed, res.RunStatus, rule)
			},
		},
		{
			name: "StopCancelsRunning",
			rule: "under stop a failure cancels running siblings, whose later finish or extend gets ErrStaleEpoch",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyStop, task("a"), task("b"), task("c"), task("d", "a"))})
				got := claim(t, h, &claimOpts{Limit: 2}).Tasks
				require.Len(t, got, 2, rule)
				a, b := got[0], got[1]
				require.Equal(t, "a", a.Lease.Task, rule)
				h.Advance(time.Second)
				res := failTask(t, h, a.Lease, "boom", rule)
				require.Equal(t, store.RunFailed, res.RunStatus, rule)

				run := getRun(t, h, r.ID)
				require.Equal(t, store.RunFailed, run.Status, rule)
				sameTime(t, h.Now(), run.EndedAt, rule)
				require.Equal(t, 1, run.Failed, rule)
				require.Equal(t, 3, run.Cancelled, rule)
				require.Equal(t, map[string]store.TaskStatus{"a": store.TaskFailed, "b": store.TaskCancelled, "c": store.TaskCancelled, "d": store.TaskCancelled}, statuses(t, h, r.ID), rule)
				tb := run.Task("b")
				require.Equal(t, int64(2), tb.Epoch, rule)
				require.Len(t, tb.Attempts, 1, rule)
				require.Equal(t, "cancelled", tb.Attempts[0].Outcome, rule)
				sameTime(t, h.Now(), tb.EndedAt, rule)

				late := finish(t, h, store.TaskOutcome{Lease: b.Lease, Outcome: store.OutcomeSucceeded})
				require.ErrorIs(t, late.Err, store.ErrStaleEpoch, rule)
				ext, err := h.Store.LeaseExtend(bg, &store.LeaseExtendParams{Leases: []store.Lease{b.Lease}, Duration: time.Minute})
				require.NoError(t, err, rule)
				require.ErrorIs(t, ext[0].Err, store.ErrStaleEpoch, rule)
				claimNone(t, h, rule)
				require.Equal(t, store.TaskCancelled, taskOf(t, h, r.ID, "b").Status, rule)
			},
		},
	}...)
	runCases(t, newHarness, cases)
}

func checkCondition(t *testing.T, h *Harness, rule string, row conditionRow) {
	c := store.TaskSpec{
		Name: "c", Handler: "h-c", Queue: store.DefaultQueue, Join: row.join,
		Deps: []store.Dep{{Task: "p", On: row.cond}, {Task: "q", On: store.OnSuccess}},
	}
	r := createRun(t, h, &runOpts{Workflow: spec(row.strategy, task("p"), task("q"), c)})
	got := claimNames(t, h)
	require.Len(t, got, 2, rule)

	if row.outcome == store.TaskSucceeded {
		succeed(t, h, got["p"].Lease, "P", rule)
	} else {
		failTask(t, h, got["p"].Lease, "boom", rule)
	}
	require.Equal(t, row.after, taskOf(t, h, r.ID, "c").Status, rule)

	res := finish(t, h, store.TaskOutcome{Lease: got["q"].Lease, Outcome: store.OutcomeSucceeded, Result: []byte("Q")})
	if row.final == store.TaskCancelled {
		require.ErrorIs(t, res.Err, store.ErrStaleEpoch, rule)
	} else {
		require.NoError(t, res.Err, rule)
	}
	ran := drain(t, h, rule)
	if row.final == store.TaskSucceeded {
		require.Equal(t, 1, ran, rule)
	} else {
		require.Zero(t, ran, rule)
	}

	run := getRun(t, h, r.ID)
	require.Equal(t, row.final, run.Task("c").Status, rule)
	require.Equal(t, row.run, run.Status, rule)
	require.Equal(t, run.Total, run.Succeeded+run.Failed+run.Skipped+run.Cancelled, rule)
}
