package storetest

import (
	"strings"
	"testing"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testPayloads is the suite of [store.PayloadStore].
func testPayloads(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "AnswersPayloadsAsSubmitted",
			rule: "TaskPayloads answers each named task's payload as submitted (short or long, pending, running or failed for good), nil for a task without one, and leaves out names the run lacks",
			run: func(t *testing.T, h *Harness, rule string) {
				ps := h.Store.(store.PayloadStore)
				long := []byte(strings.Repeat("a long payload ", 20))
				short, long2 := task("short"), task("long")
				short.Payload, long2.Payload = []byte(`"s"`), long
				after := task("after", "long")
				after.Payload = long
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, short, long2, task("none"), after)})
				got := claimNames(t, h)
				failTask(t, h, got["long"].Lease, "boom", rule)
				res, err := ps.TaskPayloads(bg, &store.TaskPayloadsParams{RunID: r.ID, Tasks: []string{"short", "long", "none", "after", "nope"}})
				require.NoError(t, err, rule)
				require.Len(t, res.Payloads, 4, rule)
				require.Equal(t, `"s"`, string(res.Payloads["short"]), rule)
				require.Equal(t, long, res.Payloads["long"], rule+": a task that failed for good keeps its payload")
				require.Equal(t, long, res.Payloads["after"], rule+": a skipped task keeps its payload")
				none, ok := res.Payloads["none"]
				require.True(t, ok, rule)
				require.Empty(t, none, rule)
			},
		},
		{
			name: "MissingRunIsNotFound",
			rule: "TaskPayloads of a run that does not exist answers ErrNotFound, and more than TaskResultsMax names ErrInvalidArgument",
			run: func(t *testing.T, h *Harness, rule string) {
				ps := h.Store.(store.PayloadStore)
				_, err := ps.TaskPayloads(bg, &store.TaskPayloadsParams{RunID: "no-such-run", Tasks: []string{"a"}})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
				r := createRun(t, h, nil)
				_, err = ps.TaskPayloads(bg, &store.TaskPayloadsParams{RunID: r.ID, Tasks: make([]string, store.TaskResultsMax+1)})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
			},
		},
	})
}
