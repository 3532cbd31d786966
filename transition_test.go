package plait_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

// The status tables in docs/store-contract.md are the code's tables.
func TestTransitionTablesMatchTheContract(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("docs/store-contract.md")
	require.NoError(t, err)
	section := string(doc)
	start := strings.Index(section, "## Status transitions")
	require.GreaterOrEqual(t, start, 0, "docs/store-contract.md has a section Status transitions")
	section = section[start+3:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	rows := regexp.MustCompile(`(?m)^\| (\(new\)|[a-z]+) \| ([a-z, ]+) \|$`).FindAllStringSubmatch(section, -1)
	tasks := map[string]string{}
	runs := map[string]string{}
	inRuns := false
	for _, r := range rows {
		from := r[1]
		if from == "from" {
			continue
		}
		if from == "(new)" {
			from = ""
			if len(tasks) > 0 {
				inRuns = true
			}
		}
		if inRuns {
			runs[from] = r[2]
		} else {
			tasks[from] = r[2]
		}
	}
	wantTasks := map[string]string{}
	for _, from := range append([]plait.TaskStatus{""}, store.TaskStatuses()...) {
		if next := from.Next(); len(next) > 0 {
			wantTasks[string(from)] = joinStatuses(next)
		}
	}
	wantRuns := map[string]string{}
	for _, from := range append([]plait.RunStatus{""}, store.RunStatuses()...) {
		if next := from.Next(); len(next) > 0 {
			wantRuns[string(from)] = joinStatuses(next)
		}
	}
	require.Equal(t, wantTasks, tasks, "task table of docs/store-contract.md")
	require.Equal(t, wantRuns, runs, "run table of docs/store-contract.md")
}

func joinStatuses[S ~string](ss []S) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return strings.Join(out, ", ")
}

func TestTransitionTable(t *testing.T) {
	t.Parallel()
	for _, s := range store.TaskStatuses() {
		require.Equal(t, s.Terminal(), len(s.Next()) == 0, "a task status leads nowhere exactly when it is terminal: %s", s)
	}
	for _, s := range store.RunStatuses() {
		require.Equal(t, s.Terminal(), len(s.Next()) == 0, "a run status leads nowhere exactly when it is terminal: %s", s)
	}
	err := store.CheckTaskTransition(plait.TaskSucceeded, plait.TaskReady)
	require.ErrorIs(t, err, plait.ErrIllegalTransition)
	require.EqualError(t, err, "plait: illegal task transition succeeded -> ready")
	require.EqualError(t, store.CheckRunTransition("", plait.RunRunning), "plait: illegal run transition (new) -> running")
	require.NoError(t, store.CheckRunTransition(plait.RunPending, plait.RunRunning))
	next := plait.TaskPending.Next()
	next[0] = plait.TaskDead
	require.Equal(t, plait.TaskReady, plait.TaskPending.Next()[0], "Next returns a copy")
}

// The replay moves printed in docs/store-contract.md are those of
// ReplayNext, and none leads out of a status that is not terminal.
func TestReplayMovesMatchTheContract(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("docs/store-contract.md")
	require.NoError(t, err)
	section := string(doc)
	start := strings.Index(section, "\nReplay moves:\n")
	require.GreaterOrEqual(t, start, 0, "docs/store-contract.md prints the replay moves")
	section = section[start:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var got []string
	for _, r := range regexp.MustCompile(`(?m)^\| ([a-z]+) \| ([a-z]+) \|$`).FindAllStringSubmatch(section, -1) {
		if r[1] != "from" {
			got = append(got, "move "+r[1]+" -> "+r[2])
		}
	}
	var want []string
	for _, f := range store.TaskStatuses() {
		for _, to := range f.ReplayNext() {
			require.True(t, f.Terminal(), "a replay move leads out of a terminal status")
			require.NoError(t, store.CheckTaskReplay(f, to))
			want = append(want, "move "+string(f)+" -> "+string(to))
		}
		require.Error(t, store.CheckTaskReplay(f, plait.TaskReady), "a replay moves a task to pending only")
	}
	for _, f := range store.RunStatuses() {
		for _, to := range f.ReplayNext() {
			require.True(t, f.Terminal(), "a replay move leads out of a terminal status")
			require.NoError(t, store.CheckRunReplay(f, to))
			want = append(want, "move "+string(f)+" -> "+string(to))
		}
	}
	require.Equal(t, want, got)
}
