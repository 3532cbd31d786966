package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testAdmission is the suite of [store.AdmissionStore]. Its counts are
// those of one shard: the harness's store keeps its runs in one.
func testAdmission(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "OverQueueCapRefusedWhole",
			rule: "a create that would take a queue over its cap answers an *AdmissionError naming the queue, its cap, its pending tasks and the run's, and writes nothing of the run",
			run: func(t *testing.T, h *Harness, rule string) {
				setCap(t, h, store.AdmissionScope{Queue: "q1"}, 2, rule)
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, onQueue(task("a"), "q1"), onQueue(task("b", "a"), "q1"))})
				_, err := createAdmission(h, &runOpts{Workflow: spec(store.StrategyContinue, onQueue(task("c"), "q1"))})
				var ae *store.AdmissionError
				require.ErrorAs(t, err, &ae, rule)
				require.ErrorIs(t, err, store.ErrAdmission, rule)
				require.Equal(t, store.AdmissionError{Queue: "q1", MaxPending: 2, Pending: 2, Tasks: 1}, *ae, rule)
				requirePending(t, h, store.AdmissionScope{Queue: "q1"}, 2, rule+": a refused run counts nothing")
				res := claim(t, h, &claimOpts{Queues: []string{"q1"}})
				require.Len(t, res.Tasks, 1, rule+": the refused run's root is queued nowhere")
				require.Equal(t, "a", res.Tasks[0].Lease.Task, rule)
			},
		},
		{
			name: "UnderCapAccepted",
			rule: "creates that keep a queue at or under its cap are accepted and counted with each of their tasks on that queue, a task with required capabilities on its plain queue, tasks of other queues not",
			run: func(t *testing.T, h *Harness, rule string) {
				setCap(t, h, store.AdmissionScope{Queue: "q1"}, 3, rule)
				routed := onQueue(task("b"), "q1")
				routed.Requires = []string{"gpu"}
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, onQueue(task("a"), "q1"), routed, onQueue(task("c"), "q2"))})
				requirePending(t, h, store.AdmissionScope{Queue: "q1"}, 2, rule)
				requirePending(t, h, store.AdmissionScope{Queue: "q2"}, 0, rule+": a queue without a cap counts nothing")
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, onQueue(task("a"), "q1"))})
				requirePending(t, h, store.AdmissionScope{Queue: "q1"}, 3, rule+": up to the cap itself")
			},
		},
		{
			name: "CountGoesDownAsTasksEnd",
			rule: "a counted task leaves the count as it ends: succeeded, failed, skipped, cancelled with its run, so a refused create is accepted once tasks ended; a finished run deleted changes no count",
			run: func(t *testing.T, h *Harness, rule string) {
				sc := store.AdmissionScope{Queue: store.DefaultQueue}
				setCap(t, h, sc, 2, rule)
				one := &runOpts{}
				r1 := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				requireRefused(t, h, one, rule)
				succeed(t, h, claimOne(t, h, "a", rule).Lease, "ok", rule)
				requirePending(t, h, sc, 1, rule+": succeeded")
				failTask(t, h, claimOne(t, h, "b", rule).Lease, "boom", rule)
				requirePending(t, h, sc, 0, rule+": failed")
				r2 := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				requirePending(t, h, sc, 2, rule)
				failTask(t, h, claimOne(t, h, "a", rule).Lease, "boom", rule)
				requirePending(t, h, sc, 0, rule+": failed, and its child skipped")
				r3 := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				claimOne(t, h, "a", rule)
				_, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: r3.ID})
				require.NoError(t, err, rule)
				requirePending(t, h, sc, 0, rule+": cancelled with its run, running or pending")
				if qs, ok := h.Store.(store.QueryStore); ok {
					for _, id := range []string{r1.ID, r2.ID, r3.ID} {
						require.NoError(t, qs.RunDelete(bg, &store.RunDeleteParams{ID: id}), rule)
					}
					requirePending(t, h, sc, 0, rule+": deleting finished runs changes no count")
				}
				createRun(t, h, one)
				createRun(t, h, one)
				requireRefused(t, h, one, rule)
			},
		},
		{
			name: "SweepAndStopEndCount",
			rule: "a counted task made dead by the sweep leaves the count, and so do the tasks its run's stop strategy cancels",
			run: func(t *testing.T, h *Harness, rule string) {
				sc := store.AdmissionScope{Tenant: "acme"}
				setCap(t, h, sc, 5, rule)
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyStop, task("a"), task("b"), task("c", "b")), Tenant: "acme"})
				requirePending(t, h, sc, 3, rule)
				require.Len(t, claim(t, h, &claimOpts{Limit: 1}).Tasks, 1, rule)
				h.Advance(defaultLease + time.Millisecond)
				res := sweep(t, h, 10, 0)
				require.Len(t, res.Dead, 1, rule)
				requirePending(t, h, sc, 0, rule)
			},
		},
		{
			name: "TaskControlEndsCount",
			rule: "a counted task skipped or cancelled alone by an operator leaves the count",
			run: func(t *testing.T, h *Harness, rule string) {
				tc, ok := h.Store.(store.TaskControlStore)
				if !ok {
					t.Skip("needs TaskControlStore")
				}
				sc := store.AdmissionScope{Queue: store.DefaultQueue}
				setCap(t, h, sc, 5, rule)
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"))})
				_, err := tc.TaskControl(bg, &store.TaskControlParams{RunID: r.ID, Task: "a", Action: store.TaskSkip})
				require.NoError(t, err, rule)
				requirePending(t, h, sc, 1, rule+": skipped")
				_, err = tc.TaskControl(bg, &store.TaskControlParams{RunID: r.ID, Task: "b", Action: store.TaskCancel})
				require.NoError(t, err, rule)
				requirePending(t, h, sc, 0, rule+": cancelled")
			},
		},
		{
			name: "ReplayCountsAgain",
			rule: "a replay brings the tasks it restarts back into the counts of a counted run, without a check",
			run: func(t *testing.T, h *Harness, rule string) {
				rs, ok := h.Store.(store.ReplayStore)
				if !ok {
					t.Skip("needs ReplayStore")
				}
				sc := store.AdmissionScope{Tenant: "acme"}
				setCap(t, h, sc, 1, rule)
				r := createRun(t, h, &runOpts{Tenant: "acme"})
				failTask(t, h, claimOne(t, h, "a", rule).Lease, "boom", rule)
				requirePending(t, h, sc, 0, rule)
				createRun(t, h, &runOpts{Tenant: "acme"})
				_, err := rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID})
				require.NoError(t, err, rule)
				requirePending(t, h, sc, 2, rule+": the replayed task counts again, over the cap")
				drain(t, h, rule)
				requirePending(t, h, sc, 0, rule)
			},
		},
		{
			name: "TenantsApart",
			rule: "a tenant's cap counts every task of its runs, whatever their queue, and refuses its runs only: other tenants and runs without a tenant are not counted against it",
			run: func(t *testing.T, h *Harness, rule string) {
				setCap(t, h, store.AdmissionScope{Tenant: "acme"}, 2, rule)
				two := spec(store.StrategyContinue, onQueue(task("a"), "q1"), onQueue(task("b"), "q2"))
				createRun(t, h, &runOpts{Workflow: two, Tenant: "acme"})
				_, err := createAdmission(h, &runOpts{Tenant: "acme"})
				var ae *store.AdmissionError
				require.ErrorAs(t, err, &ae, rule)
				require.Equal(t, store.AdmissionError{Tenant: "acme", MaxPending: 2, Pending: 2, Tasks: 1}, *ae, rule)
				createRun(t, h, &runOpts{Workflow: two, Tenant: "other"})
				createRun(t, h, &runOpts{Workflow: two})
				requirePending(t, h, store.AdmissionScope{Tenant: "acme"}, 2, rule)
				requirePending(t, h, store.AdmissionScope{Tenant: "other"}, 0, rule)
			},
		},
		{
			name: "CreateManyRefusesOnlyOverCap",
			rule: "RunCreateMany answers an *AdmissionError for each run over a cap, counting the runs before it in the call, and creates the others",
			run: func(t *testing.T, h *Harness, rule string) {
				setCap(t, h, store.AdmissionScope{Tenant: "acme"}, 2, rule)
				p := func(tenant, queue string) *store.RunCreateParams {
					return &store.RunCreateParams{Workflow: spec(store.StrategyContinue, onQueue(task("a"), queue)), Tenant: tenant}
				}
				out, err := h.Store.RunCreateMany(bg, []*store.RunCreateParams{p("acme", "q1"), p("acme", "q2"), p("acme", "q1"), p("other", "q1"), p("acme", "q1")})
				require.NoError(t, err, rule)
				require.Len(t, out, 5, rule)
				for i, refused := range []bool{false, false, true, false, true} {
					if refused {
						require.ErrorIs(t, out[i].Err, store.ErrAdmission, rule)
						require.Nil(t, out[i].Result, rule)
						continue
					}
					require.NoError(t, out[i].Err, rule)
				}
				requirePending(t, h, store.AdmissionScope{Tenant: "acme"}, 2, rule)
				require.Len(t, claim(t, h, &claimOpts{Queues: []string{"q1", "q2"}}).Tasks, 3, rule+": the refused runs queued nothing")
			},
		},
		{
			name: "TakenKeyNotRefused",
			rule: "a create with the key of a run already created answers that run, at or over the cap, and counts nothing (a resend is never refused)",
			run: func(t *testing.T, h *Harness, rule string) {
				sc := store.AdmissionScope{Queue: store.DefaultQueue}
				setCap(t, h, sc, 1, rule)
				r := createRun(t, h, &runOpts{Key: "k1"})
				res, err := createAdmission(h, &runOpts{Key: "k1"})
				require.NoError(t, err, rule)
				require.True(t, res.Existing, rule)
				require.Equal(t, r.ID, res.Run.ID, rule)
				out, err := h.Store.RunCreateMany(bg, []*store.RunCreateParams{{Workflow: spec(store.StrategyContinue, task("a")), Key: "k1"}})
				require.NoError(t, err, rule)
				require.NoError(t, out[0].Err, rule)
				require.True(t, out[0].Result.Existing, rule)
				requirePending(t, h, sc, 1, rule)
			},
		},
		{
			name: "CountsRunsCreatedUnderACap",
			rule: "runs created while their scope had no cap are not counted, and their tasks ending takes nothing off; runs counted stay counted after their cap is removed, until their tasks end",
			run: func(t *testing.T, h *Harness, rule string) {
				sc := store.AdmissionScope{Queue: store.DefaultQueue}
				createRun(t, h, nil)
				setCap(t, h, sc, 1, rule)
				requirePending(t, h, sc, 0, rule)
				createRun(t, h, nil)
				requirePending(t, h, sc, 1, rule)
				setCap(t, h, sc, 0, rule)
				got, err := h.Store.(store.AdmissionStore).AdmissionGet(bg, &store.AdmissionGetParams{AdmissionScope: sc})
				require.NoError(t, err, rule)
				require.Equal(t, int64(0), got.MaxPending, rule+": the cap is removed")
				createRun(t, h, nil)
				requirePending(t, h, sc, 1, rule)
				require.Equal(t, 3, drain(t, h, rule), rule)
				requirePending(t, h, sc, 0, rule)
			},
		},
		{
			name: "BadParamsRefused",
			rule: "AdmissionSet and AdmissionGet refuse a scope naming both or neither of a queue and a tenant, an invalid name and a cap out of range, with ErrInvalidArgument",
			run: func(t *testing.T, h *Harness, rule string) {
				as := h.Store.(store.AdmissionStore)
				for _, p := range []store.AdmissionSetParams{
					{MaxPending: 1},
					{AdmissionScope: store.AdmissionScope{Queue: "q", Tenant: "t"}, MaxPending: 1},
					{AdmissionScope: store.AdmissionScope{Queue: "a:b"}, MaxPending: 1},
					{AdmissionScope: store.AdmissionScope{Tenant: "t"}, MaxPending: -1},
					{AdmissionScope: store.AdmissionScope{Tenant: "t"}, MaxPending: store.AdmissionMax + 1},
				} {
					_, err := as.AdmissionSet(bg, &p)
					require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
					_, err = as.AdmissionGet(bg, &store.AdmissionGetParams{AdmissionScope: p.AdmissionScope})
					if p.MaxPending >= 0 && p.MaxPending <= store.AdmissionMax {
						require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
					}
				}
			},
		},
	})
}

// onQueue puts ts on queue q.
func onQueue(ts store.TaskSpec, q string) store.TaskSpec {
	ts.Queue = q
	return ts
}

// setCap sets a cap and requires it set.
func setCap(t *testing.T, h *Harness, sc store.AdmissionScope, most int64, rule string) {
	t.Helper()
	_, err := h.Store.(store.AdmissionStore).AdmissionSet(bg, &store.AdmissionSetParams{AdmissionScope: sc, MaxPending: most})
	require.NoError(t, err, rule)
	got, err := h.Store.(store.AdmissionStore).AdmissionGet(bg, &store.AdmissionGetParams{AdmissionScope: sc})
	require.NoError(t, err, rule)
	require.Equal(t, most, got.MaxPending, rule+": AdmissionGet answers the cap set")
}

// requirePending requires the pending count of sc.
func requirePending(t *testing.T, h *Harness, sc store.AdmissionScope, want int64, rule string) {
	t.Helper()
	got, err := h.Store.(store.AdmissionStore).AdmissionGet(bg, &store.AdmissionGetParams{AdmissionScope: sc})
	require.NoError(t, err, rule)
	require.Equal(t, want, got.Pending, rule)
	require.Equal(t, want, got.PendingShardMax, rule)
}

// createAdmission creates a run as createRunResult does, answering the
// store's error instead of failing on it.
func createAdmission(h *Harness, o *runOpts) (*store.RunCreateResult, error) {
	wf := o.Workflow
	if wf == nil {
		wf = spec(store.StrategyContinue, task("a"))
	}
	return h.Store.RunCreate(bg, &store.RunCreateParams{Workflow: wf, Key: o.Key, Tenant: o.Tenant, Service: o.Service})
}

// requireRefused requires a create refused by a cap.
func requireRefused(t *testing.T, h *Harness, o *runOpts, rule string) {
	t.Helper()
	_, err := createAdmission(h, o)
	var ae *store.AdmissionError
	require.True(t, errors.As(err, &ae), "%s: want an *AdmissionError, got %v", rule, err)
}
