package plait_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

func TestQueriesAnswerUnsupportedWithoutTheCapability(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := plait.New(coreOnly{newMemStore(t)})
	require.NoError(t, err)
	_, errRuns := s.RunList(ctx, plait.RunListParams{})
	_, errByID := s.RunGetMany(ctx, "1")
	_, errCounts := s.RunCount(ctx, plait.RunCountParams{})
	errDelete := s.RunDelete(ctx, "1")
	_, errTasks := s.TaskList(ctx, "1")
	for _, err := range []error{errRuns, errByID, errCounts, errDelete, errTasks} {
		require.ErrorIs(t, err, plait.ErrUnsupported)
		var ue *plait.UnsupportedError
		require.True(t, errors.As(err, &ue))
		require.Equal(t, "QueryStore", ue.Capability)
	}
}

func TestSchedulerQueriesRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s, err := plait.New(newMemStore(t, memstore.WithClock(clk)), plait.WithClock(clk))
	require.NoError(t, err)
	require.NoError(t, s.Handle("h", noop))
	wf := plait.NewWorkflow("report").Task("a", "h", nil)
	var ids []string
	for i := 0; i < 3; i++ {
		r, err := s.Submit(ctx, wf, plait.ForService("billing"), plait.ForTenant("acme"))
		require.NoError(t, err)
		ids = append(ids, r.ID)
		clk.Advance(time.Millisecond)
	}
	page, err := s.RunList(ctx, plait.RunListParams{Filter: plait.RunFilter{Service: "billing", Tenant: "acme"}, Limit: 2})
	require.NoError(t, err)
	require.Equal(t, []string{ids[2], ids[1]}, []string{page.Runs[0].ID, page.Runs[1].ID})
	require.NotEmpty(t, page.NextCursor)
	page, err = s.RunList(ctx, plait.RunListParams{Filter: plait.RunFilter{Service: "billing", Tenant: "acme"}, Cursor: page.NextCursor})
	require.NoError(t, err)
	require.Len(t, page.Runs, 1)
	require.Empty(t, page.NextCursor)

	page, err = s.RunList(ctx, plait.RunListParams{Filter: plait.RunFilter{Tenant: "acme"}})
	require.NoError(t, err, "a tenant alone is a filter")
	require.Len(t, page.Runs, 3)

	runs, err := s.RunGetMany(ctx, ids[1], "nope")
	require.NoError(t, err)
	require.Equal(t, ids[1], runs[0].ID)
	require.Nil(t, runs[1])
	_, err = s.RunGetMany(ctx, make([]string, store.GetManyMax+1)...)
	require.ErrorIs(t, err, plait.ErrInvalidArgument)

	counts, err := s.RunCount(ctx, plait.RunCountParams{})
	require.NoError(t, err)
	require.Equal(t, map[plait.RunStatus]int64{plait.RunPending: 3}, counts.Counts)
	require.False(t, counts.Capped)

	require.ErrorIs(t, s.RunDelete(ctx, ids[0]), plait.ErrRunActive)
	_, err = s.RunCancel(ctx, ids[0])
	require.NoError(t, err)
	require.NoError(t, s.RunDelete(ctx, ids[0]))
	require.ErrorIs(t, s.RunDelete(ctx, ids[0]), plait.ErrNotFound)

	tasks, err := s.TaskList(ctx, ids[1], plait.TaskReady)
	require.NoError(t, err)
	require.Len(t, tasks, 1)
	require.Equal(t, "a", tasks[0].Name)
}

// The janitor Run starts prunes the runs past their retention from the
// query indexes, on every store, driven by the fake clock.
func TestJanitorPrunesExpiredRuns(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f, plait.WithJanitorInterval(time.Minute))
		b.handle(t, "noop", noop)
		b.start(t)
		run := b.submit(t, plait.NewWorkflow("one").Task("a", "noop", nil), plait.ForService("billing"), plait.ForTenant("acme"))
		b.wait(t, run.ID)
		ctx := context.Background()
		counts, err := b.s.RunCount(ctx, plait.RunCountParams{})
		require.NoError(t, err)
		require.Equal(t, map[plait.RunStatus]int64{plait.RunCompleted: 1}, counts.Counts)

		b.advanceAfterArmed(t, time.Minute)
		b.events.waitFor(t, 1, is(plait.EventRunsPruned, ""))
		b.waitArmed(t, b.clock.Now().Add(time.Minute))
		b.calls.waitIdle(t)
		b.clock.Advance(25 * time.Hour)
		b.events.waitFor(t, 2, is(plait.EventRunsPruned, ""))

		counts, err = b.s.RunCount(ctx, plait.RunCountParams{})
		require.NoError(t, err)
		require.Empty(t, counts.Counts, "the finished run is counted no more")
		page, err := b.s.RunList(ctx, plait.RunListParams{Filter: plait.RunFilter{Service: "billing", Tenant: "acme"}})
		require.NoError(t, err)
		require.Empty(t, page.Runs)
		runs, err := b.s.RunGetMany(ctx, run.ID)
		require.NoError(t, err)
		require.Nil(t, runs[0])
	})
}

func TestJanitorIntervalValidated(t *testing.T) {
	t.Parallel()
	_, err := plait.New(newMemStore(t), plait.WithJanitorInterval(0))
	require.ErrorIs(t, err, plait.ErrInvalidOption)
}
