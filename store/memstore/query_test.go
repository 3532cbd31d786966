package memstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// Retention follows the most specific rule, and once every finished run is
// past it the indexes, counts and expiry lists are back to where an empty
// store starts: memory returns to its baseline on the fake clock.
func TestRetentionPerStatusAndServiceReturnsToBaseline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s := newTestStore(t, WithClock(clk), WithRetention(time.Hour),
		WithRetentionFor("", store.RunCancelled, time.Minute),
		WithRetentionFor("audit", "", 10*time.Hour),
		WithRetentionFor("audit", store.RunCancelled, time.Hour))
	baseIndexes, baseEntries, baseExpiry := s.indexSizes()
	require.Zero(t, baseIndexes+baseEntries+baseExpiry)

	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}}}
	create := func(service string) string {
		res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf, Service: service, Tenant: "t"})
		require.NoError(t, err)
		return res.Run.ID
	}
	cancel := func(id string) {
		_, err := s.RunCancel(ctx, &store.RunCancelParams{ID: id})
		require.NoError(t, err)
	}
	cancelled := create("mail")    // a status rule: one minute
	auditCancel := create("audit") // service and status rule: an hour
	auditDone := create("audit")   // a service rule: ten hours
	cancel(cancelled)
	cancel(auditCancel)
	claimed, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed.Tasks, 1)
	require.Equal(t, auditDone, claimed.Tasks[0].Lease.RunID)
	res, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{{Lease: claimed.Tasks[0].Lease, Outcome: store.OutcomeSucceeded}}})
	require.NoError(t, err)
	require.Equal(t, store.RunCompleted, res[0].RunStatus)

	alive := func() []string {
		out := []string{}
		for _, id := range []string{cancelled, auditCancel, auditDone} {
			if _, err := s.RunGet(ctx, &store.RunGetParams{ID: id}); err == nil {
				out = append(out, id)
			}
		}
		return out
	}
	clk.Advance(time.Minute + time.Millisecond)
	require.Equal(t, []string{auditCancel, auditDone}, alive(), "a cancelled run goes after the status rule's minute")
	clk.Advance(time.Hour)
	require.Equal(t, []string{auditDone}, alive(), "the service and status rule's hour wins over the service's")
	clk.Advance(9 * time.Hour)
	require.Equal(t, []string{}, alive(), "the service rule's ten hours")

	indexes, entries, expiry := s.indexSizes()
	require.Equal(t, []int{baseIndexes, baseEntries, baseExpiry}, []int{indexes, entries, expiry})
	counts, err := s.RunCount(ctx, &store.RunCountParams{})
	require.NoError(t, err)
	require.Empty(t, counts.Counts)
}

// An index is compacted once most of its entries are of removed runs, so a
// long-lived store does not keep a pointer per run it ever had.
func TestIndexCompactsRemovedRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s := newTestStore(t, WithClock(clk), WithRetention(time.Minute))
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}}}
	var keep string
	for i := 0; i < 100; i++ {
		res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
		if i == 50 {
			keep = res.Run.ID
			continue
		}
		_, err = s.RunCancel(ctx, &store.RunCancelParams{ID: res.Run.ID})
		require.NoError(t, err)
	}
	clk.Advance(2 * time.Minute)
	pr, err := s.RunPrune(ctx, &store.RunPruneParams{Limit: 1})
	require.NoError(t, err)
	require.Equal(t, 99, pr.Pruned)
	_, entries, _ := s.indexSizes()
	require.LessOrEqual(t, entries, 2*2, "one live run in two indexes, at most as many removed ones")
	page, err := s.RunList(ctx, &store.RunListParams{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Runs, 1)
	require.Equal(t, keep, page.Runs[0].ID)
}
