package storetest

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// leftPayload is long enough that a store keeping the definitions of a
// small run in a compact record (Redis: a listpack hash) keeps it apart.
var leftPayload = bytes.Repeat([]byte("a payload long enough to be kept apart "), 6)

// leftTask is task(name, deps...) carrying leftPayload.
func leftTask(name string, deps ...string) store.TaskSpec {
	ts := task(name, deps...)
	ts.Payload = leftPayload
	return ts
}

// leftRun creates a run of tasks under strategy, keyed and filed under a
// service and a tenant, so that it has every index entry a run can have.
func leftRun(t *testing.T, h *Harness, strategy store.ErrorStrategy, tasks ...store.TaskSpec) *store.Run {
	t.Helper()
	return createRun(t, h, &runOpts{Workflow: spec(strategy, tasks...), Key: "left", Service: "svc", Tenant: "ten"})
}

// needLeftovers skips a case without the Leftovers hook or Caps.Retention,
// or, when expiry is set, without native expiry.
func needLeftovers(t *testing.T, h *Harness, expiry bool) {
	t.Helper()
	if h.Leftovers == nil {
		t.Skip("needs Harness.Leftovers")
	}
	if h.Caps.Retention <= 0 {
		t.Skip("needs Caps.Retention")
	}
	if expiry && !h.Caps.ExpiresKeys {
		t.Skip("needs Caps.ExpiresKeys")
	}
}

// upkeep does what a live system does between steps: the janitor's prune
// (QueryStore) and a worker's claim, which meets and drops the queue
// entries of tasks that were cancelled (lazy deletion).
func upkeep(t *testing.T, h *Harness, rule string) {
	t.Helper()
	if q, ok := h.Store.(store.QueryStore); ok {
		for {
			res, err := q.RunPrune(bg, &store.RunPruneParams{Limit: 100})
			require.NoError(t, err, rule)
			if !res.More {
				break
			}
		}
	}
	claimNone(t, h, rule)
}

// goneAfterRetention moves the clock past the retention of run id, then
// past the history kept after it, letting the store do its upkeep after
// each, as a janitor on time does, and requires that nothing of the run
// is left.
func goneAfterRetention(t *testing.T, h *Harness, id, rule string) {
	t.Helper()
	if _, err := h.Store.RunGet(bg, &store.RunGetParams{ID: id}); err == nil {
		require.NotEmpty(t, h.Leftovers(id), "Harness.Leftovers must list a run the store holds")
	}
	h.Advance(h.Caps.Retention + time.Second)
	_, err := h.Store.RunGet(bg, &store.RunGetParams{ID: id})
	require.ErrorIs(t, err, store.ErrNotFound, rule)
	upkeep(t, h, rule)
	if h.Caps.HistoryRetention > h.Caps.Retention {
		h.Advance(h.Caps.HistoryRetention - h.Caps.Retention)
		upkeep(t, h, rule)
	}
	require.Empty(t, h.Leftovers(id), rule)
}

// logLine appends a line to the attempt of l, when the store keeps task
// logs, so that the run has a log to leave behind.
func logLine(t *testing.T, h *Harness, l store.Lease, rule string) {
	t.Helper()
	if ls, ok := h.Store.(store.TaskLogStore); ok {
		appendLines(t, ls, l, 1, 1, rule, line(h.Now(), slog.LevelInfo, "working"))
	}
}

// cancelled is a case that leaves a task of a run in some state, cancels
// the run and requires that nothing of it is left after its retention.
func cancelled(name, state string, prepare func(t *testing.T, h *Harness, rule string) *store.Run) testCase {
	return testCase{
		name: "Cancelled" + name,
		rule: "a run cancelled with a task " + state + " leaves nothing behind after its retention: no record, payload, log, key or index, queue or lease entry",
		run: func(t *testing.T, h *Harness, rule string) {
			needLeftovers(t, h, true)
			r := prepare(t, h, rule)
			_, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: r.ID, Reason: "stop"})
			require.NoError(t, err, rule)
			require.Equal(t, store.RunCancelled, getRun(t, h, r.ID).Status, rule)
			goneAfterRetention(t, h, r.ID, rule)
		},
	}
}

// testLeftovers pins, for each way a run ends, that nothing of it is left
// once its retention has passed, as Harness.Leftovers sees the store. A
// run is never expired while it is active (docs/store-contract.md,
// Retention): the cases of a run that outlives its retention require it
// to keep every part instead, then to leave nothing after its end.
func testLeftovers(t *testing.T, newHarness func(t *testing.T) *Harness) {
	cont := store.StrategyContinue
	runCases(t, newHarness, []testCase{
		{
			name: "Succeeded",
			rule: "a run that succeeded leaves nothing behind after its retention",
			run: func(t *testing.T, h *Harness, rule string) {
				needLeftovers(t, h, true)
				r := leftRun(t, h, cont, leftTask("a"), leftTask("b", "a"))
				completeLoggedChain(t, h, r.ID, rule)
			},
		},
		{
			name: "SucceededWithSkippedTask",
			rule: "a run that succeeded with a task skipped (its condition unmet) leaves nothing behind after its retention, the skipped task's payload included",
			run: func(t *testing.T, h *Harness, rule string) {
				needLeftovers(t, h, true)
				onFail := leftTask("cleanup")
				onFail.Deps = []store.Dep{{Task: "a", On: store.OnFailure}}
				r := leftRun(t, h, cont, leftTask("a"), onFail)
				succeed(t, h, claimOne(t, h, "a", rule).Lease, "ok", rule)
				done := getRun(t, h, r.ID)
				require.Equal(t, store.RunCompleted, done.Status, rule)
				require.Equal(t, 1, done.Skipped, rule)
				goneAfterRetention(t, h, r.ID, rule)
			},
		},
		{
			name: "Failed",
			rule: "a run that failed leaves nothing behind after its retention: its dead letters and the payloads of its failed and skipped tasks go too",
			run: func(t *testing.T, h *Harness, rule string) {
				needLeftovers(t, h, true)
				r := leftRun(t, h, cont, leftTask("a"), leftTask("b", "a"))
				a := claimOne(t, h, "a", rule)
				logLine(t, h, a.Lease, rule)
				failTask(t, h, a.Lease, "boom", rule)
				require.Equal(t, store.RunFailed, getRun(t, h, r.ID).Status, rule)
				goneAfterRetention(t, h, r.ID, rule)
			},
		},
		{
			name: "FailedStopped",
			rule: "a run stopped by a failure under StrategyStop, a task still running, leaves nothing behind after its retention",
			run: func(t *testing.T, h *Harness, rule string) {
				needLeftovers(t, h, true)
				r := leftRun(t, h, store.StrategyStop, leftTask("a"), leftTask("b"), leftTask("c", "a"))
				got := claimNames(t, h)
				require.Len(t, got, 2, rule)
				failTask(t, h, got["a"].Lease, "boom", rule)
				require.Equal(t, store.RunFailed, getRun(t, h, r.ID).Status, rule)
				goneAfterRetention(t, h, r.ID, rule)
			},
		},
		cancelled("Pending", "pending", func(t *testing.T, h *Harness, rule string) *store.Run {
			r := leftRun(t, h, cont, leftTask("a"), leftTask("b", "a"))
			require.Equal(t, store.TaskPending, taskOf(t, h, r.ID, "b").Status, rule)
			return r
		}),
		cancelled("Ready", "ready", func(t *testing.T, h *Harness, rule string) *store.Run {
			return leftRun(t, h, cont, leftTask("a"))
		}),
		cancelled("Delayed", "delayed", func(t *testing.T, h *Harness, rule string) *store.Run {
			a := leftTask("a")
			a.Delay = h.Caps.Retention / 2
			r := leftRun(t, h, cont, a)
			require.Equal(t, store.TaskPending, taskOf(t, h, r.ID, "a").Status, rule)
			return r
		}),
		cancelled("Retrying", "retrying", func(t *testing.T, h *Harness, rule string) *store.Run {
			r := leftRun(t, h, cont, leftTask("a"))
			a := claimOne(t, h, "a", rule)
			logLine(t, h, a.Lease, rule)
			res := finish(t, h, store.TaskOutcome{Lease: a.Lease, Outcome: store.OutcomeRetry, Error: "again", RetryDelay: h.Caps.Retention / 2})
			require.NoError(t, res.Err, rule)
			require.Equal(t, store.TaskRetrying, taskOf(t, h, r.ID, "a").Status, rule)
			return r
		}),
		cancelled("Running", "running", func(t *testing.T, h *Harness, rule string) *store.Run {
			r := leftRun(t, h, cont, leftTask("a"), leftTask("b"))
			got := claimNames(t, h)
			require.Len(t, got, 2, rule)
			logLine(t, h, got["a"].Lease, rule)
			succeed(t, h, got["b"].Lease, "ok", rule)
			return r
		}),
		{
			name: "Deleted",
			rule: "a run deleted with RunDelete leaves nothing behind once its retention would have passed (an expiry entry may wait for it)",
			run: func(t *testing.T, h *Harness, rule string) {
				needLeftovers(t, h, false)
				q, ok := h.Store.(store.QueryStore)
				if !ok {
					t.Skip("needs store.QueryStore")
				}
				r := leftRun(t, h, cont, leftTask("a"), leftTask("b", "a"))
				a := claimOne(t, h, "a", rule)
				logLine(t, h, a.Lease, rule)
				failTask(t, h, a.Lease, "boom", rule)
				require.NotEmpty(t, h.Leftovers(r.ID), "Harness.Leftovers must list a run the store holds")
				require.NoError(t, q.RunDelete(bg, &store.RunDeleteParams{ID: r.ID}), rule)
				goneAfterRetention(t, h, r.ID, rule)
			},
		},
		{
			name: "ReplayedThenFinished",
			rule: "a run replayed and finished again leaves nothing behind after its retention",
			run: func(t *testing.T, h *Harness, rule string) {
				needLeftovers(t, h, true)
				rs, ok := h.Store.(store.ReplayStore)
				if !ok {
					t.Skip("needs store.ReplayStore")
				}
				r := leftRun(t, h, cont, leftTask("a"), leftTask("b", "a"))
				failTask(t, h, claimOne(t, h, "a", rule).Lease, "boom", rule)
				_, err := rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID})
				require.NoError(t, err, rule)
				completeLoggedChain(t, h, r.ID, rule)
			},
		},
		{
			name: "ActiveRunOutlastsRetention",
			rule: "a run active for longer than its retention keeps every part, its payloads included, and leaves nothing behind after the retention of its end",
			run: func(t *testing.T, h *Harness, rule string) {
				needLeftovers(t, h, true)
				r := leftRun(t, h, cont, leftTask("a"), leftTask("b", "a"))
				a := claimOne(t, h, "a", rule)
				succeed(t, h, a.Lease, "ok", rule)
				h.Advance(2 * max(h.Caps.Retention, h.Caps.HistoryRetention))
				require.Equal(t, store.RunRunning, getRun(t, h, r.ID).Status, rule)
				b := claimOne(t, h, "b", rule)
				require.Equal(t, leftPayload, b.Spec.Payload, rule)
				succeed(t, h, b.Lease, "ok", rule)
				goneAfterRetention(t, h, r.ID, rule)
			},
		},
		{
			name: "ReplayOutlastsRetention",
			rule: "a replayed run that runs again for longer than its retention loses nothing meanwhile: a failed task it did not replay keeps its payload and can be replayed later; and it leaves nothing behind after the retention of its last end",
			run: func(t *testing.T, h *Harness, rule string) {
				needLeftovers(t, h, true)
				rs, ok := h.Store.(store.ReplayStore)
				if !ok {
					t.Skip("needs store.ReplayStore")
				}
				r := leftRun(t, h, cont, leftTask("a"), leftTask("b"))
				for _, ct := range claimNames(t, h) {
					failTask(t, h, ct.Lease, "boom", rule)
				}
				require.Equal(t, store.RunFailed, getRun(t, h, r.ID).Status, rule)
				_, err := rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID, Tasks: []string{"a"}})
				require.NoError(t, err, rule)
				h.Advance(2 * max(h.Caps.Retention, h.Caps.HistoryRetention))
				require.Equal(t, store.RunRunning, getRun(t, h, r.ID).Status, rule)
				a := claimOne(t, h, "a", rule)
				require.Equal(t, leftPayload, a.Spec.Payload, rule)
				succeed(t, h, a.Lease, "ok", rule)
				require.Equal(t, store.RunFailed, getRun(t, h, r.ID).Status, rule)
				_, err = rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID, Generation: 1, Tasks: []string{"b"}})
				require.NoError(t, err, rule+": b's payload was kept while the run ran again")
				b := claimOne(t, h, "b", rule)
				require.Equal(t, leftPayload, b.Spec.Payload, rule)
				succeed(t, h, b.Lease, "ok", rule)
				require.Equal(t, store.RunCompleted, getRun(t, h, r.ID).Status, rule)
				goneAfterRetention(t, h, r.ID, rule)
			},
		},
	})
}

// completeLoggedChain runs the chain a -> b of run runID to completion, a
// logging a line first, and requires the run to leave nothing behind after
// its retention.
func completeLoggedChain(t *testing.T, h *Harness, runID, rule string) {
	t.Helper()
	a := claimOne(t, h, "a", rule)
	logLine(t, h, a.Lease, rule)
	succeed(t, h, a.Lease, "ok", rule)
	succeed(t, h, claimOne(t, h, "b", rule).Lease, "ok", rule)
	require.Equal(t, store.RunCompleted, getRun(t, h, runID).Status, rule)
	goneAfterRetention(t, h, runID, rule)
}
