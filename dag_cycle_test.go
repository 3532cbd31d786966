package plait_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

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
