package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
)

// TestLostRunCreateReplyUnderACap: go-redis sends a create whose reply was
// lost again, with the same id; at a cap of one the resend answers the run
// the first try created, keyed or not, and counts it once, as
// run_create's and run_create_many's headers say; a run the first try
// refused is refused again.
func TestLostRunCreateReplyUnderACap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, 3, nil)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "t", Handler: "h", Queue: store.DefaultQueue}}}
	pending := func(sc store.AdmissionScope) int64 {
		t.Helper()
		got, err := e.store.AdmissionGet(ctx, &store.AdmissionGetParams{AdmissionScope: sc})
		require.NoError(t, err)
		return got.Pending
	}
	for _, tenant := range []string{"lost-adm-keyed", "lost-adm-plain", "lost-adm-many"} {
		_, err := e.store.AdmissionSet(ctx, &store.AdmissionSetParams{AdmissionScope: store.AdmissionScope{Tenant: tenant}, MaxPending: 1})
		require.NoError(t, err)
	}

	e.proxy.DropReplyTo("lost-adm-keyed")
	keyed, err := e.store.RunCreate(ctx, &store.RunCreateParams{Workflow: wf, Key: "k1", Tenant: "lost-adm-keyed"})
	require.NoError(t, err, "go-redis sent the create again, and the cap did not refuse it")
	require.Equal(t, 1, e.proxy.Dropped())
	require.False(t, keyed.Existing, "the resend answers the run its first try created, as created")
	require.Equal(t, int64(1), pending(store.AdmissionScope{Tenant: "lost-adm-keyed"}), "counted once")

	e.proxy.DropReplyTo("lost-adm-plain")
	plain, err := e.store.RunCreate(ctx, &store.RunCreateParams{Workflow: wf, Tenant: "lost-adm-plain"})
	require.NoError(t, err)
	require.Equal(t, 2, e.proxy.Dropped())
	require.Equal(t, int64(1), pending(store.AdmissionScope{Tenant: "lost-adm-plain"}), "counted once")

	e.proxy.DropReplyTo("lost-adm-many")
	out, err := e.store.RunCreateMany(ctx, []*store.RunCreateParams{
		{Workflow: wf, Tenant: "lost-adm-many"}, {Workflow: wf, Tenant: "lost-adm-many"},
	})
	require.NoError(t, err)
	require.Equal(t, 3, e.proxy.Dropped())
	require.NoError(t, out[0].Err, "the run the first try created")
	require.ErrorIs(t, out[1].Err, store.ErrAdmission, "the run the first try refused, refused again")
	require.Equal(t, int64(1), pending(store.AdmissionScope{Tenant: "lost-adm-many"}), "counted once")

	claimed, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed.Tasks, 3, "three runs, each queued once")
	ids := map[string]bool{keyed.Run.ID: true, plain.Run.ID: true, out[0].Result.Run.ID: true}
	for _, ct := range claimed.Tasks {
		require.True(t, ids[ct.Lease.RunID], "run %s", ct.Lease.RunID)
	}
}
