package redisstore_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// TestRunSpecGetNamesADroppedPayload: a long payload of a small run lives
// in a key of its own, dropped when its task succeeds; RunSpecGet then
// answers it nil and names the task in PayloadsDropped, and keeps the
// payload of a task that failed.
func TestRunSpecGetNamesADroppedPayload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newMiniredisHarness(t)
	long := bytes.Repeat([]byte("a long payload "), 20)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{
		{Name: "ok", Handler: "h", Payload: long},
		{Name: "failed", Handler: "h", Payload: long},
	}}
	r, err := h.Store.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
	require.NoError(t, err)
	res, err := h.Store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 2, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, res.Tasks, 2)
	var outs []store.TaskOutcome
	for _, ct := range res.Tasks {
		o := store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}
		if ct.Lease.Task == "failed" {
			o.Outcome, o.Error = store.OutcomeFailed, "boom"
		}
		outs = append(outs, o)
	}
	_, err = h.Store.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: outs})
	require.NoError(t, err)
	got, err := h.Store.(store.RunSpecStore).RunSpecGet(ctx, &store.RunSpecGetParams{ID: r.Run.ID, Payloads: true})
	require.NoError(t, err)
	require.Equal(t, []string{"ok"}, got.PayloadsDropped)
	require.Nil(t, got.Spec.Tasks[0].Payload)
	require.Equal(t, long, got.Spec.Tasks[1].Payload)
}
