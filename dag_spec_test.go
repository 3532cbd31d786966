package plait_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

func TestValidateSpecFields(t *testing.T) {
	t.Parallel()
	valid := func() *plait.WorkflowSpec {
		return &plait.WorkflowSpec{Name: "wf", Strategy: plait.StrategyContinue, Tasks: []plait.TaskSpec{
			{Name: "a", Handler: "h", Queue: plait.DefaultQueue},
			{Name: "b", Handler: "h", Queue: plait.DefaultQueue, Deps: []plait.Dep{{Task: "a"}}},
		}}
	}
	require.NoError(t, plait.ValidateSpec(valid(), plait.Limits{}))
	tests := []struct {
		name   string
		edit   func(*plait.WorkflowSpec)
		cat    error
		task   string
		field  string
		limits plait.Limits
	}{
		{"empty strategy", func(s *plait.WorkflowSpec) { s.Strategy = "" }, plait.ErrInvalidTaskOption, "", "strategy", plait.Limits{}},
		{"unknown strategy", func(s *plait.WorkflowSpec) { s.Strategy = "halt" }, plait.ErrInvalidTaskOption, "", "strategy", plait.Limits{}},
		{"bad name", func(s *plait.WorkflowSpec) { s.Name = "w:f" }, plait.ErrInvalidID, "", "name", plait.Limits{}},
		{"no tasks", func(s *plait.WorkflowSpec) { s.Tasks = nil }, plait.ErrEmptyWorkflow, "", "tasks", plait.Limits{}},
		{"priority above urgent", func(s *plait.WorkflowSpec) { s.Tasks[1].Priority = plait.PriorityUrgent + 1 }, plait.ErrInvalidTaskOption, "b", "priority", plait.Limits{}},
		{"priority below low", func(s *plait.WorkflowSpec) { s.Tasks[1].Priority = plait.PriorityLow - 1 }, plait.ErrInvalidTaskOption, "b", "priority", plait.Limits{}},
		{"negative timeout", func(s *plait.WorkflowSpec) { s.Tasks[0].Timeout = -1 }, plait.ErrInvalidTaskOption, "a", "timing", plait.Limits{}},
		{"negative delay", func(s *plait.WorkflowSpec) { s.Tasks[0].Delay = -1 }, plait.ErrInvalidTaskOption, "a", "timing", plait.Limits{}},
		{"negative attempts", func(s *plait.WorkflowSpec) { s.Tasks[0].Retry.MaxAttempts = -1 }, plait.ErrInvalidTaskOption, "a", "retry", plait.Limits{}},
		{"unknown backoff", func(s *plait.WorkflowSpec) { s.Tasks[0].Retry.Backoff = 9 }, plait.ErrInvalidTaskOption, "a", "retry", plait.Limits{}},
		{"jitter not a number", func(s *plait.WorkflowSpec) { s.Tasks[0].Retry.Jitter = math.NaN() }, plait.ErrInvalidTaskOption, "a", "retry", plait.Limits{}},
		{"unknown join", func(s *plait.WorkflowSpec) { s.Tasks[1].Join = plait.JoinAny + 1 }, plait.ErrInvalidTaskOption, "b", "join", plait.Limits{}},
		{"unknown condition", func(s *plait.WorkflowSpec) { s.Tasks[1].Deps[0].On = plait.OnFailure + 1 }, plait.ErrInvalidTaskOption, "b", "deps", plait.Limits{}},
		{"empty handler", func(s *plait.WorkflowSpec) { s.Tasks[0].Handler = "" }, plait.ErrInvalidID, "a", "handler", plait.Limits{}},
		{"empty queue", func(s *plait.WorkflowSpec) { s.Tasks[0].Queue = "" }, plait.ErrInvalidID, "a", "queue", plait.Limits{}},
		{"empty requirement", func(s *plait.WorkflowSpec) { s.Tasks[0].Requires = []string{""} }, plait.ErrInvalidID, "a", "requires", plait.Limits{}},
		{"payload over limit", func(s *plait.WorkflowSpec) { s.Tasks[0].Payload = []byte("xyz") }, plait.ErrPayloadTooLarge, "a", "payload", plait.Limits{MaxPayloadBytes: 2}},
		{"fan-in over limit", func(s *plait.WorkflowSpec) {
			s.Tasks = append(s.Tasks, plait.TaskSpec{Name: "c", Handler: "h", Queue: plait.DefaultQueue, Deps: []plait.Dep{{Task: "a"}, {Task: "b"}}})
		}, plait.ErrTooManyDeps, "c", "deps", plait.Limits{MaxDeps: 1}},
		{"task count over limit", func(s *plait.WorkflowSpec) {}, plait.ErrTooManyTasks, "", "tasks", plait.Limits{MaxTasks: 1}},
	}
	for _, tc := range tests {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := valid()
			tc.edit(spec)
			err := plait.ValidateSpec(spec, tc.limits)
			requireProblem(t, err, tc.cat, tc.task, tc.field)
		})
	}
}

func TestValidateLimitsAtTheBoundaryPass(t *testing.T) {
	t.Parallel()
	w := plait.NewWorkflow("wf").
		Task("a", "h", plait.Raw("1234")).
		Task("b", "h", "ab").
		Task("c", "h", nil, plait.After("a", "b"))
	spec, err := w.Spec(plait.JSONCodec{}, plait.Limits{MaxTasks: 3, MaxDeps: 2, MaxPayloadBytes: 4})
	require.NoError(t, err)
	require.Len(t, spec.Tasks, 3)
}

func TestValidWorkflows(t *testing.T) {
	t.Parallel()
	diamond := func() *plait.Workflow {
		return plait.NewWorkflow("diamond").
			Task("d", "join", nil, plait.After("b", "c")).
			Task("b", "left", nil, plait.After("a")).
			Task("c", "right", nil, plait.AfterCompletion("a")).
			Task("a", "start", nil)
	}
	chain := func() *plait.Workflow {
		// Added last task first, so the order must be computed.
		w := plait.NewWorkflow("chain")
		for i := 999; i >= 0; i-- {
			var opts []plait.TaskOption
			if i > 0 {
				opts = append(opts, plait.After(fmt.Sprintf("t%d", i-1)))
			}
			w.Task(fmt.Sprintf("t%d", i), "h", nil, opts...)
		}
		return w
	}
	fan := func() *plait.Workflow {
		w := plait.NewWorkflow("fan")
		mids := make([]string, 5000)
		for i := range mids {
			mids[i] = fmt.Sprintf("m%d", i)
		}
		w.Task("sink", "h", nil, plait.After(mids...))
		for _, m := range mids {
			w.Task(m, "h", nil, plait.After("root"))
		}
		w.Task("root", "h", nil)
		return w
	}
	tests := []struct {
		name  string
		build func() *plait.Workflow
		tasks int
	}{
		{"diamond", diamond, 4},
		{"chain of 1000", chain, 1000},
		{"fan-out and fan-in of 5000", fan, 5002},
	}
	for _, tc := range tests {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := tc.build()
			require.NoError(t, w.Validate())
			spec, err := w.Spec(nil, plait.Limits{})
			require.NoError(t, err)
			require.Len(t, spec.Tasks, tc.tasks)
			require.NoError(t, plait.ValidateSpec(spec, plait.Limits{}))
			requireTopoOrder(t, spec)
		})
	}
}

func TestTopoOrderDiamondRootFirstSinkLast(t *testing.T) {
	t.Parallel()
	spec := graphSpec([]node{{"d", []string{"b", "c"}}, {"c", []string{"a"}}, {"b", []string{"a"}}, {"a", nil}})
	require.NoError(t, plait.ValidateSpec(spec, plait.Limits{}))
	order := plait.TopoOrder(spec)
	require.Len(t, order, 4)
	require.Equal(t, "a", spec.Tasks[order[0]].Name)
	require.Equal(t, "d", spec.Tasks[order[3]].Name)
	requireTopoOrder(t, spec)
}

func TestWorkflowSpecContents(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	w := plait.NewWorkflow("wf", plait.OnError(plait.StrategySkip)).
		Task("a", "h", map[string]int{"n": 1}).
		Task("b", "h2", plait.Raw("raw bytes"),
			plait.AfterFailure("a"), plait.AnyOf(), plait.Retry(2), plait.Timeout(time.Second),
			plait.WithPriority(plait.PriorityUrgent), plait.OnQueue("gpu"), plait.Requires("cuda", "big"),
			plait.RunAt(at), plait.Delay(time.Minute), plait.MaxElapsed(time.Hour))
	require.Equal(t, "wf", w.Name())
	spec, err := w.Spec(nil, plait.Limits{})
	require.NoError(t, err)
	require.Equal(t, "wf", spec.Name)
	require.Equal(t, plait.StrategySkip, spec.Strategy)

	a := spec.Tasks[0]
	require.Equal(t, "a", a.Name)
	require.Equal(t, plait.DefaultQueue, a.Queue)
	require.Equal(t, plait.PriorityNormal, a.Priority)
	require.Equal(t, plait.JoinAll, a.Join)
	var payload map[string]int
	require.NoError(t, json.Unmarshal(a.Payload, &payload))
	require.Equal(t, map[string]int{"n": 1}, payload)

	b := spec.Tasks[1]
	require.Equal(t, plait.TaskSpec{
		Name:     "b",
		Handler:  "h2",
		Payload:  []byte("raw bytes"),
		Deps:     []plait.Dep{{Task: "a", On: plait.OnFailure}},
		Join:     plait.JoinAny,
		Retry:    plait.RetryPolicy{MaxAttempts: 3, MaxElapsed: time.Hour},
		Timeout:  time.Second,
		Priority: plait.PriorityUrgent,
		Queue:    "gpu",
		Requires: []string{"cuda", "big"},
		RunAt:    at,
		Delay:    time.Minute,
	}, b)

	def, err := plait.NewWorkflow("wf").Task("a", "h", nil).Spec(nil, plait.Limits{})
	require.NoError(t, err)
	require.Equal(t, plait.StrategyContinue, def.Strategy)
	require.Nil(t, def.Tasks[0].Payload)
}

// metTable is the table of docs/store-contract.md, written out: for each
// condition, the parent statuses that satisfy it.
var metTable = map[plait.ErrorStrategy]map[plait.Condition][]plait.TaskStatus{
	plait.StrategyContinue: {
		plait.OnSuccess:    {plait.TaskSucceeded},
		plait.OnFailure:    {plait.TaskFailed, plait.TaskDead},
		plait.OnCompletion: {plait.TaskSucceeded, plait.TaskFailed, plait.TaskDead, plait.TaskSkipped},
	},
	plait.StrategyStop: {
		plait.OnSuccess:    {plait.TaskSucceeded},
		plait.OnFailure:    {plait.TaskFailed, plait.TaskDead},
		plait.OnCompletion: {plait.TaskSucceeded, plait.TaskFailed, plait.TaskDead, plait.TaskSkipped},
	},
	// Under skip a failed or dead parent counts as skipped.
	plait.StrategySkip: {
		plait.OnSuccess:    {plait.TaskSucceeded},
		plait.OnFailure:    nil,
		plait.OnCompletion: {plait.TaskSucceeded, plait.TaskFailed, plait.TaskDead, plait.TaskSkipped},
	},
}

func TestConditionMet(t *testing.T) {
	t.Parallel()
	statuses := []plait.TaskStatus{
		plait.TaskPending, plait.TaskReady, plait.TaskRunning, plait.TaskRetrying,
		plait.TaskSucceeded, plait.TaskFailed, plait.TaskSkipped, plait.TaskCancelled, plait.TaskDead,
		plait.TaskStatus("bogus"),
	}
	conds := []plait.Condition{plait.OnSuccess, plait.OnCompletion, plait.OnFailure, plait.OnFailure + 1}
	for strategy, table := range metTable {
		for _, c := range conds {
			for _, s := range statuses {
				want := false
				for _, ok := range table[c] {
					if ok == s {
						want = true
					}
				}
				require.Equal(t, want, c.Met(s, strategy), "%s parent %s under %s", c, s, strategy)
			}
		}
	}
	// A cancelled or unfinished parent satisfies nothing under any strategy.
	for _, strategy := range []plait.ErrorStrategy{plait.StrategyContinue, plait.StrategyStop, plait.StrategySkip} {
		for _, c := range conds {
			for _, s := range []plait.TaskStatus{plait.TaskCancelled, plait.TaskPending, plait.TaskReady, plait.TaskRunning, plait.TaskRetrying} {
				require.False(t, c.Met(s, strategy), "%s parent %s under %s", c, s, strategy)
			}
		}
	}
}

func TestNamesPrint(t *testing.T) {
	t.Parallel()
	require.Equal(t, "success", plait.OnSuccess.String())
	require.Equal(t, "completion", plait.OnCompletion.String())
	require.Equal(t, "failure", plait.OnFailure.String())
	require.Equal(t, "condition(7)", plait.Condition(7).String())
	require.Equal(t, "all", plait.JoinAll.String())
	require.Equal(t, "any", plait.JoinAny.String())
	require.Equal(t, "low", plait.PriorityLow.String())
	require.Equal(t, "urgent", plait.PriorityUrgent.String())
}

func TestOptionString(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600))
	tests := []struct {
		opt  fmt.Stringer
		want string
	}{
		{plait.Retry(3), "Retry(3)"},
		{plait.Retry(0), "Retry(0)"},
		{plait.Retry(-1), "Retry(-1)"},
		{plait.After("a"), `After("a")`},
		{plait.After("a", "b"), `After("a", "b")`},
		{plait.After(), "After()"},
		{plait.AfterCompletion("x"), `AfterCompletion("x")`},
		{plait.AfterFailure("x", "y"), `AfterFailure("x", "y")`},
		{plait.AnyOf(), "AnyOf()"},
		{plait.Timeout(5 * time.Second), "Timeout(5s)"},
		{plait.Timeout(-1), "Timeout(-1ns)"},
		{plait.MaxElapsed(time.Minute), "MaxElapsed(1m0s)"},
		{plait.Delay(1500 * time.Millisecond), "Delay(1.5s)"},
		{plait.WithPriority(plait.PriorityHigh), "WithPriority(high)"},
		{plait.WithPriority(9), "WithPriority(priority(9))"},
		{plait.OnQueue("gpu"), `OnQueue("gpu")`},
		{plait.OnQueue("a:b"), `OnQueue("a:b")`},
		{plait.Requires("gpu", "ssd"), `Requires("gpu", "ssd")`},
		{plait.RunAt(at), "RunAt(2030-01-02T02:04:05.000000006Z)"},
		{plait.Backoff(plait.ExponentialBackoff(time.Second, time.Minute)), "Backoff(exponential attempts=0 initial=1s max=1m0s)"},
		{plait.Backoff(plait.ConstantBackoff(2 * time.Second)), "Backoff(constant attempts=0 initial=2s max=0s)"},
		{plait.OnError(plait.StrategyStop), `OnError("stop")`},
		{plait.OnError("bogus"), `OnError("bogus")`},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, tc.opt.String())
	}
}
