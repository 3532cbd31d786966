package plait_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

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
