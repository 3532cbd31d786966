package storetest

import (
	"sort"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// limited returns task name carrying limits.
func limited(name string, ls ...store.TaskLimit) store.TaskSpec {
	ts := task(name)
	ts.Limits = ls
	return ts
}

// conc is a concurrency limit.
func conc(key string, n int) store.TaskLimit { return store.TaskLimit{Key: key, Concurrency: n} }

// claimedNames returns the sorted task names of a claim.
func claimedNames(res *store.TaskClaimResult) []string {
	var out []string
	for _, ct := range res.Tasks {
		out = append(out, ct.Lease.Task)
	}
	sort.Strings(out)
	return out
}

// limitEndings lists every way a running attempt ends, each of which must
// give its slot back once.
var limitEndings = []struct {
	name string
	end  func(t *testing.T, h *Harness, ct *store.ClaimedTask)
}{
	{"Succeeded", func(t *testing.T, h *Harness, ct *store.ClaimedTask) {
		finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded})
	}},
	{"Retry", func(t *testing.T, h *Harness, ct *store.ClaimedTask) {
		finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeRetry, Error: "again", RetryDelay: time.Hour})
	}},
	{"Failed", func(t *testing.T, h *Harness, ct *store.ClaimedTask) {
		finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeFailed, Error: "no"})
	}},
	{"Released", func(t *testing.T, h *Harness, ct *store.ClaimedTask) {
		finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeReleased})
	}},
	{"Returned", func(t *testing.T, h *Harness, ct *store.ClaimedTask) {
		finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeReturned})
	}},
	{"LeaseLost", func(t *testing.T, h *Harness, ct *store.ClaimedTask) {
		h.Advance(time.Minute)
		res, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10, CrashLimit: 3})
		require.NoError(t, err)
		require.Len(t, res.Requeued, 1)
	}},
	{"Dead", func(t *testing.T, h *Harness, ct *store.ClaimedTask) {
		h.Advance(time.Minute)
		res, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10, CrashLimit: 0})
		require.NoError(t, err)
		require.Len(t, res.Dead, 1)
	}},
	{"Cancelled", func(t *testing.T, h *Harness, ct *store.ClaimedTask) {
		_, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: ct.Lease.RunID, Reason: "stop"})
		require.NoError(t, err)
	}},
}

// testLimiter is the suite of [store.Limiter].
func testLimiter(t *testing.T, newHarness func(t *testing.T) *Harness) {
	cases := []testCase{
		{
			name: "ConcurrencyHoldsBackWithoutBlocking",
			rule: "a claim starts at most Concurrency tasks holding a key, holds the others back as ready waiting for the limit, and goes on to the tasks behind them",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue,
					limited("a", conc("cust-1", 2)), limited("b", conc("cust-1", 2)), limited("c", conc("cust-1", 2)), task("free"))})
				res := claim(t, h, nil)
				require.Equal(t, []string{"a", "b", "free"}, claimedNames(res), rule)
				for _, ct := range res.Tasks {
					if ct.Lease.Task == "a" {
						require.Equal(t, []store.TaskLimit{conc("cust-1", 2)}, ct.Spec.Limits, "a claimed task's spec carries its limits")
					}
				}
				c := taskOf(t, h, r.ID, "c")
				require.Equal(t, store.TaskReady, c.Status, rule)
				require.Equal(t, "limit cust-1", c.WaitingFor, rule)
				claimNone(t, h, rule)
				// A finish that claims frees the slot and starts c.
				got := finishClaim(t, h, []store.TaskOutcome{{Lease: res.Tasks[0].Lease, Outcome: store.OutcomeSucceeded}},
					store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
				require.Equal(t, []string{"c"}, claimedNames(got.Claimed), rule)
				require.Empty(t, taskOf(t, h, r.ID, "c").WaitingFor, rule)
			},
		},
		{
			name: "HeldBackEvent",
			rule: "a task a limit holds back makes one task_waiting event naming the limit, with the task still ready (stores with events)",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, limited("a", conc("k", 1)), limited("b", conc("k", 1)))})
				require.Len(t, claim(t, h, nil).Tasks, 1, rule)
				evs := waitingEvents(t, h, r.ID)
				require.Len(t, evs, 1, rule)
				require.Equal(t, "b", evs[0].Task, rule)
				require.Equal(t, store.TaskReady, evs[0].TaskStatus, rule)
				require.Equal(t, "limit k", evs[0].WaitingFor, rule)
			},
		},
		{
			name: "SharedAcrossRuns",
			rule: "tasks of different runs and queues share a key's limit",
			run: func(t *testing.T, h *Harness, rule string) {
				other := limited("b", conc("k", 1))
				other.Queue = "other"
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, limited("a", conc("k", 1)))})
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, other)})
				require.Equal(t, []string{"a"}, claimedNames(claim(t, h, &claimOpts{Queues: []string{store.DefaultQueue, "other"}})), rule)
				claimNone(t, h, rule)
				require.Empty(t, claim(t, h, &claimOpts{Queues: []string{"other"}}).Tasks, rule)
			},
		},
		{
			name: "EndedOnceFreesOnce",
			rule: "an attempt's slot comes back once: a finish sent again, answered stale, frees nothing more",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue,
					limited("a", conc("k", 1)), limited("b", conc("k", 1)), limited("c", conc("k", 1)))})
				a := claimOne(t, h, "a", rule)
				succeed(t, h, a.Lease, "", rule)
				res := finish(t, h, store.TaskOutcome{Lease: a.Lease, Outcome: store.OutcomeSucceeded})
				require.ErrorIs(t, res.Err, store.ErrStaleEpoch, rule)
				require.Equal(t, []string{"b"}, claimedNames(claim(t, h, nil)), rule)
				claimNone(t, h, rule)
			},
		},
		{
			name: "HeldBackTaskCancelled",
			rule: "a task held back whose run is cancelled is never started and takes no slot",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, limited("a", conc("k", 1)))})
				r2 := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, limited("b", conc("k", 1)))})
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, limited("c", conc("k", 1)))})
				a := claimOne(t, h, "a", rule)
				_, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: r2.ID, Reason: "stop"})
				require.NoError(t, err, rule)
				succeed(t, h, a.Lease, "", rule)
				require.Equal(t, []string{"c"}, claimedNames(claim(t, h, nil)), rule)
			},
		},
		{
			name: "Rate",
			rule: "at most Rate tasks with a key start within any window of Per; one held back starts once the oldest start is Per old, and NextDueAt says when",
			run: func(t *testing.T, h *Harness, rule string) {
				rate := store.TaskLimit{Key: "api", Rate: 2, Per: 10 * time.Second}
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue,
					limited("a", rate), limited("b", rate), limited("c", rate), task("free"))})
				start := h.Now()
				res := claim(t, h, &claimOpts{Limit: 2})
				require.Equal(t, []string{"a", "b"}, claimedNames(res), rule)
				h.Advance(4 * time.Second)
				for _, ct := range res.Tasks {
					succeed(t, h, ct.Lease, "", rule)
				}
				res = claim(t, h, nil)
				require.Equal(t, []string{"free"}, claimedNames(res), rule)
				require.Equal(t, "limit api", taskOf(t, h, r.ID, "c").WaitingFor, rule)
				sameTime(t, start.Add(10*time.Second), res.NextDueAt, rule)
				h.Advance(6*time.Second - time.Millisecond)
				claimNone(t, h, rule)
				h.Advance(time.Millisecond)
				require.Equal(t, []string{"c"}, claimedNames(claim(t, h, nil)), rule)
			},
		},
	}
	for _, e := range limitEndings {
		cases = append(cases, testCase{
			name: "FreedBy" + e.name,
			rule: "a running attempt that ends (" + e.name + ") gives its slot back to the oldest task waiting on the key",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, limited("a", conc("k", 1)))})
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, limited("b", conc("k", 1)))})
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, limited("c", conc("k", 1)))})
				res := claim(t, h, &claimOpts{Lease: 30 * time.Second})
				require.Equal(t, []string{"a"}, claimedNames(res), rule)
				e.end(t, h, res.Tasks[0])
				got := claimedNames(claim(t, h, &claimOpts{Lease: 5 * time.Minute}))
				require.Len(t, got, 1, rule)
				require.Contains(t, []string{"a", "b"}, got[0], rule)
				claimNone(t, h, rule)
			},
		})
	}
	cases = append(cases, keepPlaceCases()...)
	runCases(t, newHarness, cases)
}

// givenBack lists the ways a running attempt goes back to ready without
// ending its task: each such task keeps its place under its limits.
var givenBack = []struct {
	name string
	back func(t *testing.T, h *Harness, cts []*store.ClaimedTask)
}{
	{"LeaseLost", func(t *testing.T, h *Harness, cts []*store.ClaimedTask) {
		h.Advance(time.Minute)
		res, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10, CrashLimit: 3})
		require.NoError(t, err)
		require.Len(t, res.Requeued, len(cts))
	}},
	{"Released", func(t *testing.T, h *Harness, cts []*store.ClaimedTask) {
		for _, ct := range cts {
			require.NoError(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeReleased, Error: "shutdown"}).Err)
		}
	}},
	{"Returned", func(t *testing.T, h *Harness, cts []*store.ClaimedTask) {
		for _, ct := range cts {
			require.NoError(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeReturned}).Err)
		}
	}},
}

// keepPlaceCases pin the order of a key's waiting line when running
// attempts are given back unfinished.
func keepPlaceCases() []testCase {
	var cases []testCase
	for _, g := range givenBack {
		cases = append(cases, testCase{
			name: "KeepsPlace" + g.name,
			rule: "a task whose running attempt is given back unfinished (" + g.name + ") goes ahead of the tasks waiting on its key: the slots it frees are its own again, and the tasks waiting keep their order",
			run: func(t *testing.T, h *Harness, rule string) {
				for _, n := range []string{"a", "b", "c", "d", "e"} {
					createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, limited(n, conc("k", 2)))})
				}
				res := claim(t, h, &claimOpts{Lease: 30 * time.Second})
				require.Equal(t, []string{"a", "b"}, claimedNames(res), rule)
				g.back(t, h, res.Tasks)

				first := claim(t, h, &claimOpts{Limit: 1, Lease: 5 * time.Minute})
				require.Len(t, first.Tasks, 1, rule)
				second := claim(t, h, &claimOpts{Lease: 5 * time.Minute})
				require.Len(t, second.Tasks, 1, rule)
				require.Equal(t, []string{"a", "b"}, claimedNames(&store.TaskClaimResult{Tasks: append(first.Tasks, second.Tasks...)}), rule)
				claimNone(t, h, rule)

				// The tasks that never ran start in the order they waited.
				for _, want := range []string{"c", "d", "e"} {
					succeed(t, h, first.Tasks[0].Lease, "", rule)
					first = claim(t, h, &claimOpts{Lease: 5 * time.Minute})
					require.Equal(t, []string{want}, claimedNames(first), rule)
				}
			},
		})
	}
	return cases
}
