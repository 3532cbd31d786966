package storetest

import (
	"testing"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

func testCreateMany(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "CreateManyInOrder",
			rule: "RunCreateMany answers one outcome per run in order: valid runs are created with increasing ids and their roots ready, an invalid one carries ErrInvalidArgument and does not stop the others",
			run: func(t *testing.T, h *Harness, rule string) {
				params := []*store.RunCreateParams{
					{Workflow: spec(store.StrategyContinue, task("a"))},
					{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a")), Tenant: "acme"},
					{Workflow: &store.WorkflowSpec{Name: "empty"}},
					{Workflow: spec(store.StrategyStop, task("x"), task("y"))},
				}
				out, err := h.Store.RunCreateMany(bg, params)
				require.NoError(t, err, rule)
				require.Len(t, out, len(params), rule)
				require.ErrorIs(t, out[2].Err, store.ErrInvalidArgument, rule)
				require.Nil(t, out[2].Result, rule)
				prev := ""
				for _, i := range []int{0, 1, 3} {
					require.NoError(t, out[i].Err, rule)
					r := out[i].Result
					require.False(t, r.Existing, rule)
					id := r.Run.ID
					if prev != "" {
						require.True(t, len(id) > len(prev) || (len(id) == len(prev) && id > prev), rule+": %q after %q", id, prev)
					}
					prev = id
					got := getRun(t, h, id)
					require.Equal(t, len(params[i].Workflow.Tasks), got.Total, rule)
					require.Equal(t, params[i].Tenant, got.Tenant, rule)
					require.Equal(t, store.TaskReady, got.Tasks[0].Status, rule)
				}
				res := claim(t, h, &claimOpts{Limit: 100})
				require.Len(t, res.Tasks, 4, rule+": the roots a, a, x and y are ready")
				require.Equal(t, out[0].Result.Run.ID, res.Tasks[0].Lease.RunID, rule+": in creation order")
			},
		},
		{
			name: "CreateManyKeys",
			rule: "in RunCreateMany a key already taken, before the call or earlier in it, answers the existing run with Existing and writes nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				before := createRun(t, h, &runOpts{Key: "k-old"})
				out, err := h.Store.RunCreateMany(bg, []*store.RunCreateParams{
					{Workflow: spec(store.StrategyContinue, task("a")), Key: "k-new"},
					{Workflow: spec(store.StrategyContinue, task("z")), Key: "k-old"},
					{Workflow: spec(store.StrategyContinue, task("z")), Key: "k-new"},
				})
				require.NoError(t, err, rule)
				require.NoError(t, out[0].Err, rule)
				require.False(t, out[0].Result.Existing, rule)
				for i, want := range map[int]string{1: before.ID, 2: out[0].Result.Run.ID} {
					require.NoError(t, out[i].Err, rule)
					require.True(t, out[i].Result.Existing, rule)
					require.Equal(t, want, out[i].Result.Run.ID, rule)
					require.Equal(t, "a", out[i].Result.Run.Tasks[0].Name, rule+": the existing run, not the new workflow")
				}
				res := claim(t, h, &claimOpts{Limit: 100})
				require.Len(t, res.Tasks, 2, rule+": only the two created runs have ready tasks")
			},
		},
	})
}
