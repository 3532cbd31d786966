package storetest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testRunSpecs is the suite of [store.RunSpecStore].
func testRunSpecs(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "ReadsBackAsSubmitted",
			rule: "RunSpecGet answers the workflow as submitted, every option of every task in definition order, payloads only when asked for",
			run: func(t *testing.T, h *Harness, rule string) {
				wf := fullSpec(h.Store)
				r := createRun(t, h, &runOpts{Workflow: wf})
				got := runSpec(t, h, r.ID, true, false, rule)
				require.Equal(t, wf, got.Spec, rule)
				require.Empty(t, got.PayloadsDropped, rule)
				require.Nil(t, got.Results, rule+": results only when asked for")

				got = runSpec(t, h, r.ID, false, false, rule)
				bare := *wf
				bare.Tasks = append([]store.TaskSpec(nil), wf.Tasks...)
				for i := range bare.Tasks {
					bare.Tasks[i].Payload = nil
				}
				require.Equal(t, &bare, got.Spec, rule+": without payloads")
				require.Empty(t, got.PayloadsDropped, rule)

				got.Spec.Tasks[0].Deps = nil
				got.Spec.Tasks[0].Name = "changed"
				again := runSpec(t, h, r.ID, false, false, rule)
				require.Equal(t, &bare, again.Spec, rule+": the answer is the caller's own copy")
			},
		},
		{
			name: "DefaultsReadBackSettled",
			rule: "RunSpecGet answers a workflow without a strategy as StrategyContinue and a task without a queue on DefaultQueue",
			run: func(t *testing.T, h *Harness, rule string) {
				a := task("a")
				a.Queue = ""
				r := createRun(t, h, &runOpts{Workflow: &store.WorkflowSpec{Name: "plain", Tasks: []store.TaskSpec{a}}})
				got := runSpec(t, h, r.ID, true, true, rule)
				require.Equal(t, store.StrategyContinue, got.Spec.Strategy, rule)
				require.Equal(t, store.DefaultQueue, got.Spec.Tasks[0].Queue, rule)
				require.Equal(t, "plain", got.Spec.Name, rule)
			},
		},
		{
			name: "InstancesNameTheirQueue",
			rule: "RunCreate and RunGet answer each task's Queue as RunSpecGet's spec has it: the queue submitted, DefaultQueue when none, without the capabilities it requires",
			run: func(t *testing.T, h *Harness, rule string) {
				wf := fullSpec(h.Store)
				wf.Tasks[4].Queue = ""
				created := createRun(t, h, &runOpts{Workflow: wf})
				got := runSpec(t, h, created.ID, false, false, rule)
				for i, ti := range getRun(t, h, created.ID).Tasks {
					require.Equal(t, got.Spec.Tasks[i].Queue, ti.Queue, rule)
					require.Equal(t, got.Spec.Tasks[i].Queue, created.Tasks[i].Queue, rule)
				}
				require.Equal(t, "mail", created.Tasks[0].Queue, rule)
				require.Equal(t, store.DefaultQueue, created.Tasks[4].Queue, rule)
			},
		},
		{
			name: "PayloadsAfterSuccess",
			rule: "a payload is answered as submitted while its task has not succeeded, whatever its size; once it has, a store may answer it nil only by naming the task in PayloadsDropped",
			run: func(t *testing.T, h *Harness, rule string) {
				long := bytes.Repeat([]byte("a long payload "), 20)
				ok, failed, waits := task("ok"), task("failed"), task("waits", "ok")
				short := task("short")
				ok.Payload, failed.Payload, waits.Payload, short.Payload = long, long, long, []byte(`"s"`)
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, ok, failed, waits, short)})
				before := runSpec(t, h, r.ID, true, false, rule)
				for i, ts := range before.Spec.Tasks {
					require.Equal(t, []byte(spec(store.StrategyContinue, ok, failed, waits, short).Tasks[i].Payload), ts.Payload, rule)
				}
				got := claimNames(t, h)
				succeed(t, h, got["ok"].Lease, `"r"`, rule)
				succeed(t, h, got["short"].Lease, `"r"`, rule)
				failTask(t, h, got["failed"].Lease, "boom", rule)

				after := runSpec(t, h, r.ID, true, false, rule)
				byName := map[string]store.TaskSpec{}
				for _, ts := range after.Spec.Tasks {
					byName[ts.Name] = ts
				}
				require.Equal(t, long, byName["failed"].Payload, rule+": a task that failed keeps its payload")
				require.Equal(t, long, byName["waits"].Payload, rule+": a task not yet run keeps its payload")
				require.Equal(t, []byte(`"s"`), byName["short"].Payload, rule)
				for _, name := range after.PayloadsDropped {
					require.Equal(t, "ok", name, rule+": only a succeeded task's payload may be dropped")
				}
				if len(after.PayloadsDropped) == 0 {
					require.Equal(t, long, byName["ok"].Payload, rule)
				} else {
					require.Nil(t, byName["ok"].Payload, rule)
				}
				require.Empty(t, runSpec(t, h, r.ID, false, false, rule).PayloadsDropped, rule+": nothing is dropped from what was not asked for")
			},
		},
		{
			name: "Results",
			rule: "RunSpecGet with Results answers the result of every task that succeeded, nil for one without a result, and leaves out tasks that did not",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"), task("f"), task("c", "a"))})
				got := claimNames(t, h)
				succeed(t, h, got["a"].Lease, `"ra"`, rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: got["b"].Lease, Outcome: store.OutcomeSucceeded}).Err, rule)
				failTask(t, h, got["f"].Lease, "boom", rule)
				res := runSpec(t, h, r.ID, false, true, rule)
				require.Len(t, res.Results, 2, rule)
				require.Equal(t, `"ra"`, string(res.Results["a"]), rule)
				b, ok := res.Results["b"]
				require.True(t, ok, rule)
				require.Empty(t, b, rule)
				if rs, ok := h.Store.(store.ResultStore); ok {
					want, err := rs.TaskResults(bg, &store.TaskResultsParams{RunID: r.ID, Tasks: []string{"a", "b", "c", "f"}})
					require.NoError(t, err, rule)
					require.Equal(t, want.Results, res.Results, rule+": as TaskResults answers them")
				}
			},
		},
		{
			name: "UnknownRun",
			rule: "RunSpecGet of a run that does not exist answers ErrNotFound, and of no run id ErrInvalidArgument",
			run: func(t *testing.T, h *Harness, rule string) {
				ss := h.Store.(store.RunSpecStore)
				_, err := ss.RunSpecGet(bg, &store.RunSpecGetParams{ID: "1-nosuchrun"})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
				_, err = ss.RunSpecGet(bg, &store.RunSpecGetParams{})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
				_, err = ss.RunSpecGet(bg, nil)
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
			},
		},
		{
			name: "ManyTasksAndALargePayload",
			rule: "RunSpecGet answers a run of 200 tasks, one with a payload of 1 MiB, as submitted, in one call",
			run: func(t *testing.T, h *Harness, rule string) {
				const n = 200
				tasks := make([]store.TaskSpec, n)
				for i := range tasks {
					var deps []string
					if i > 0 {
						deps = []string{fmt.Sprintf("t%03d", (i-1)/2)}
					}
					tasks[i] = task(fmt.Sprintf("t%03d", i), deps...)
					tasks[i].Payload = []byte(fmt.Sprintf(`{"i":%d}`, i))
				}
				tasks[n-1].Payload = []byte(strings.Repeat("x", 1<<20))
				tasks[n-2].Deps[0].On = store.OnCompletion
				wf := spec(store.StrategySkip, tasks...)
				r := createRun(t, h, &runOpts{Workflow: wf})
				got := runSpec(t, h, r.ID, true, true, rule)
				require.Equal(t, wf, got.Spec, rule)
				require.Empty(t, got.Results, rule)
			},
		},
	})
}

// runSpec reads a run's spec and requires the read to succeed.
func runSpec(t *testing.T, h *Harness, id string, payloads, results bool, rule string) *store.RunSpecGetResult {
	t.Helper()
	res, err := h.Store.(store.RunSpecStore).RunSpecGet(bg, &store.RunSpecGetParams{ID: id, Payloads: payloads, Results: results})
	require.NoError(t, err, rule)
	require.NotNil(t, res.Spec, rule)
	return res
}

// fullSpec is a workflow that sets every option a task has, those of the
// capabilities st lacks (requires, limits) aside.
func fullSpec(st store.Store) *store.WorkflowSpec {
	a := task("a")
	a.Payload = []byte(`{"order":42}`)
	a.Retry = store.RetryPolicy{MaxAttempts: 5, Backoff: store.BackoffConstant, InitialInterval: 1500 * time.Millisecond,
		MaxInterval: time.Minute, Multiplier: 1.5, Jitter: 0.25, MaxElapsed: time.Hour}
	a.Timeout = 90 * time.Second
	a.Priority = store.PriorityUrgent
	a.Queue = "mail"
	b := task("b", "a")
	b.Priority = store.PriorityLow
	b.RunAt = time.Date(2031, 2, 3, 4, 5, 6, 789000123, time.UTC)
	b.Payload = bytes.Repeat([]byte("a payload longer than a listpack value "), 4)
	c := task("c", "a")
	c.Delay = 2*time.Minute + 300*time.Millisecond
	c.Retry = store.RetryPolicy{MaxAttempts: 1, Jitter: -1}
	c.Priority = store.PriorityHigh
	d := task("d", "b", "c")
	d.Deps[0].On = store.OnFailure
	d.Deps[1].On = store.OnCompletion
	d.Join = store.JoinAny
	e := task("e", "d")
	e.Handler = "cleanup"
	if _, ok := st.(store.ClaimRouter); ok {
		a.Requires = []string{"gpu", "region-eu"}
	}
	if _, ok := st.(store.Limiter); ok {
		c.Limits = []store.TaskLimit{{Key: "customer-7", Concurrency: 2}, {Key: "api", Rate: 10, Per: time.Second}}
	}
	return spec(store.StrategyStop, a, b, c, d, e)
}
