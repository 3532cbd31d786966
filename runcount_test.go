package plait_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
	"github.com/stretchr/testify/require"
)

// countedStore counts the RunCount calls that reach the store.
type countedStore struct {
	*memstore.Store
	counts atomic.Int64
}

func (c *countedStore) RunCount(ctx context.Context, p *store.RunCountParams) (*store.RunCountResult, error) {
	c.counts.Add(1)
	return c.Store.RunCount(ctx, p)
}

// RunCount answers from its cache for the same params within the ttl, asks
// the store again after it or for other params, keeps at most its entries,
// and asks every time with the cache off.
func TestRunCountCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	st := &countedStore{Store: newMemStore(t, memstore.WithClock(clk))}
	s, err := plait.New(st, plait.WithClock(clk), plait.WithRunCountCache(2*time.Second, 2))
	require.NoError(t, err)
	require.NoError(t, s.Handle("h", noop))
	wf := plait.NewWorkflow("report").Task("a", "h", nil)
	submit := func() {
		_, err := s.Submit(ctx, wf, plait.ForTenant("acme"))
		require.NoError(t, err)
	}
	count := func(f plait.RunFilter) int64 {
		res, err := s.RunCount(ctx, plait.RunCountParams{Filter: f})
		require.NoError(t, err)
		require.False(t, res.Capped)
		res.Counts[plait.RunPending] += 100 // a caller's change stays its own
		return res.Counts[plait.RunPending] - 100
	}
	submit()
	acme := plait.RunFilter{Tenant: "acme"}
	require.Equal(t, int64(1), count(acme))
	submit()
	require.Equal(t, int64(1), count(acme), "answered from the cache")
	require.Equal(t, int64(1), st.counts.Load())
	require.Equal(t, int64(2), count(plait.RunFilter{}), "other params ask the store")
	clk.Advance(2 * time.Second)
	require.Equal(t, int64(2), count(acme), "the ttl is over")
	require.Equal(t, int64(3), st.counts.Load())
	// Two entries at most: a third filter evicts the oldest.
	count(plait.RunFilter{Workflow: "report"})
	count(plait.RunFilter{Statuses: []plait.RunStatus{plait.RunPending}})
	before := st.counts.Load()
	count(acme)
	require.Equal(t, before+1, st.counts.Load(), "evicted")

	_, err = s.RunCount(ctx, plait.RunCountParams{Limit: -1})
	require.ErrorIs(t, err, plait.ErrInvalidArgument)

	off, err := plait.New(st, plait.WithClock(clk), plait.WithRunCountCache(0, 1))
	require.NoError(t, err)
	before = st.counts.Load()
	for range 3 {
		_, err := off.RunCount(ctx, plait.RunCountParams{Filter: acme})
		require.NoError(t, err)
	}
	require.Equal(t, before+3, st.counts.Load(), "no cache")

	for _, o := range []plait.Option{plait.WithRunCountCache(-time.Second, 1), plait.WithRunCountCache(time.Second, 0),
		plait.WithRunCountCache(time.Second, plait.RunCountCacheEntriesMax+1)} {
		_, err := plait.New(st, o)
		require.ErrorIs(t, err, plait.ErrInvalidOption)
	}
}
