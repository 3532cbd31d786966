package plait_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

// leafProblems flattens a joined validation error into its problems.
func leafProblems(err error) []*plait.ValidationError {
	var out []*plait.ValidationError
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if v, ok := e.(*plait.ValidationError); ok {
			out = append(out, v)
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				walk(c)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// requireProblem asserts err is a validation error that holds a problem of
// category cat on task and field, and returns that problem.
func requireProblem(t *testing.T, err error, cat error, task, field string) *plait.ValidationError {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, cat)
	require.ErrorIs(t, err, plait.ErrInvalidWorkflow)
	require.ErrorIs(t, err, &plait.ValidationError{})
	var first *plait.ValidationError
	require.ErrorAs(t, err, &first)
	require.ErrorIs(t, first, plait.ErrInvalidWorkflow)
	for _, p := range leafProblems(err) {
		require.ErrorIs(t, p, plait.ErrInvalidWorkflow)
		if p.Err == cat && p.Task == task && p.Field == field {
			return p
		}
	}
	require.Failf(t, "problem not reported", "want %v on task %q field %q in: %v", cat, task, field, err)
	return nil
}

// requireRejected checks the workflow is refused: no spec is produced, and
// Validate agrees with Spec under default limits.
func requireRejected(t *testing.T, w *plait.Workflow, limits plait.Limits) error {
	t.Helper()
	spec, err := w.Spec(plait.JSONCodec{}, limits)
	require.Error(t, err)
	require.Nil(t, spec, "no spec may be produced for an invalid workflow")
	if limits == (plait.Limits{}) {
		require.Equal(t, err.Error(), w.Validate().Error())
	}
	return err
}

func requireTopoOrder(t *testing.T, spec *plait.WorkflowSpec) {
	t.Helper()
	order := plait.TopoOrder(spec)
	require.Len(t, order, len(spec.Tasks))
	pos := make(map[string]int, len(order))
	for at, i := range order {
		require.GreaterOrEqual(t, i, 0)
		require.Less(t, i, len(spec.Tasks))
		_, dup := pos[spec.Tasks[i].Name]
		require.False(t, dup, "task %q listed twice", spec.Tasks[i].Name)
		pos[spec.Tasks[i].Name] = at
	}
	for _, task := range spec.Tasks {
		for _, d := range task.Deps {
			require.Less(t, pos[d.Task], pos[task.Name], "%q must come before %q", d.Task, task.Name)
		}
	}
}

// badIDs are names every place that takes a name must refuse. The
// ValidationError keeps each as given; only its message cuts it.
var badIDs = []struct {
	name string
	id   string
}{
	{"empty", ""},
	{"colon", "a:b"},
	{"open brace", "{tag"},
	{"close brace", "tag}"},
	{"NUL", "a\x00b"},
	{"invalid UTF-8", "\xff"},
	{"space", "a b"},
	{"too long", strings.Repeat("x", 129)},
}

func TestValidateInvalidIDs(t *testing.T) {
	t.Parallel()
	for _, bad := range badIDs {
		bad := bad
		places := []struct {
			place string
			build func() *plait.Workflow
			task  string
			field string
		}{
			{"workflow name", func() *plait.Workflow {
				return plait.NewWorkflow(bad.id).Task("a", "h", nil)
			}, "", "name"},
			{"task name", func() *plait.Workflow {
				return plait.NewWorkflow("wf").Task("ok", "h", nil).Task(bad.id, "h", nil)
			}, bad.id, "name"},
			{"handler", func() *plait.Workflow {
				return plait.NewWorkflow("wf").Task("a", bad.id, nil)
			}, "a", "handler"},
			{"queue", func() *plait.Workflow {
				return plait.NewWorkflow("wf").Task("a", "h", nil, plait.OnQueue(bad.id))
			}, "a", "queue"},
			{"requires", func() *plait.Workflow {
				return plait.NewWorkflow("wf").Task("a", "h", nil, plait.Requires("gpu", bad.id))
			}, "a", "requires"},
		}
		for _, pl := range places {
			pl := pl
			t.Run(bad.name+"/"+pl.place, func(t *testing.T) {
				t.Parallel()
				err := requireRejected(t, pl.build(), plait.Limits{})
				requireProblem(t, err, plait.ErrInvalidID, pl.task, pl.field)
				require.Len(t, leafProblems(err), 1, "exactly one problem: %v", err)
			})
		}
	}
}

func TestValidateMaxLengthIDIsAccepted(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("n", 128)
	w := plait.NewWorkflow(long).Task(long, long, nil, plait.OnQueue(long), plait.Requires(long))
	spec, err := w.Spec(nil, plait.Limits{})
	require.NoError(t, err)
	require.Equal(t, long, spec.Name)
}

func TestValidateErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		build  func() *plait.Workflow
		limits plait.Limits
		cat    error
		task   string
		field  string
		reason string // substring of the problem's Reason, if set
	}{
		{
			name:  "duplicate task",
			build: func() *plait.Workflow { return plait.NewWorkflow("wf").Task("a", "h", nil).Task("a", "h", nil) },
			cat:   plait.ErrDuplicateTask, task: "a", field: "name",
		},
		{
			name: "dependency listed twice",
			build: func() *plait.Workflow {
				return plait.NewWorkflow("wf").Task("a", "h", nil).Task("b", "h", nil, plait.After("a"), plait.AfterCompletion("a"))
			},
			cat: plait.ErrDuplicateTask, task: "b", field: "deps", reason: `"a"`,
		},
		{
			name: "unknown dependency",
			build: func() *plait.Workflow {
				return plait.NewWorkflow("wf").Task("a", "h", nil).Task("b", "h", nil, plait.After("a", "missing"))
			},
			cat: plait.ErrUnknownDep, task: "b", field: "deps", reason: `"missing"`,
		},
		{
			name: "dependency on an invalid name is unknown",
			build: func() *plait.Workflow {
				return plait.NewWorkflow("wf").Task("b", "h", nil, plait.After("x:y"))
			},
			cat: plait.ErrUnknownDep, task: "b", field: "deps", reason: `"x:y"`,
		},
		{
			name:  "self dependency",
			build: func() *plait.Workflow { return plait.NewWorkflow("wf").Task("a", "h", nil, plait.After("a")) },
			cat:   plait.ErrSelfDep, task: "a", field: "deps",
		},
		{
			name:  "self dependency on failure",
			build: func() *plait.Workflow { return plait.NewWorkflow("wf").Task("a", "h", nil, plait.AfterFailure("a")) },
			cat:   plait.ErrSelfDep, task: "a", field: "deps",
		},
		{
			name: "too many tasks",
			build: func() *plait.Workflow {
				return plait.NewWorkflow("wf").Task("a", "h", nil).Task("b", "h", nil).Task("c", "h", nil)
			},
			limits: plait.Limits{MaxTasks: 2},
			cat:    plait.ErrTooManyTasks, field: "tasks", reason: "3 tasks, limit 2",
		},
		{
			name: "too many dependencies",
			build: func() *plait.Workflow {
				return plait.NewWorkflow("wf").Task("a", "h", nil).Task("b", "h", nil).Task("c", "h", nil).
					Task("d", "h", nil, plait.After("a", "b", "c"))
			},
			limits: plait.Limits{MaxDeps: 2},
			cat:    plait.ErrTooManyDeps, task: "d", field: "deps", reason: "3 dependencies, limit 2",
		},
		{
			name:   "raw payload too large",
			build:  func() *plait.Workflow { return plait.NewWorkflow("wf").Task("a", "h", plait.Raw("12345")) },
			limits: plait.Limits{MaxPayloadBytes: 4},
			cat:    plait.ErrPayloadTooLarge, task: "a", field: "payload", reason: "5 bytes, limit 4",
		},
		{
			name:   "encoded payload too large",
			build:  func() *plait.Workflow { return plait.NewWorkflow("wf").Task("a", "h", "abcd") },
			limits: plait.Limits{MaxPayloadBytes: 5},
			cat:    plait.ErrPayloadTooLarge, task: "a", field: "payload", reason: "6 bytes, limit 5",
		},
		{
			name: "default payload limit",
			build: func() *plait.Workflow {
				return plait.NewWorkflow("wf").Task("a", "h", make(plait.Raw, plait.MaxPayloadBytesDefault+1))
			},
			cat: plait.ErrPayloadTooLarge, task: "a", field: "payload",
		},
		{
			name:  "payload the codec cannot encode",
			build: func() *plait.Workflow { return plait.NewWorkflow("wf").Task("a", "h", make(chan int)) },
			cat:   plait.ErrInvalidTaskOption, task: "a", field: "payload",
		},
		{
			name:  "negative retry",
			build: func() *plait.Workflow { return plait.NewWorkflow("wf").Task("a", "h", nil, plait.Retry(-1)) },
			cat:   plait.ErrInvalidTaskOption, task: "a", field: "option Retry(-1)", reason: "negative retry count",
		},
		{
			name:  "negative timeout",
			build: func() *plait.Workflow { return plait.NewWorkflow("wf").Task("a", "h", nil, plait.Timeout(-1)) },
			cat:   plait.ErrInvalidTaskOption, task: "a", field: "option Timeout(-1ns)", reason: "negative timeout",
		},
		{
			name:  "negative delay",
			build: func() *plait.Workflow { return plait.NewWorkflow("wf").Task("a", "h", nil, plait.Delay(-time.Second)) },
			cat:   plait.ErrInvalidTaskOption, task: "a", field: "option Delay(-1s)",
		},
		{
			name: "negative max elapsed",
			build: func() *plait.Workflow {
				return plait.NewWorkflow("wf").Task("a", "h", nil, plait.MaxElapsed(-time.Second))
			},
			cat: plait.ErrInvalidTaskOption, task: "a", field: "option MaxElapsed(-1s)",
		},
		{
			name:  "unknown priority",
			build: func() *plait.Workflow { return plait.NewWorkflow("wf").Task("a", "h", nil, plait.WithPriority(9)) },
			cat:   plait.ErrInvalidTaskOption, task: "a", field: "option WithPriority(priority(9))", reason: "unknown priority 9",
		},
		{
			name: "jitter above one",
			build: func() *plait.Workflow {
				return plait.NewWorkflow("wf").Task("a", "h", nil, plait.Backoff(plait.RetryPolicy{Jitter: 2}))
			},
			cat: plait.ErrInvalidTaskOption, task: "a", field: "option Backoff(exponential attempts=0 initial=0s max=0s)",
		},
		{
			name: "multiplier not a number",
			build: func() *plait.Workflow {
				return plait.NewWorkflow("wf").Task("a", "h", nil, plait.Backoff(plait.RetryPolicy{Multiplier: math.NaN()}))
			},
			cat: plait.ErrInvalidTaskOption, task: "a", field: "option Backoff(exponential attempts=0 initial=0s max=0s)",
		},
		{
			name: "retry count overflows",
			build: func() *plait.Workflow {
				return plait.NewWorkflow("wf").Task("a", "h", nil, plait.Retry(math.MaxInt))
			},
			cat: plait.ErrInvalidTaskOption, task: "a", field: "retry",
		},
		{
			name:  "After with no task",
			build: func() *plait.Workflow { return plait.NewWorkflow("wf").Task("a", "h", nil, plait.After()) },
			cat:   plait.ErrInvalidTaskOption, task: "a", field: "option After()", reason: "no task named",
		},
		{
			name:  "unknown strategy",
			build: func() *plait.Workflow { return plait.NewWorkflow("wf", plait.OnError("bogus")).Task("a", "h", nil) },
			cat:   plait.ErrInvalidTaskOption, field: `option OnError("bogus")`, reason: `unknown error strategy "bogus"`,
		},
		{
			name:  "empty workflow",
			build: func() *plait.Workflow { return plait.NewWorkflow("wf") },
			cat:   plait.ErrEmptyWorkflow, field: "tasks",
		},
	}
	for _, tc := range tests {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := tc.build()
			err := requireRejected(t, w, tc.limits)
			p := requireProblem(t, err, tc.cat, tc.task, tc.field)
			require.Equal(t, "wf", p.Workflow)
			require.Contains(t, p.Reason, tc.reason)
			require.Contains(t, err.Error(), tc.cat.Error())
		})
	}
}

func TestValidateTooManyTasksDefaultLimit(t *testing.T) {
	t.Parallel()
	w := plait.NewWorkflow("big")
	for i := 0; i <= plait.MaxTasksDefault; i++ {
		w.Task(fmt.Sprintf("t%d", i), "h", nil)
	}
	err := requireRejected(t, w, plait.Limits{})
	requireProblem(t, err, plait.ErrTooManyTasks, "", "tasks")
}

func TestValidateErrorQuotesAShortPrefixOfHostileNames(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x", 10<<10)
	err := plait.NewWorkflow(huge).Task(huge, huge, nil, plait.After(huge+"y"), plait.OnQueue(huge)).Validate()
	require.ErrorIs(t, err, plait.ErrInvalidID)
	msg := err.Error()
	require.Less(t, len(msg), 4<<10, "a 10 KB name must not be echoed whole: %d bytes", len(msg))
	require.Contains(t, msg, "…(10240 bytes)", "a cut name must say how long it was")
	require.Contains(t, msg, "…(10241 bytes)")
	p := requireProblem(t, err, plait.ErrInvalidID, huge, "name")
	require.Equal(t, huge, p.Task, "the error's field keeps the name as given")
}

func TestValidateErrorMessage(t *testing.T) {
	t.Parallel()
	err := plait.NewWorkflow("wf").Task("a", "h", nil).Task("b", "h", nil, plait.After("missing")).Validate()
	require.EqualError(t, err, `plait: workflow "wf" task "b" deps: unknown dependency: "missing"`)

	err = plait.NewWorkflow("wf").Validate()
	require.EqualError(t, err, `plait: workflow "wf" tasks: workflow has no task`)
}

// requireCycleReason checks reason names a closed walk along real edges,
// parent first, that is a rotation of want.
func requireCycleReason(t *testing.T, spec *plait.WorkflowSpec, reason string, want []string) {
	t.Helper()
	var ring, walk []string
	if head, tail, elided := strings.Cut(reason, " -> … -> "); elided {
		// A long cycle lists its first names, its closing name and its
		// length.
		var last string
		var n int
		_, err := fmt.Sscanf(tail, "%s (%d tasks)", &last, &n)
		require.NoError(t, err, "reason %q", reason)
		ring = strings.Split(head, " -> ")
		require.Equal(t, ring[0], last, "cycle must be closed: %q", reason)
		require.Equal(t, len(want), n, "reason %q must count the whole cycle", reason)
		require.Less(t, len(ring), len(want), "reason %q elides nothing", reason)
		walk = ring
	} else {
		names := strings.Split(reason, " -> ")
		require.GreaterOrEqual(t, len(names), 2, "reason %q", reason)
		require.Equal(t, names[0], names[len(names)-1], "cycle must be closed: %q", reason)
		ring = names[:len(names)-1]
		require.Len(t, ring, len(want), "reason %q", reason)
		walk = names
	}
	start := -1
	for i, n := range want {
		if n == ring[0] {
			start = i
		}
	}
	require.GreaterOrEqual(t, start, 0, "reason %q", reason)
	for i := range ring {
		require.Equal(t, want[(start+i)%len(want)], ring[i], "reason %q is not a rotation of %v", reason, want)
	}
	deps := map[string]map[string]bool{}
	for _, task := range spec.Tasks {
		deps[task.Name] = map[string]bool{}
		for _, d := range task.Deps {
			deps[task.Name][d.Task] = true
		}
	}
	for i := 0; i+1 < len(walk); i++ {
		require.True(t, deps[walk[i+1]][walk[i]], "%q does not depend on %q", walk[i+1], walk[i])
	}
}

// node is one task of a test graph: a name and its parents.
type node struct {
	name string
	deps []string
}

func graphSpec(nodes []node) *plait.WorkflowSpec {
	spec := &plait.WorkflowSpec{Name: "wf", Strategy: plait.StrategyContinue}
	for _, n := range nodes {
		ts := plait.TaskSpec{Name: n.name, Handler: "h", Queue: plait.DefaultQueue}
		for _, d := range n.deps {
			ts.Deps = append(ts.Deps, plait.Dep{Task: d})
		}
		spec.Tasks = append(spec.Tasks, ts)
	}
	return spec
}

func graphWorkflow(nodes []node) *plait.Workflow {
	w := plait.NewWorkflow("wf")
	for _, n := range nodes {
		var opts []plait.TaskOption
		if len(n.deps) > 0 {
			opts = append(opts, plait.After(n.deps...))
		}
		w.Task(n.name, "h", nil, opts...)
	}
	return w
}

func TestValidateCycle(t *testing.T) {
	t.Parallel()
	ring := make([]node, 2000)
	ringNames := make([]string, len(ring))
	for i := range ring {
		ring[i] = node{fmt.Sprintf("n%d", i), []string{fmt.Sprintf("n%d", (i+len(ring)-1)%len(ring))}}
		ringNames[i] = ring[i].name
	}
	tests := []struct {
		name  string
		nodes []node
		cycle []string
	}{
		{
			name:  "three tasks",
			nodes: []node{{"a", []string{"c"}}, {"b", []string{"a"}}, {"c", []string{"b"}}},
			cycle: []string{"a", "b", "c"},
		},
		{
			name:  "two tasks",
			nodes: []node{{"a", []string{"b"}}, {"b", []string{"a"}}},
			cycle: []string{"a", "b"},
		},
		{
			name: "cycle behind a valid prefix and with a tail",
			nodes: []node{
				{"root", nil},
				{"tail", []string{"y"}},
				{"x", []string{"root", "z"}},
				{"y", []string{"x"}},
				{"z", []string{"y"}},
				{"free", []string{"root"}},
			},
			cycle: []string{"x", "y", "z"},
		},
		{
			name: "cycle reached only through another stuck task",
			nodes: []node{
				{"stuck", []string{"p"}},
				{"p", []string{"q"}},
				{"q", []string{"p"}},
			},
			cycle: []string{"p", "q"},
		},
		{
			name:  "long cycle",
			nodes: ring,
			cycle: ringNames,
		},
	}
	for _, tc := range tests {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := graphSpec(tc.nodes)
			for _, err := range []error{
				plait.ValidateSpec(spec, plait.Limits{}),
				requireRejected(t, graphWorkflow(tc.nodes), plait.Limits{}),
			} {
				probs := leafProblems(err)
				require.Len(t, probs, 1, "%v", err)
				p := requireProblem(t, err, plait.ErrCycle, probs[0].Task, "deps")
				require.Equal(t, strings.SplitN(p.Reason, " -> ", 2)[0], p.Task, "the problem is filed on the cycle's first task")
				require.Contains(t, err.Error(), "dependency cycle: "+p.Reason)
				requireCycleReason(t, spec, p.Reason, tc.cycle)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	w := plait.NewWorkflow("wf", plait.OnError("bogus")).
		Task("a", "bad:handler", nil, plait.Retry(-1)).
		Task("a", "h", nil).
		Task("b", "h", plait.Raw("toolarge"), plait.After("missing"), plait.OnQueue("q{1}")).
		Task("c", "h", nil, plait.After("c"), plait.WithPriority(7))
	err := requireRejected(t, w, plait.Limits{MaxPayloadBytes: 4})
	requireProblem(t, err, plait.ErrInvalidTaskOption, "", `option OnError("bogus")`)
	requireProblem(t, err, plait.ErrInvalidTaskOption, "a", "option Retry(-1)")
	requireProblem(t, err, plait.ErrInvalidID, "a", "handler")
	requireProblem(t, err, plait.ErrDuplicateTask, "a", "name")
	requireProblem(t, err, plait.ErrPayloadTooLarge, "b", "payload")
	requireProblem(t, err, plait.ErrUnknownDep, "b", "deps")
	requireProblem(t, err, plait.ErrInvalidID, "b", "queue")
	requireProblem(t, err, plait.ErrSelfDep, "c", "deps")
	requireProblem(t, err, plait.ErrInvalidTaskOption, "c", "option WithPriority(priority(7))")
	require.Len(t, leafProblems(err), 9, "%v", err)
	require.False(t, errors.Is(err, plait.ErrCycle))
	require.False(t, errors.Is(err, plait.ErrEmptyWorkflow))
}

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

// validName is the name rule written out independently of the package.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// fuzzSpec builds a spec from fuzz input: names separated by newlines, and
// edges as byte triples (child, parent, condition). A parent byte past the
// task count names a task that does not exist.
func fuzzSpec(names string, edges []byte) *plait.WorkflowSpec {
	parts := strings.Split(names, "\n")
	if len(parts) > 64 {
		parts = parts[:64]
	}
	spec := &plait.WorkflowSpec{Name: "fuzz", Strategy: plait.StrategyContinue}
	for _, n := range parts {
		spec.Tasks = append(spec.Tasks, plait.TaskSpec{Name: n, Handler: "h", Queue: plait.DefaultQueue})
	}
	n := len(spec.Tasks)
	for i := 0; i+2 < len(edges) && i < 3*256; i += 3 {
		child := int(edges[i]) % n
		var parent string
		if p := int(edges[i+1]); p < 2*n {
			parent = spec.Tasks[p%n].Name
		} else {
			parent = fmt.Sprintf("ghost%d", p)
		}
		on := plait.Condition(edges[i+2] % 4)
		spec.Tasks[child].Deps = append(spec.Tasks[child].Deps, plait.Dep{Task: parent, On: on})
	}
	return spec
}

// wantValid decides independently whether spec must pass validation.
func wantValid(spec *plait.WorkflowSpec) bool {
	index := map[string]int{}
	for i, task := range spec.Tasks {
		if !validName(task.Name) {
			return false
		}
		if _, dup := index[task.Name]; dup {
			return false
		}
		index[task.Name] = i
	}
	for _, task := range spec.Tasks {
		seen := map[string]bool{}
		for _, d := range task.Deps {
			if d.Task == task.Name || seen[d.Task] || d.On > plait.OnFailure {
				return false
			}
			if _, ok := index[d.Task]; !ok {
				return false
			}
			seen[d.Task] = true
		}
	}
	// Depth-first search for a back edge.
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(spec.Tasks))
	var visit func(i int) bool
	visit = func(i int) bool {
		color[i] = grey
		for _, d := range spec.Tasks[i].Deps {
			p := index[d.Task]
			if color[p] == grey || color[p] == white && !visit(p) {
				return false
			}
		}
		color[i] = black
		return true
	}
	for i := range spec.Tasks {
		if color[i] == white && !visit(i) {
			return false
		}
	}
	return true
}

func FuzzValidateSpec(f *testing.F) {
	f.Add("a\nb\nc", []byte{1, 0, 0, 2, 1, 0})
	f.Add("a\nb\nc", []byte{1, 0, 0, 2, 1, 0, 0, 2, 0})
	f.Add("a\na", []byte{})
	f.Add("a:b\n{x}\n\xff\n", []byte{0, 0, 0})
	f.Add("x\ny", []byte{0, 200, 1, 1, 0, 3})
	f.Add("", []byte{0, 0, 0})
	f.Add("root\nm1\nm2\nsink", []byte{1, 0, 0, 2, 0, 1, 3, 1, 2, 3, 2, 0})
	f.Fuzz(func(t *testing.T, names string, edges []byte) {
		spec := fuzzSpec(names, edges)
		err := plait.ValidateSpec(spec, plait.Limits{})
		require.Equal(t, wantValid(spec), err == nil, "validation disagrees: %v", err)
		if err != nil {
			require.ErrorIs(t, err, plait.ErrInvalidWorkflow)
			probs := leafProblems(err)
			require.NotEmpty(t, probs)
			for _, p := range probs {
				require.ErrorIs(t, p, plait.ErrInvalidWorkflow)
				require.NotNil(t, p.Err)
				require.NotEmpty(t, p.Error())
			}
			return
		}
		seen := map[string]bool{}
		for _, task := range spec.Tasks {
			require.True(t, validName(task.Name), "accepted name %q", task.Name)
			require.False(t, seen[task.Name], "accepted duplicate %q", task.Name)
			seen[task.Name] = true
		}
		for _, task := range spec.Tasks {
			for _, d := range task.Deps {
				require.True(t, seen[d.Task], "accepted unknown dependency %q", d.Task)
			}
		}
		requireTopoOrder(t, spec)
	})
}
