package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// Fixture defaults.
const (
	defaultLease  = 30 * time.Second
	defaultWorker = "worker-1"
	defaultLimit  = 100
)

var bg = context.Background()

// spec returns a workflow named "wf" with the given strategy and tasks.
func spec(strategy store.ErrorStrategy, tasks ...store.TaskSpec) *store.WorkflowSpec {
	return &store.WorkflowSpec{Name: "wf", Strategy: strategy, Tasks: tasks}
}

// task returns a task spec on the default queue at normal priority whose
// dependencies are the given names, each on success.
func task(name string, deps ...string) store.TaskSpec {
	ts := store.TaskSpec{Name: name, Handler: "h-" + name, Queue: store.DefaultQueue, Priority: store.PriorityNormal}
	for _, d := range deps {
		ts.Deps = append(ts.Deps, store.Dep{Task: d, On: store.OnSuccess})
	}
	return ts
}

// runOpts are the arguments of createRun; zero fields take defaults.
type runOpts struct {
	// Workflow defaults to one task "a" under StrategyContinue.
	Workflow *store.WorkflowSpec
	Key      string
	Tenant   string
	Service  string
	Metadata map[string]string
}

// createRun creates a run and returns it.
func createRun(t *testing.T, h *Harness, o *runOpts) *store.Run {
	t.Helper()
	res := createRunResult(t, h, o)
	require.False(t, res.Existing, "a run created without a clashing key is new")
	return res.Run
}

func createRunResult(t *testing.T, h *Harness, o *runOpts) *store.RunCreateResult {
	t.Helper()
	if o == nil {
		o = &runOpts{}
	}
	wf := o.Workflow
	if wf == nil {
		wf = spec(store.StrategyContinue, task("a"))
	}
	res, err := h.Store.RunCreate(bg, &store.RunCreateParams{
		Workflow: wf, Key: o.Key, Tenant: o.Tenant, Service: o.Service, Metadata: o.Metadata,
	})
	require.NoError(t, err, "RunCreate must accept a valid workflow")
	require.NotNil(t, res.Run, "RunCreate must return the run")
	return res
}

// claimOpts are the arguments of claim; zero fields take defaults.
type claimOpts struct {
	Queues []string
	Limit  int
	Lease  time.Duration
	Worker string
	// RequestID makes the claim safe to send again.
	RequestID string
	// Handlers lists the handlers the claimer runs; nil: any.
	Handlers []string
}

// claim claims with defaults (limit 100, lease 30s, worker-1).
func claim(t *testing.T, h *Harness, o *claimOpts) *store.TaskClaimResult {
	t.Helper()
	if o == nil {
		o = &claimOpts{}
	}
	p := &store.TaskClaimParams{WorkerID: o.Worker, Queues: o.Queues, Limit: o.Limit, LeaseDuration: o.Lease, RequestID: o.RequestID, Handlers: o.Handlers}
	if p.WorkerID == "" {
		p.WorkerID = defaultWorker
	}
	if p.Limit == 0 {
		p.Limit = defaultLimit
	}
	if p.LeaseDuration == 0 {
		p.LeaseDuration = defaultLease
	}
	res, err := h.Store.TaskClaim(bg, p)
	require.NoError(t, err, "TaskClaim must succeed")
	return res
}

// claimOne claims with defaults and requires exactly one task named name.
func claimOne(t *testing.T, h *Harness, name, rule string) *store.ClaimedTask {
	t.Helper()
	res := claim(t, h, nil)
	require.Len(t, res.Tasks, 1, rule)
	require.Equal(t, name, res.Tasks[0].Lease.Task, rule)
	return res.Tasks[0]
}

// claimNone requires that a default claim finds nothing.
func claimNone(t *testing.T, h *Harness, rule string) *store.TaskClaimResult {
	t.Helper()
	res := claim(t, h, nil)
	require.Empty(t, res.Tasks, rule)
	return res
}

// claimNames claims with defaults and returns the claimed tasks by name.
func claimNames(t *testing.T, h *Harness) map[string]*store.ClaimedTask {
	t.Helper()
	out := map[string]*store.ClaimedTask{}
	for _, ct := range claim(t, h, nil).Tasks {
		out[ct.Lease.Task] = ct
	}
	return out
}

// finish applies one outcome and returns its result.
func finish(t *testing.T, h *Harness, o store.TaskOutcome) store.TaskFinishResult {
	t.Helper()
	res, err := h.Store.TaskFinish(bg, &store.TaskFinishParams{WorkerID: defaultWorker, Outcomes: []store.TaskOutcome{o}})
	require.NoError(t, err, "TaskFinish must succeed as a call")
	require.Len(t, res, 1, "TaskFinish answers once per outcome")
	return res[0]
}

// succeed finishes a lease with a result and requires it applied.
func succeed(t *testing.T, h *Harness, l store.Lease, result string, rule string) store.TaskFinishResult {
	t.Helper()
	res := finish(t, h, store.TaskOutcome{Lease: l, Outcome: store.OutcomeSucceeded, Result: []byte(result)})
	require.NoError(t, res.Err, rule)
	return res
}

// failTask finishes a lease as failed for good and requires it applied.
func failTask(t *testing.T, h *Harness, l store.Lease, msg string, rule string) store.TaskFinishResult {
	t.Helper()
	res := finish(t, h, store.TaskOutcome{Lease: l, Outcome: store.OutcomeFailed, Error: msg})
	require.NoError(t, res.Err, rule)
	return res
}

// getRun reads a run.
func getRun(t *testing.T, h *Harness, id string) *store.Run {
	t.Helper()
	r, err := h.Store.RunGet(bg, &store.RunGetParams{ID: id})
	require.NoError(t, err, "RunGet must find a created run")
	return r
}

// taskOf reads one task instance of a run.
func taskOf(t *testing.T, h *Harness, runID, name string) store.TaskInstance {
	t.Helper()
	ti := getRun(t, h, runID).Task(name)
	require.NotNil(t, ti, "RunGet must return every task of the run")
	return *ti
}

// statuses reads every task status of a run by name.
func statuses(t *testing.T, h *Harness, runID string) map[string]store.TaskStatus {
	t.Helper()
	out := map[string]store.TaskStatus{}
	for _, ti := range getRun(t, h, runID).Tasks {
		out[ti.Name] = ti.Status
	}
	return out
}

// drain claims and succeeds every claimable task until none is left and
// returns how many ran.
func drain(t *testing.T, h *Harness, rule string) int {
	t.Helper()
	n := 0
	for {
		res := claim(t, h, nil)
		if len(res.Tasks) == 0 {
			return n
		}
		for _, ct := range res.Tasks {
			succeed(t, h, ct.Lease, "ok", rule)
			n++
		}
	}
}

// sameTime requires that two times agree to the millisecond.
func sameTime(t *testing.T, want, got time.Time, rule string) {
	t.Helper()
	w, g := want.Truncate(time.Millisecond), got.Truncate(time.Millisecond)
	require.Truef(t, w.Equal(g), "%s (want %s, got %s)", rule, w.UTC().Format(time.RFC3339Nano), g.UTC().Format(time.RFC3339Nano))
}

// sameDuration requires that two durations agree to the millisecond.
func sameDuration(t *testing.T, want, got time.Duration, rule string) {
	t.Helper()
	require.Equal(t, want.Truncate(time.Millisecond), got.Truncate(time.Millisecond), rule)
}
