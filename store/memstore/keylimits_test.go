package memstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// TestRateKeysForgotten: a rate key nobody starts again is forgotten once
// its window has passed, so keys (one per customer, say) do not pile up.
func TestRateKeysForgotten(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newTestStore(t, WithClock(clk))
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "t", Handler: "h", Queue: store.DefaultQueue,
			Limits: []store.TaskLimit{{Key: fmt.Sprintf("customer-%d", i), Rate: 5, Per: time.Second}}}}}
		_, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
	}
	res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, res.Tasks, 3)
	require.Len(t, s.limits, 3, "each key remembers its start")
	clk.Advance(time.Second)
	_, err = s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Empty(t, s.limits, "keys whose window passed are forgotten")
	require.Empty(t, s.rateExpiry)
}
