package memstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
)

// Answers of one claim share a block: each payload must still be its
// holder's own, so writing into one, or appending to it, leaves the
// others and the store as they were.
func TestClaimAnswersDoNotShareBytes(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	wf := &store.WorkflowSpec{Name: "wf", Strategy: store.StrategyContinue, Tasks: []store.TaskSpec{
		{Name: "a", Handler: "h", Payload: []byte("aaaa")},
		{Name: "b", Handler: "h", Payload: []byte("bbbb")},
		{Name: "c", Handler: "h", Payload: []byte{}},
	}}
	_, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
	require.NoError(t, err)
	res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 3, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, res.Tasks, 3)
	payload := map[string][]byte{}
	for _, ct := range res.Tasks {
		payload[ct.Spec.Name] = ct.Spec.Payload
	}
	require.NotNil(t, payload["c"], "an empty payload stays empty, not nil")
	_ = append(payload["a"], "XXXX"...)
	payload["c"] = append(payload["c"], 'Z')
	require.Equal(t, "bbbb", string(payload["b"]), "an append to one answer's payload reached the next")
	payload["b"][0] = 'Y'
	require.NotSame(t, res.Tasks[0], res.Tasks[1])

	// The store's copy is untouched: the same task claimed again after a
	// release carries its payload as submitted.
	out, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{
		{Lease: res.Tasks[0].Lease, Outcome: store.OutcomeReleased},
		{Lease: res.Tasks[1].Lease, Outcome: store.OutcomeReleased},
	}})
	require.NoError(t, err)
	require.NoError(t, out[0].Err)
	require.NoError(t, out[1].Err)
	again, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 3, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, again.Tasks, 2)
	for _, ct := range again.Tasks {
		require.Equal(t, ct.Spec.Name+ct.Spec.Name+ct.Spec.Name+ct.Spec.Name, string(ct.Spec.Payload))
	}
}
