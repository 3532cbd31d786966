package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// prioTask returns a task at priority p.
func prioTask(name string, p store.Priority) store.TaskSpec {
	ts := task(name)
	ts.Priority = p
	return ts
}

// testFairClaimer is the suite of [store.FairClaimer].
func testFairClaimer(t *testing.T, newHarness func(t *testing.T) *Harness) {
	claimShares := func(t *testing.T, h *Harness, limit int, shares []int) []string {
		t.Helper()
		res, err := h.Store.TaskClaim(bg, &store.TaskClaimParams{WorkerID: "w", Limit: limit, LeaseDuration: time.Minute, Shares: shares})
		require.NoError(t, err)
		var names []string
		for _, ct := range res.Tasks {
			names = append(names, ct.Lease.Task)
		}
		return names
	}
	setup := func(t *testing.T, h *Harness) {
		t.Helper()
		createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue,
			prioTask("u1", store.PriorityUrgent), prioTask("u2", store.PriorityUrgent), prioTask("u3", store.PriorityUrgent),
			prioTask("n1", store.PriorityNormal),
			prioTask("l1", store.PriorityLow), prioTask("l2", store.PriorityLow))})
	}
	runCases(t, newHarness, []testCase{
		{
			name: "SharesFirst",
			rule: "a claim with shares takes each level's share first, urgent first and oldest first within a level, then fills the rest in strict priority order",
			run: func(t *testing.T, h *Harness, rule string) {
				setup(t, h)
				require.Equal(t, []string{"u1", "l1", "u2"}, claimShares(t, h, 3, []int{1, 0, 0, 1}), rule)
				require.Equal(t, []string{"l2", "u3", "n1"}, claimShares(t, h, 5, []int{0, 0, 0, 4}), rule)
			},
		},
		{
			name: "NilSharesStrict",
			rule: "a claim without shares is strict: urgent before normal before low",
			run: func(t *testing.T, h *Harness, rule string) {
				setup(t, h)
				require.Equal(t, []string{"u1", "u2", "u3", "n1"}, claimShares(t, h, 4, nil), rule)
			},
		},
		{
			name: "BadShares",
			rule: "shares other than four counts of at least zero are an invalid argument",
			run: func(t *testing.T, h *Harness, rule string) {
				for _, bad := range [][]int{{1, 2, 3}, {1, 1, -1, 1}} {
					_, err := h.Store.TaskClaim(bg, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute, Shares: bad})
					require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
				}
			},
		},
	})
}
