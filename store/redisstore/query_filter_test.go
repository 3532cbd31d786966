package redisstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// A workflow with a service reads the smaller index (one page for a rare
// workflow among thousands of the service's runs); an error prefix on a
// large index is read within the budget, in short pages with cursors, and
// still lists exactly the matching runs; a count of it is capped by its
// limit and exact under a limit that covers the index.
func TestFilterReadsTheSmallerIndexAndBoundsTheRest(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	clk := fakeclock.New(start)
	m.SetTime(start)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	s, err := redisstore.New(ctx, c, redisstore.WithClock(clk), redisstore.WithLogger(quietLogger()), redisstore.WithShards(2))
	require.NoError(t, err)
	common := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}}}
	rare := &store.WorkflowSpec{Name: "rare", Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}, {Name: "b", Handler: "h"}}}
	params := make([]*store.RunCreateParams, 0, 3000)
	for i := 0; i < 3000; i++ {
		wf := common
		if i%700 == 3 {
			wf = rare
		}
		params = append(params, &store.RunCreateParams{Workflow: wf, Service: "svc"})
	}
	outs, err := s.RunCreateMany(ctx, params)
	require.NoError(t, err)
	var rares, stopped []string
	for i, o := range outs {
		require.NoError(t, o.Err)
		id := o.Result.Run.ID
		if i%700 == 3 {
			rares = append(rares, id)
		}
		if i%1100 == 7 || i == 2999 {
			_, err := s.RunCancel(ctx, &store.RunCancelParams{ID: id, Reason: "operator: stop"})
			require.NoError(t, err)
			r, err := s.RunGet(ctx, &store.RunGetParams{ID: id})
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(r.Tasks[0].Error, "operator"), "a cancelled task carries the reason")
			stopped = append(stopped, id)
		}
	}

	page, err := s.RunList(ctx, &store.RunListParams{Filter: store.RunFilter{Service: "svc", Workflow: "rare"}, Limit: 50})
	require.NoError(t, err)
	require.ElementsMatch(t, rares, runIDs(page.Runs))
	require.Empty(t, page.NextCursor, "the workflow's index is read, not the service's")

	f := store.RunFilter{Service: "svc", ErrorPrefix: "operator"}
	var got []string
	short, cursor := 0, ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 20)
		res, err := s.RunList(ctx, &store.RunListParams{Filter: f, Limit: 10, Cursor: cursor})
		require.NoError(t, err)
		got = append(got, runIDs(res.Runs)...)
		if res.NextCursor == "" {
			break
		}
		if len(res.Runs) < 10 {
			short++
		}
		cursor = res.NextCursor
	}
	require.ElementsMatch(t, stopped, got)
	require.Positive(t, short, "a page cut by the budget carries a cursor")

	n, err := s.RunCount(ctx, &store.RunCountParams{Filter: f, Limit: 100})
	require.NoError(t, err)
	require.True(t, n.Capped)
	n, err = s.RunCount(ctx, &store.RunCountParams{Filter: f})
	require.NoError(t, err)
	require.False(t, n.Capped)
	require.Equal(t, map[store.RunStatus]int64{store.RunCancelled: int64(len(stopped))}, n.Counts)
	n, err = s.RunCount(ctx, &store.RunCountParams{Filter: store.RunFilter{Service: "svc", Workflow: "rare"}, Limit: 10})
	require.NoError(t, err)
	require.False(t, n.Capped, "the smaller index holds fewer runs than the limit")
	require.Equal(t, int64(len(rares)), n.Counts[store.RunPending]+n.Counts[store.RunCancelled])
}

func runIDs(runs []*store.Run) []string {
	out := []string{}
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return out
}
