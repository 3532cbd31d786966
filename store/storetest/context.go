package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testContext pins the rule of the contract's "# Errors" section: a method
// called with a context that is done answers the context's error and writes
// nothing. Each case calls one method that writes with a cancelled context
// and then reads that nothing changed; the methods of a capability are in
// context_caps.go, each case skipped when the store lacks the capability.
func testContext(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, append(coreContextCases(), capContextCases()...))
}

// doneCtx returns a context that is already cancelled.
func doneCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// requireCanceled requires that err is the error of a cancelled context.
func requireCanceled(t *testing.T, err error, rule string) {
	t.Helper()
	require.ErrorIsf(t, err, context.Canceled, "%s (got %v)", rule, err)
}

func coreContextCases() []testCase {
	return []testCase{
		{
			name: "RunCreate",
			rule: "RunCreate with a done context answers its error and creates no run",
			run: func(t *testing.T, h *Harness, rule string) {
				_, err := h.Store.RunCreate(doneCtx(), &store.RunCreateParams{Workflow: spec(store.StrategyContinue, task("a")), Key: "k"})
				requireCanceled(t, err, rule)
				claimNone(t, h, rule)
				require.False(t, createRunResult(t, h, &runOpts{Key: "k"}).Existing, rule+": the key stays free")
			},
		},
		{
			name: "RunCreateMany",
			rule: "RunCreateMany with a done context answers its error and creates no run",
			run: func(t *testing.T, h *Harness, rule string) {
				wf := spec(store.StrategyContinue, task("a"))
				_, err := h.Store.RunCreateMany(doneCtx(), []*store.RunCreateParams{{Workflow: wf, Key: "k1"}, {Workflow: wf, Key: "k2"}})
				requireCanceled(t, err, rule)
				claimNone(t, h, rule)
				require.False(t, createRunResult(t, h, &runOpts{Key: "k1"}).Existing, rule+": the keys stay free")
				require.False(t, createRunResult(t, h, &runOpts{Key: "k2"}).Existing, rule+": the keys stay free")
			},
		},
		{
			name: "RunCancel",
			rule: "RunCancel with a done context answers its error and cancels nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				_, err := h.Store.RunCancel(doneCtx(), &store.RunCancelParams{ID: r.ID, Reason: "stop"})
				requireCanceled(t, err, rule)
				require.Equal(t, store.RunPending, getRun(t, h, r.ID).Status, rule)
				claimOne(t, h, "a", rule+": the task is still claimable")
			},
		},
		{
			name: "TaskClaim",
			rule: "TaskClaim with a done context answers its error and claims nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				_, err := h.Store.TaskClaim(doneCtx(), &store.TaskClaimParams{WorkerID: defaultWorker, Limit: 1, LeaseDuration: defaultLease, RequestID: "req-1"})
				requireCanceled(t, err, rule)
				ti := taskOf(t, h, r.ID, "a")
				require.Equal(t, store.TaskReady, ti.Status, rule)
				require.Zero(t, ti.Epoch, rule)
				res := claim(t, h, &claimOpts{RequestID: "req-1"})
				require.Len(t, res.Tasks, 1, rule+": the task is still claimable, and the request id still new")
			},
		},
		{
			name: "TaskFinish",
			rule: "TaskFinish with a done context answers its error and finishes nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				ct := claimOne(t, h, "a", rule)
				_, err := h.Store.TaskFinish(doneCtx(), &store.TaskFinishParams{WorkerID: defaultWorker,
					Outcomes: []store.TaskOutcome{{Lease: ct.Lease, Outcome: store.OutcomeSucceeded, Result: []byte("x")}}})
				requireCanceled(t, err, rule)
				ti := taskOf(t, h, r.ID, "a")
				require.Equal(t, store.TaskRunning, ti.Status, rule)
				require.Equal(t, ct.Lease.Epoch, ti.Epoch, rule)
				succeed(t, h, ct.Lease, "x", rule+": the lease still holds")
			},
		},
		{
			name: "TaskFinishClaim",
			rule: "TaskFinishClaim with a done context answers its error and neither finishes nor claims",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				ct := claimOne(t, h, "a", rule)
				_, err := h.Store.TaskFinishClaim(doneCtx(), &store.TaskFinishClaimParams{
					Finish: store.TaskFinishParams{WorkerID: defaultWorker, Outcomes: []store.TaskOutcome{{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}}},
					Claim:  store.TaskClaimParams{WorkerID: defaultWorker, Limit: 1, LeaseDuration: defaultLease},
				})
				requireCanceled(t, err, rule)
				require.Equal(t, map[string]store.TaskStatus{"a": store.TaskRunning, "b": store.TaskPending}, statuses(t, h, r.ID), rule)
				succeed(t, h, ct.Lease, "", rule+": the lease still holds")
			},
		},
		{
			name: "LeaseExtend",
			rule: "LeaseExtend with a done context answers its error and moves no deadline",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, nil)
				ct := claim(t, h, &claimOpts{Lease: time.Second}).Tasks[0]
				_, err := h.Store.LeaseExtend(doneCtx(), &store.LeaseExtendParams{WorkerID: defaultWorker, Leases: []store.Lease{ct.Lease}, Duration: time.Hour})
				requireCanceled(t, err, rule)
				h.Advance(2 * time.Second)
				sw, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10, CrashLimit: 3})
				require.NoError(t, err, rule)
				require.Equal(t, []store.Lease{ct.Lease}, sw.Requeued, rule+": the lease expired at its old deadline")
			},
		},
		{
			name: "LeaseSweep",
			rule: "LeaseSweep with a done context answers its error and recovers nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				ct := claim(t, h, &claimOpts{Lease: time.Second}).Tasks[0]
				h.Advance(2 * time.Second)
				_, err := h.Store.LeaseSweep(doneCtx(), &store.LeaseSweepParams{Limit: 10, CrashLimit: 3})
				requireCanceled(t, err, rule)
				ti := taskOf(t, h, r.ID, "a")
				require.Equal(t, store.TaskRunning, ti.Status, rule)
				require.Zero(t, ti.Crashes, rule)
				sw, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10, CrashLimit: 3})
				require.NoError(t, err, rule)
				require.Equal(t, []store.Lease{ct.Lease}, sw.Requeued, rule+": the expired lease is still there to recover")
			},
		},
	}
}
