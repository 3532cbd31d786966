package plait_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

func TestAdmissionRefusesSubmitsOverTheCap(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		ctx := context.Background()
		b := setup(t, f)
		b.handle(t, "noop", noop)
		// Another process sharing the store sets the cap: the submitting
		// scheduler applies it from its next submit on.
		admin, err := plait.New(b.store, plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		require.NoError(t, err)
		acme := plait.AdmissionScope{Tenant: "acme"}
		require.NoError(t, admin.AdmissionSet(ctx, plait.AdmissionSetParams{AdmissionScope: acme, MaxPending: 2}))

		two := plait.NewWorkflow("two").Task("a", "noop", nil).Task("b", "noop", nil, plait.After("a"))
		one := plait.NewWorkflow("one").Task("a", "noop", nil)
		first := b.submit(t, two, plait.ForTenant("acme"), plait.WithRunKey("k1"))
		_, err = b.s.Submit(ctx, one, plait.ForTenant("acme"))
		require.ErrorIs(t, err, plait.ErrAdmission)
		var ae *plait.AdmissionError
		require.True(t, errors.As(err, &ae))
		require.Equal(t, plait.AdmissionError{Tenant: "acme", MaxPending: 2, Pending: 2, Tasks: 1}, *ae)
		require.ErrorContains(t, err, `tenant "acme" has 2 pending tasks`)

		again := b.submit(t, two, plait.ForTenant("acme"), plait.WithRunKey("k1"))
		require.Equal(t, first.ID, again.ID, "a taken run key answers its run, at the cap")

		runs, err := b.s.SubmitMany(ctx, []plait.Submission{
			{Workflow: one, Options: []plait.SubmitOption{plait.ForTenant("acme")}},
			{Workflow: one, Options: []plait.SubmitOption{plait.ForTenant("other")}},
		})
		require.ErrorIs(t, err, plait.ErrAdmission)
		require.ErrorContains(t, err, "submission 0")
		require.Len(t, runs, 2)
		require.Nil(t, runs[0], "the run over the cap is refused")
		require.NotNil(t, runs[1], "the other tenant's run is created")

		got, err := admin.AdmissionGet(ctx, plait.AdmissionGetParams{AdmissionScope: acme})
		require.NoError(t, err)
		require.Equal(t, &plait.AdmissionGetResult{MaxPending: 2, Pending: 2, PendingShardMax: 2}, got)

		b.start(t)
		require.Equal(t, plait.RunCompleted, b.wait(t, first.ID).Status)
		got, err = admin.AdmissionGet(ctx, plait.AdmissionGetParams{AdmissionScope: acme})
		require.NoError(t, err)
		require.Zero(t, got.Pending, "the run's tasks left the count as they ended")
		b.submit(t, one, plait.ForTenant("acme"))

		require.ErrorIs(t, admin.AdmissionSet(ctx, plait.AdmissionSetParams{AdmissionScope: plait.AdmissionScope{Queue: "q", Tenant: "acme"}, MaxPending: 1}), plait.ErrInvalidArgument)
	})
}

func TestAdmissionUnsupportedWithoutTheCapability(t *testing.T) {
	t.Parallel()
	s, err := plait.New(coreOnly{newMemStore(t)})
	require.NoError(t, err)
	err = s.AdmissionSet(context.Background(), plait.AdmissionSetParams{AdmissionScope: plait.AdmissionScope{Queue: "q"}, MaxPending: 1})
	require.ErrorIs(t, err, plait.ErrUnsupported)
	_, err = s.AdmissionGet(context.Background(), plait.AdmissionGetParams{AdmissionScope: plait.AdmissionScope{Queue: "q"}})
	var ue *plait.UnsupportedError
	require.True(t, errors.As(err, &ue))
	require.Equal(t, "AdmissionStore", ue.Capability)
}
