package plait_test

import (
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
