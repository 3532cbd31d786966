package plait_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

func TestSubmitManyRunsEveryWorkflow(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		b.handle(t, "noop", noop)
		before := b.submit(t, plait.NewWorkflow("one").Task("a", "noop", nil), plait.WithRunKey("taken"))
		runs, err := b.s.SubmitMany(context.Background(), []plait.Submission{
			{Workflow: plait.NewWorkflow("one").Task("a", "noop", nil)},
			{Workflow: plait.NewWorkflow("two").Task("a", "noop", nil).Task("b", "noop", nil, plait.After("a")), Options: []plait.SubmitOption{plait.ForTenant("acme")}},
			{Workflow: plait.NewWorkflow("one").Task("a", "noop", nil), Options: []plait.SubmitOption{plait.WithRunKey("taken")}},
		})
		require.NoError(t, err)
		require.Len(t, runs, 3)
		require.Equal(t, before.ID, runs[2].ID, "a taken run key answers the existing run")
		require.Equal(t, "acme", runs[1].Tenant)
		submitted := func(e plait.Event) bool { return e.Type == plait.EventRunSubmitted }
		require.Equal(t, 3, b.events.count(submitted), "one submitted event per new run: the first Submit and two of the three")
		b.start(t)
		for _, r := range runs {
			require.Equal(t, plait.RunCompleted, b.wait(t, r.ID).Status)
		}
	})
}

func TestSubmitManyRejectsInvalidBeforeWriting(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		b.handle(t, "noop", noop)
		runs, err := b.s.SubmitMany(context.Background(), []plait.Submission{
			{Workflow: plait.NewWorkflow("ok").Task("a", "noop", nil)},
			{Workflow: plait.NewWorkflow("loop").Task("a", "noop", nil, plait.After("b")).Task("b", "noop", nil, plait.After("a"))},
			{Workflow: plait.NewWorkflow("unknown").Task("a", "nobody", nil)},
		})
		require.Nil(t, runs)
		require.ErrorIs(t, err, plait.ErrCycle)
		require.ErrorIs(t, err, plait.ErrUnknownHandler)
		require.ErrorContains(t, err, "submission 1")
		require.ErrorContains(t, err, "submission 2")
		res, err := b.store.TaskClaim(context.Background(), &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
		require.NoError(t, err)
		require.Empty(t, res.Tasks, "nothing is written when any submission is invalid")
		require.Zero(t, b.events.count(func(e plait.Event) bool { return e.Type == plait.EventRunSubmitted }))
	})
}
