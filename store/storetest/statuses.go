package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// watcher reads a run after each step and checks that every status change
// it sees, of the run and of each task, is one plait's status machine
// allows. One call may make two moves (a claim moves a delayed task to
// ready and claims it), so what is observed between two reads must be at
// most two allowed moves; a move out of a terminal status never is.
type watcher struct {
	t     *testing.T
	h     *Harness
	id    string
	run   store.RunStatus
	tasks map[string]store.TaskStatus
	rule  string
}

func watch(t *testing.T, h *Harness, id, rule string) *watcher {
	w := &watcher{t: t, h: h, id: id, run: "", tasks: map[string]store.TaskStatus{}, rule: rule}
	w.step("create")
	return w
}

// step reads the run and checks the moves since the last step.
func (w *watcher) step(what string) {
	w.t.Helper()
	r := getRun(w.t, w.h, w.id)
	if r.Status != w.run {
		require.Truef(w.t, w.run.CanBecome(r.Status), "%s: after %s the run moved %q -> %q", w.rule, what, w.run, r.Status)
		w.run = r.Status
	}
	for _, ti := range r.Tasks {
		prev, seen := w.tasks[ti.Name]
		if seen && prev == ti.Status {
			continue
		}
		require.Truef(w.t, reachable(prev, ti.Status), "%s: after %s task %s moved %q -> %q", w.rule, what, ti.Name, prev, ti.Status)
		w.tasks[ti.Name] = ti.Status
	}
}

// reachable reports whether a task can go from one status to another in
// one or two allowed moves.
func reachable(from, to store.TaskStatus) bool {
	if from.CanBecome(to) {
		return true
	}
	for _, via := range from.Next() {
		if via.CanBecome(to) {
			return true
		}
	}
	return false
}

func testStatuses(t *testing.T, newHarness func(t *testing.T) *Harness) {
	const rule = "every status change a store makes is one the status machine allows"
	runCases(t, newHarness, []testCase{
		{
			name: "SuccessRetryAndFailure",
			rule: rule,
			run: func(t *testing.T, h *Harness, rule string) {
				wf := spec(store.StrategyContinue, task("a"), task("b", "a"), task("c", "b"))
				wf.Tasks[2].Deps[0].On = store.OnFailure
				delayed := task("d")
				delayed.Delay = time.Second
				wf.Tasks = append(wf.Tasks, delayed)
				w := watch(t, h, createRun(t, h, &runOpts{Workflow: wf}).ID, rule)
				a := claimOne(t, h, "a", rule)
				w.step("claim a")
				succeed(t, h, a.Lease, "ok", rule)
				w.step("succeed a")
				b := claimOne(t, h, "b", rule)
				w.step("claim b")
				finish(t, h, store.TaskOutcome{Lease: b.Lease, Outcome: store.OutcomeRetry, Error: "again", RetryDelay: time.Second})
				w.step("retry b later")
				h.Advance(time.Second)
				names := claimNames(t, h)
				w.step("claim after the delays")
				require.Contains(t, names, "b", rule)
				require.Contains(t, names, "d", rule)
				finish(t, h, store.TaskOutcome{Lease: names["b"].Lease, Outcome: store.OutcomeRetry, Error: "again"})
				w.step("retry b at once")
				succeed(t, h, names["d"].Lease, "ok", rule)
				w.step("succeed d")
				b = claimOne(t, h, "b", rule)
				w.step("claim b again")
				failTask(t, h, b.Lease, "broken", rule)
				w.step("fail b")
				c := claimOne(t, h, "c", rule)
				w.step("claim c")
				finish(t, h, store.TaskOutcome{Lease: c.Lease, Outcome: store.OutcomeReleased})
				w.step("release c")
				c = claimOne(t, h, "c", rule)
				w.step("claim c again")
				finish(t, h, store.TaskOutcome{Lease: c.Lease, Outcome: store.OutcomeReturned})
				w.step("return c")
				c = claimOne(t, h, "c", rule)
				w.step("claim c a third time")
				succeed(t, h, c.Lease, "cleaned", rule)
				w.step("succeed c")
				require.Equal(t, store.RunFailed, w.run, rule)
			},
		},
		{
			name: "SkipCancelAndDead",
			rule: rule,
			run: func(t *testing.T, h *Harness, rule string) {
				w := watch(t, h, createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"), task("x"))}).ID, rule)
				claimNames(t, h)
				w.step("claim a and x")
				h.Advance(defaultLease + time.Millisecond)
				_, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10, CrashLimit: 0})
				require.NoError(t, err, rule)
				w.step("sweep past the crash limit")
				require.Equal(t, store.TaskDead, w.tasks["a"], rule)
				require.Equal(t, store.TaskSkipped, w.tasks["b"], rule)

				other := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("p"), task("q", "p"))})
				w2 := watch(t, h, other.ID, rule)
				claimOne(t, h, "p", rule)
				w2.step("claim p")
				_, err = h.Store.RunCancel(bg, &store.RunCancelParams{ID: other.ID, Reason: "stop"})
				require.NoError(t, err, rule)
				w2.step("cancel")
				require.Equal(t, store.RunCancelled, w2.run, rule)
				require.Equal(t, store.TaskCancelled, w2.tasks["p"], rule)
				require.Equal(t, store.TaskCancelled, w2.tasks["q"], rule)
			},
		},
	})
}

func testRetention(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "FinishedRunFreedAfterRetention",
			rule: "a finished run is readable for its retention and gone after it, key included",
			run: func(t *testing.T, h *Harness, rule string) {
				if !h.Caps.ExpiresKeys || h.Caps.Retention <= 0 {
					t.Skip("needs Caps.ExpiresKeys and Caps.Retention")
				}
				r := createRun(t, h, &runOpts{Key: "once"})
				ct := claimOne(t, h, "a", rule)
				succeed(t, h, ct.Lease, "ok", rule)
				h.Advance(h.Caps.Retention - time.Second)
				require.Equal(t, store.RunCompleted, getRun(t, h, r.ID).Status, rule)
				h.Advance(2 * time.Second)
				_, err := h.Store.RunGet(bg, &store.RunGetParams{ID: r.ID})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
				again := createRun(t, h, &runOpts{Key: "once"})
				require.NotEqual(t, r.ID, again.ID, rule)
			},
		},
		{
			name: "UnfinishedRunKept",
			rule: "a run that has not finished is never freed by retention",
			run: func(t *testing.T, h *Harness, rule string) {
				if !h.Caps.ExpiresKeys || h.Caps.Retention <= 0 {
					t.Skip("needs Caps.ExpiresKeys and Caps.Retention")
				}
				r := createRun(t, h, nil)
				h.Advance(2 * h.Caps.Retention)
				require.Equal(t, store.RunPending, getRun(t, h, r.ID).Status, rule)
			},
		},
	})
}
