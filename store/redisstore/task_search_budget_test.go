package redisstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// TestTaskSearchStopsAtItsBudget: a call examines at most TaskSearchScan
// + Limit entries; a filter that matches none of them answers an empty
// page with a cursor, and the next page goes on after the last entry
// examined and finds the match.
func TestTaskSearchStopsAtItsBudget(t *testing.T) {
	t.Parallel()
	h := newMiniredisHarness(t)
	ctx := context.Background()
	n := store.TaskSearchScan + 50
	tasks := make([]store.TaskSpec, 0, n+1)
	for i := range n {
		tasks = append(tasks, store.TaskSpec{Name: fmt.Sprintf("t%04d", i), Handler: "bulk", Queue: "bulk"})
	}
	tasks = append(tasks, store.TaskSpec{Name: "needle", Handler: "needle", Queue: "bulk"})
	_, err := h.Store.RunCreate(ctx, &store.RunCreateParams{Workflow: &store.WorkflowSpec{Name: "wf", Tasks: tasks}})
	require.NoError(t, err)
	ts := h.Store.(store.TaskSearchStore)
	p := &store.TaskSearchParams{Handler: "needle", Statuses: []store.TaskStatus{store.TaskReady}, Limit: 1}
	res, err := ts.TaskSearch(ctx, p)
	require.NoError(t, err)
	require.Empty(t, res.Tasks, "the budget ran out before the match")
	require.NotEmpty(t, res.NextCursor, "a short page still has a next one")
	p.Cursor = res.NextCursor
	res, err = ts.TaskSearch(ctx, p)
	require.NoError(t, err)
	require.Len(t, res.Tasks, 1)
	require.Equal(t, "needle", res.Tasks[0].Name)
}
