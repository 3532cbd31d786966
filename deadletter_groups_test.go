package plait_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

func TestDeadLetterErrorKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                                    "",
		"  card declined  ":                   "card declined",
		"order 17: out of stock\nstack...":    "order #: out of stock",
		"dial tcp 10.0.0.7:6379: i/o timeout": "dial tcp #.#.#.#:#: i/o timeout",
		"timeout after 30s":                   "timeout after #",
		"run 2-ya5xurjwoy not found":          "run # not found",
		"job 550e8400-e29b-41d4-a716-446655440000 failed": "job # failed",
		"sha deadbeef ok, sha 9f2c1a done":                "sha deadbeef ok, sha # done",
		"user_42 gone":                                    "# gone",
		"héllo wörld 7":                                   "héllo wörld #",
	} {
		require.Equal(t, want, plait.DeadLetterErrorKey(in), "key of %q", in)
	}
	long := plait.DeadLetterErrorKey(strings.Repeat("é", 300))
	require.LessOrEqual(t, len(long), store.DeadLetterGroupKeyMax)
	require.True(t, strings.HasPrefix(strings.Repeat("é", 300), long), "a long line is cut at a character boundary")
}

func TestSchedulerGroupsAndFiltersDeadLetters(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f, plait.WithQueues(plait.DefaultQueue, "billing"))
		b.handle(t, "charge", func(ctx context.Context, t *plait.Task) (any, error) {
			var order int
			if err := t.Decode(&order); err != nil {
				return nil, err
			}
			if order%3 == 0 {
				return nil, plait.Permanent(errors.New("card declined"))
			}
			return nil, plait.Permanent(fmt.Errorf("order %d: out of stock", order))
		})
		var runs []string
		for i := 1; i <= 6; i++ {
			tenant := "acme"
			if i > 4 {
				tenant = "zeta"
			}
			run := b.submit(t, plait.NewWorkflow("shop").Task("pay", "charge", i, plait.OnQueue("billing")),
				plait.ForService("orders"), plait.ForTenant(tenant))
			runs = append(runs, run.ID)
		}
		b.start(t)
		for _, id := range runs {
			b.wait(t, id)
		}
		ctx := context.Background()
		page, err := b.s.DeadLetterList(ctx, plait.DeadLetterListParams{Tenant: "zeta", Queue: "billing", Handler: "charge"})
		require.NoError(t, err)
		require.Len(t, page.Letters, 2)
		for _, l := range page.Letters {
			require.Equal(t, [...]string{"zeta", "orders", "billing", "charge", "shop"}, [...]string{l.Tenant, l.Service, l.Queue, l.Handler, l.Workflow})
		}

		res, err := b.s.DeadLetterGroups(ctx, plait.DeadLetterGroupsParams{Service: "orders"})
		require.NoError(t, err)
		require.Equal(t, 6, res.Letters)
		require.False(t, res.Truncated)
		require.Len(t, res.Groups, 2)
		require.Equal(t, [...]any{"order #: out of stock", 4}, [...]any{res.Groups[0].Key, res.Groups[0].Count})
		require.Equal(t, [...]any{"card declined", 2}, [...]any{res.Groups[1].Key, res.Groups[1].Count})
		require.Equal(t, "charge", res.Groups[1].Sample.Handler)

		res, err = b.s.DeadLetterGroups(ctx, plait.DeadLetterGroupsParams{Window: 4})
		require.NoError(t, err)
		require.Equal(t, 4, res.Letters)
		require.True(t, res.Truncated, "a window of 4 of 6 letters is truncated")
		require.NotEmpty(t, res.NextCursor)
		rest, err := b.s.DeadLetterGroups(ctx, plait.DeadLetterGroupsParams{Window: 4, Cursor: res.NextCursor})
		require.NoError(t, err)
		require.Equal(t, 2, rest.Letters)
		require.False(t, rest.Truncated)
	})
}

func TestSchedulerAnswersUnsupportedGroupsAndSeries(t *testing.T) {
	t.Parallel()
	s, err := plait.New(coreOnly{newMemStore(t)})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = s.DeadLetterGroups(ctx, plait.DeadLetterGroupsParams{})
	var ue *plait.UnsupportedError
	require.True(t, errors.As(err, &ue))
	require.Equal(t, "DeadLetterGroupStore", ue.Capability)
	now := time.Now()
	_, err = s.StatsSeries(ctx, plait.StatsSeriesParams{From: now.Add(-time.Hour), To: now})
	require.True(t, errors.As(err, &ue))
	require.Equal(t, "StatsSeriesStore", ue.Capability)

	off, err := plait.New(newMemStore(t))
	require.NoError(t, err)
	_, err = off.StatsSeries(ctx, plait.StatsSeriesParams{From: now.Add(-time.Hour), To: now})
	require.ErrorIs(t, err, plait.ErrUnsupported, "a store whose stats are off keeps no series")
}

func TestSchedulerStatsSeriesCountsARun(t *testing.T) {
	t.Parallel()
	b := setup(t, storeFactory{name: "memstore", new: func(t *testing.T, clk *fakeclock.Clock) store.Store {
		return newMemStore(t, memstore.WithClock(clk), memstore.WithStats(0))
	}})
	b.handle(t, "ok", noop)
	b.handle(t, "bad", func(ctx context.Context, t *plait.Task) (any, error) {
		return nil, plait.Permanent(errors.New("no"))
	})
	ok := b.submit(t, plait.NewWorkflow("good").Task("a", "ok", nil).Task("b", "ok", nil, plait.After("a")))
	bad := b.submit(t, plait.NewWorkflow("bad").Task("a", "bad", nil))
	b.start(t)
	b.wait(t, ok.ID)
	b.wait(t, bad.ID)
	res, err := b.s.StatsSeries(context.Background(), plait.StatsSeriesParams{From: epoch.Add(-time.Minute), To: epoch.Add(time.Minute)})
	require.NoError(t, err)
	require.Len(t, res.Points, 2)
	require.Equal(t, plait.StatsPoint{At: epoch.Add(-time.Minute)}, res.Points[0], "nothing happened the minute before")
	require.Equal(t, plait.StatsPoint{At: epoch, TasksSucceeded: 2, TasksFailed: 1, RunsCompleted: 1, RunsFailed: 1}, res.Points[1])
}

// DeadLetterGroups forwards the DeadLetterGroupStore capability of the
// store under it.
func (c *callCounter) DeadLetterGroups(ctx context.Context, p *store.DeadLetterGroupsParams) (*store.DeadLetterGroupsResult, error) {
	d, ok := c.Store.(store.DeadLetterGroupStore)
	if !ok {
		return nil, &plait.UnsupportedError{Capability: "DeadLetterGroupStore"}
	}
	c.enter()
	defer c.leave()
	return d.DeadLetterGroups(ctx, p)
}

// StatsSeries forwards the StatsSeriesStore capability of the store under
// it.
func (c *callCounter) StatsSeries(ctx context.Context, p *store.StatsSeriesParams) (*store.StatsSeriesResult, error) {
	st, ok := c.Store.(store.StatsSeriesStore)
	if !ok {
		return nil, &plait.UnsupportedError{Capability: "StatsSeriesStore"}
	}
	c.enter()
	defer c.leave()
	return st.StatsSeries(ctx, p)
}
