package plait_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store/memstore"
)

func TestQueriesAnswerUnsupportedWithoutTheCapability(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := plait.New(coreOnly{memstore.New()})
	require.NoError(t, err)
	_, errRuns := s.Runs(ctx, plait.RunQueryParams{})
	_, errByID := s.RunsByID(ctx, "1")
	_, errCounts := s.RunCounts(ctx, time.Time{}, time.Time{})
	errDelete := s.DeleteRun(ctx, "1")
	_, errTasks := s.Tasks(ctx, "1")
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
	s, err := plait.New(memstore.New(memstore.WithClock(clk)), plait.WithClock(clk))
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
	page, err := s.Runs(ctx, plait.RunQueryParams{Filter: plait.RunFilter{Service: "billing", Tenant: "acme"}, Limit: 2})
	require.NoError(t, err)
	require.Equal(t, []string{ids[2], ids[1]}, []string{page.Runs[0].ID, page.Runs[1].ID})
	require.NotEmpty(t, page.Cursor)
	page, err = s.Runs(ctx, plait.RunQueryParams{Filter: plait.RunFilter{Service: "billing", Tenant: "acme"}, Cursor: page.Cursor})
	require.NoError(t, err)
	require.Len(t, page.Runs, 1)
	require.Empty(t, page.Cursor)

	_, err = s.Runs(ctx, plait.RunQueryParams{Filter: plait.RunFilter{Tenant: "acme"}})
	require.ErrorIs(t, err, plait.ErrInvalidArgument, "a tenant needs its service")

	runs, err := s.RunsByID(ctx, ids[1], "nope")
	require.NoError(t, err)
	require.Equal(t, ids[1], runs[0].ID)
	require.Nil(t, runs[1])
	_, err = s.RunsByID(ctx, make([]string, plait.GetManyMax+1)...)
	require.ErrorIs(t, err, plait.ErrInvalidArgument)

	counts, err := s.RunCounts(ctx, time.Time{}, time.Time{})
	require.NoError(t, err)
	require.Equal(t, map[plait.RunStatus]int64{plait.RunPending: 3}, counts)

	require.ErrorIs(t, s.DeleteRun(ctx, ids[0]), plait.ErrRunActive)
	_, err = s.Cancel(ctx, ids[0])
	require.NoError(t, err)
	require.NoError(t, s.DeleteRun(ctx, ids[0]))
	require.ErrorIs(t, s.DeleteRun(ctx, ids[0]), plait.ErrNotFound)

	tasks, err := s.Tasks(ctx, ids[1], plait.TaskReady)
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
		counts, err := b.s.RunCounts(ctx, time.Time{}, time.Time{})
		require.NoError(t, err)
		require.Equal(t, map[plait.RunStatus]int64{plait.RunCompleted: 1}, counts)

		b.advanceAfterArmed(t, time.Minute)
		b.events.waitFor(t, 1, is(plait.EventRunsPruned, ""))
		b.waitArmed(t, b.clock.Now().Add(time.Minute))
		b.calls.waitIdle(t)
		b.clock.Advance(25 * time.Hour)
		b.events.waitFor(t, 2, is(plait.EventRunsPruned, ""))

		counts, err = b.s.RunCounts(ctx, time.Time{}, time.Time{})
		require.NoError(t, err)
		require.Empty(t, counts, "the finished run is counted no more")
		page, err := b.s.Runs(ctx, plait.RunQueryParams{Filter: plait.RunFilter{Service: "billing", Tenant: "acme"}})
		require.NoError(t, err)
		require.Empty(t, page.Runs)
		runs, err := b.s.RunsByID(ctx, run.ID)
		require.NoError(t, err)
		require.Nil(t, runs[0])
	})
}

func TestJanitorIntervalValidated(t *testing.T) {
	t.Parallel()
	_, err := plait.New(memstore.New(), plait.WithJanitorInterval(0))
	require.ErrorIs(t, err, plait.ErrInvalidOption)
}
