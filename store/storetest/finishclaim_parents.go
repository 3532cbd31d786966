package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// parentsLeftCases pin TaskFinishClaimResult.ParentsLeft, the hint a
// worker keeps its batches small by while a join is about to be ready.
func parentsLeftCases() []testCase {
	return []testCase{
		{
			name: "ParentsLeft",
			rule: "a finish-claim answers the fewest parents a join its outcomes fed still waits on, 0 once none waits, and leaves out joins on any parent",
			run: func(t *testing.T, h *Harness, rule string) {
				anyOf := task("any", "a", "b", "c")
				anyOf.Join = store.JoinAny
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue,
					task("a"), task("b"), task("c"), task("j3", "a", "b", "c"), task("j2", "b", "c"), anyOf)})
				got := claim(t, h, &claimOpts{Limit: 3})
				require.Len(t, got.Tasks, 3, rule)
				leases := map[string]store.Lease{}
				for _, ct := range got.Tasks {
					leases[ct.Lease.Task] = ct.Lease
				}
				finish := func(name string, limit int) *store.TaskFinishClaimResult {
					return finishClaim(t, h, []store.TaskOutcome{{Lease: leases[name], Outcome: store.OutcomeSucceeded}},
						store.TaskClaimParams{WorkerID: defaultWorker, Limit: limit, LeaseDuration: time.Minute})
				}
				// a feeds j3 (2 left) and "any", which a makes ready.
				res := finish("a", 0)
				require.NoError(t, res.Finished[0].Err, rule)
				require.Equal(t, 2, res.ParentsLeft, rule)
				// b feeds j3 (1 left) and j2 (1 left); the claim takes "any".
				res = finish("b", 10)
				require.NoError(t, res.Finished[0].Err, rule)
				require.Equal(t, 1, res.ParentsLeft, rule)
				// c makes both joins ready: nothing waits.
				res = finish("c", 10)
				require.NoError(t, res.Finished[0].Err, rule)
				require.Zero(t, res.ParentsLeft, rule)
				require.Len(t, res.Claimed.Tasks, 2, rule)
			},
		},
	}
}
