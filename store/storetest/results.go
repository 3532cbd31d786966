package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testResults is the suite of [store.ResultStore].
func testResults(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "AnswersSucceededTasksOnly",
			rule: "TaskResults answers the named tasks that succeeded, with nil for one without a result, leaves out running, failed and unknown names, and agrees with a claim's ParentResults",
			run: func(t *testing.T, h *Harness, rule string) {
				rs := h.Store.(store.ResultStore)
				wf := spec(store.StrategyContinue, task("a"), task("b"), task("c"), task("f"), task("j", "a", "b"))
				r := createRun(t, h, &runOpts{Workflow: wf})
				got := claimNames(t, h)
				require.Len(t, got, 4, rule)
				succeed(t, h, got["a"].Lease, `"ra"`, rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: got["b"].Lease, Outcome: store.OutcomeSucceeded}).Err, rule)
				failTask(t, h, got["f"].Lease, "boom", rule)
				res, err := rs.TaskResults(bg, &store.TaskResultsParams{RunID: r.ID, Tasks: []string{"a", "b", "c", "f", "j", "nope", "a"}})
				require.NoError(t, err, rule)
				require.Len(t, res.Results, 2, rule)
				require.Equal(t, `"ra"`, string(res.Results["a"]), rule)
				b, ok := res.Results["b"]
				require.True(t, ok, rule)
				require.Empty(t, b, rule)
				join := claimOne(t, h, "j", rule)
				require.Len(t, join.ParentResults, len(res.Results), rule)
				for name, v := range join.ParentResults {
					require.Equal(t, string(v), string(res.Results[name]), rule)
				}
			},
		},
		{
			name: "ClaimDefersResultsOfWideJoins",
			rule: "a claim with InlineResultsMax answers a task with more parents than it without their names or results and with ParentResultsDeferred, one with at most that many with its parents and results; the same claim sent again answers alike; the deferred results are read by name",
			run: func(t *testing.T, h *Harness, rule string) {
				rs := h.Store.(store.ResultStore)
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"), task("j", "a", "b"), task("k", "a"))})
				got := claimNames(t, h)
				succeed(t, h, got["a"].Lease, `"ra"`, rule)
				succeed(t, h, got["b"].Lease, `"rb"`, rule)
				p := &store.TaskClaimParams{WorkerID: defaultWorker, Limit: 10, LeaseDuration: time.Minute, RequestID: "inline-1", InlineResultsMax: 1}
				for _, again := range []bool{false, true} {
					res, err := h.Store.TaskClaim(bg, p)
					require.NoError(t, err, rule)
					byName := map[string]*store.ClaimedTask{}
					for _, ct := range res.Tasks {
						byName[ct.Lease.Task] = ct
					}
					require.Len(t, byName, 2, "%s (sent again: %v)", rule, again)
					require.True(t, byName["j"].ParentResultsDeferred, rule)
					require.Empty(t, byName["j"].ParentResults, rule)
					require.Empty(t, byName["j"].Spec.Deps, rule+": the parents are left out")
					require.Equal(t, "j", byName["j"].Spec.Name, rule)
					require.False(t, byName["k"].ParentResultsDeferred, rule)
					require.Equal(t, []store.Dep{{Task: "a"}}, byName["k"].Spec.Deps, rule)
					require.Equal(t, map[string]string{"a": `"ra"`}, stringsOf(byName["k"].ParentResults), rule)
				}
				res, err := rs.TaskResults(bg, &store.TaskResultsParams{RunID: r.ID, Tasks: []string{"a", "b"}})
				require.NoError(t, err, rule)
				require.Equal(t, map[string]string{"a": `"ra"`, "b": `"rb"`}, stringsOf(res.Results), rule)
			},
		},
		{
			name: "ReadsTheParentsOfATask",
			rule: "TaskResults with ParentsOf answers only parents of that task that succeeded: all of them when no task is named, else the named ones; a task the run lacks has none",
			run: func(t *testing.T, h *Harness, rule string) {
				rs := h.Store.(store.ResultStore)
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue,
					task("a"), task("b"), task("c"), task("x"), task("j", "a", "b", "c"), task("k", "x"))})
				got := claimNames(t, h)
				succeed(t, h, got["a"].Lease, `"ra"`, rule)
				succeed(t, h, got["b"].Lease, "", rule)
				succeed(t, h, got["x"].Lease, `"rx"`, rule) // succeeded, but no parent of j
				read := func(child string, names ...string) map[string]string {
					res, err := rs.TaskResults(bg, &store.TaskResultsParams{RunID: r.ID, Tasks: names, ParentsOf: child})
					require.NoError(t, err, rule)
					return stringsOf(res.Results)
				}
				require.Equal(t, map[string]string{"a": `"ra"`, "b": ""}, read("j"), rule+": every parent that succeeded (c runs)")
				require.Equal(t, map[string]string{"a": `"ra"`}, read("j", "a", "x", "c", "nope", "a"), rule+": the named parents")
				require.Equal(t, map[string]string{"x": `"rx"`}, read("k"), rule)
				require.Empty(t, read("a"), rule+": a root has no parents")
				require.Empty(t, read("nope"), rule+": nor has a task the run lacks")
				require.Empty(t, read("nope", "a"), rule)
				_, err := rs.TaskResults(bg, &store.TaskResultsParams{RunID: "no-such-run", ParentsOf: "j"})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
			},
		},
		{
			name: "ReadsManyNamesInOneCall",
			rule: "TaskResults answers every name of a long list in one call, each with its own result",
			run: func(t *testing.T, h *Harness, rule string) {
				rs := h.Store.(store.ResultStore)
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"))})
				got := claimNames(t, h)
				succeed(t, h, got["a"].Lease, `1`, rule)
				succeed(t, h, got["b"].Lease, `2`, rule)
				names := make([]string, 0, 1300)
				for i := 0; i < 1300; i++ {
					names = append(names, fmt.Sprintf("missing-%d", i))
				}
				names[777], names[1299] = "a", "b"
				res, err := rs.TaskResults(bg, &store.TaskResultsParams{RunID: r.ID, Tasks: names})
				require.NoError(t, err, rule)
				require.Equal(t, map[string]string{"a": "1", "b": "2"}, stringsOf(res.Results), rule)
				res, err = rs.TaskResults(bg, &store.TaskResultsParams{RunID: r.ID})
				require.NoError(t, err, rule)
				require.Empty(t, res.Results, rule)
			},
		},
		{
			name: "MissingRunIsNotFound",
			rule: "TaskResults of a run that does not exist answers ErrNotFound, and more than TaskResultsMax names ErrInvalidArgument",
			run: func(t *testing.T, h *Harness, rule string) {
				rs := h.Store.(store.ResultStore)
				_, err := rs.TaskResults(bg, &store.TaskResultsParams{RunID: "no-such-run", Tasks: []string{"a"}})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
				r := createRun(t, h, nil)
				_, err = rs.TaskResults(bg, &store.TaskResultsParams{RunID: r.ID, Tasks: make([]string, store.TaskResultsMax+1)})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
			},
		},
	})
}

// stringsOf turns encoded results into strings for comparison.
func stringsOf(m map[string][]byte) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}
