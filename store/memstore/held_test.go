package memstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
)

func TestRunNum(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]uint64{"1": 1, "42": 42, "1025": 1025, "9223372036854775807": 9223372036854775807} {
		n, ok := runNum(id)
		require.True(t, ok, id)
		require.Equal(t, want, n, id)
	}
	for _, id := range []string{"", "0", "07", "-1", "1a", "a1", "1 ", "12345678901234567890"} {
		_, ok := runNum(id)
		require.False(t, ok, "%q names no run of this store", id)
	}
}

// The held table answers a lease exactly as the maps do: leases of runs
// whose numbers share a slot, of two tasks of one run, a stale epoch, a
// run id spelled with a leading zero and a task name of another task all
// get the answers of the lookup in the maps, and the table holds nothing
// once the leases are gone.
func TestHeldTableAnswersAsTheMaps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestStore(t)
	for i := 0; i < heldSlots+1; i++ {
		tasks := []store.TaskSpec{{Name: "a", Handler: "h"}}
		if i == 0 {
			tasks = append(tasks, store.TaskSpec{Name: "b", Handler: "h"})
		}
		_, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: &store.WorkflowSpec{Name: "wf", Tasks: tasks}})
		require.NoError(t, err)
	}
	res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: heldSlots + 2, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, res.Tasks, heldSlots+2)
	byLease := map[string]store.Lease{}
	for _, ct := range res.Tasks {
		byLease[ct.Lease.RunID+"/"+ct.Lease.Task] = ct.Lease
	}
	first, second, other := byLease["1/a"], byLease["1/b"], byLease["1025/a"]
	require.NotEmpty(t, first.RunID)
	require.NotEmpty(t, other.RunID)

	finish := func(l store.Lease) error {
		out, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{{Lease: l, Outcome: store.OutcomeSucceeded}}})
		require.NoError(t, err)
		return out[0].Err
	}
	stale := first
	stale.Epoch++
	require.ErrorIs(t, finish(stale), store.ErrStaleEpoch)
	padded := first
	padded.RunID = "01"
	require.ErrorIs(t, finish(padded), store.ErrNotFound)
	wrongTask := other
	wrongTask.Task = "b"
	require.ErrorIs(t, finish(wrongTask), store.ErrNotFound)
	for _, l := range []store.Lease{first, other, second} {
		require.NoError(t, finish(l), "%s/%s", l.RunID, l.Task)
		require.True(t, errors.Is(finish(l), store.ErrStaleEpoch), "finished once only")
	}
	for _, ct := range res.Tasks {
		_ = finish(ct.Lease)
	}
	require.Zero(t, s.perRunEntries()["held"], "a slot kept a task whose lease is gone")
}
