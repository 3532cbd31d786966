package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// finishClaim calls TaskFinishClaim with the given outcomes and claim
// arguments and requires the call itself to succeed.
func finishClaim(t *testing.T, h *Harness, outcomes []store.TaskOutcome, c store.TaskClaimParams) *store.TaskFinishClaimResult {
	t.Helper()
	res, err := h.Store.TaskFinishClaim(bg, &store.TaskFinishClaimParams{
		Finish: store.TaskFinishParams{WorkerID: c.WorkerID, Outcomes: outcomes},
		Claim:  c,
	})
	require.NoError(t, err, "TaskFinishClaim must succeed as a call")
	require.NotNil(t, res, "TaskFinishClaim must answer")
	require.Len(t, res.Finished, len(outcomes), "TaskFinishClaim answers once per outcome")
	return res
}

func testFinishClaim(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, append(parentsLeftCases(), []testCase{
		{
			name: "ClaimsReleased",
			rule: "a finish with a claim picks up the child it released in the same call, with a fresh lease, attempt 1 and the parents' results",
			run: func(t *testing.T, h *Harness, rule string) {
				b := task("b", "a")
				b.Payload = []byte("payload-of-b")
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), b)})
				ct := claimOne(t, h, "a", rule)
				h.Advance(time.Second)
				now := h.Now()
				res := finishClaim(t, h,
					[]store.TaskOutcome{{Lease: ct.Lease, Outcome: store.OutcomeSucceeded, Result: []byte("A")}},
					store.TaskClaimParams{WorkerID: "w-2", Limit: 10, LeaseDuration: 20 * time.Second})
				require.NoError(t, res.Finished[0].Err, rule)
				require.Equal(t, store.RunRunning, res.Finished[0].RunStatus, rule)
				require.NotNil(t, res.Claimed, rule)
				sameTime(t, now, res.Claimed.Now, rule)
				require.Len(t, res.Claimed.Tasks, 1, rule)
				got := res.Claimed.Tasks[0]
				require.Equal(t, store.Lease{RunID: r.ID, Task: "b", Epoch: 1}, got.Lease, rule)
				sameTime(t, now.Add(20*time.Second), got.LeaseUntil, rule)
				require.Equal(t, 1, got.Attempt, rule)
				sameTime(t, now, got.FirstStartedAt, rule)
				require.Equal(t, map[string][]byte{"a": []byte("A")}, got.ParentResults, rule)
				require.Equal(t, "h-b", got.Spec.Handler, rule)
				require.Equal(t, []byte("payload-of-b"), got.Spec.Payload, rule)
				require.Equal(t, []store.Dep{{Task: "a", On: store.OnSuccess}}, got.Spec.Deps, rule)

				run := getRun(t, h, r.ID)
				require.Equal(t, store.TaskSucceeded, run.Task("a").Status, rule)
				require.Len(t, run.Task("a").Attempts, 1, rule)
				tb := run.Task("b")
				require.Equal(t, store.TaskRunning, tb.Status, rule)
				require.Equal(t, "w-2", tb.Worker, rule)
				require.Equal(t, int64(1), tb.Epoch, rule)
				claimNone(t, h, rule)

				// The lease handed out by the call holds like any other.
				res = finishClaim(t, h, []store.TaskOutcome{{Lease: got.Lease, Outcome: store.OutcomeSucceeded}},
					store.TaskClaimParams{WorkerID: "w-2", Limit: 10, LeaseDuration: time.Minute})
				require.NoError(t, res.Finished[0].Err, rule)
				require.Equal(t, store.RunCompleted, res.Finished[0].RunStatus, rule)
				require.NotNil(t, res.Claimed, rule)
				require.Empty(t, res.Claimed.Tasks, rule)
				require.True(t, res.Claimed.NextDueAt.IsZero(), rule)
			},
		},
		{
			name: "ClaimOrder",
			rule: "the claim of a finish-claim follows the claim order: older ready work before the child just released, at most Limit tasks",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				ct := claimOne(t, h, "a", rule)
				h.Advance(time.Millisecond)
				older := createRun(t, h, nil)
				res := finishClaim(t, h, []store.TaskOutcome{{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}},
					store.TaskClaimParams{WorkerID: defaultWorker, Limit: 1, LeaseDuration: defaultLease})
				require.NoError(t, res.Finished[0].Err, rule)
				require.Len(t, res.Claimed.Tasks, 1, rule)
				require.Equal(t, store.Lease{RunID: older.ID, Task: "a", Epoch: 1}, res.Claimed.Tasks[0].Lease, rule)
				claimOne(t, h, "b", rule)
			},
		},
		{
			name: "FinishOnly",
			rule: "a finish-claim with Limit 0 only finishes: Claimed is nil and the released child waits for a claim",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				ct := claimOne(t, h, "a", rule)
				res := finishClaim(t, h, []store.TaskOutcome{{Lease: ct.Lease, Outcome: store.OutcomeSucceeded, Result: []byte("A")}},
					store.TaskClaimParams{WorkerID: defaultWorker})
				require.NoError(t, res.Finished[0].Err, rule)
				require.Nil(t, res.Claimed, rule)
				require.Equal(t, store.TaskReady, taskOf(t, h, r.ID, "b").Status, rule)
				got := claimOne(t, h, "b", rule)
				require.Equal(t, map[string][]byte{"a": []byte("A")}, got.ParentResults, rule)
			},
		},
		{
			name: "StaleStillClaims",
			rule: "each outcome of a finish-claim is answered on its own (stale, unknown run, unknown outcome) and the claim happens regardless",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				ct := claimOne(t, h, "a", rule)
				stale := ct.Lease
				stale.Epoch++
				res := finishClaim(t, h, []store.TaskOutcome{
					{Lease: stale, Outcome: store.OutcomeSucceeded},
					{Lease: store.Lease{RunID: "999999999", Task: "a", Epoch: 1}, Outcome: store.OutcomeSucceeded},
					{Lease: ct.Lease, Outcome: store.Outcome(99)},
					{Lease: ct.Lease, Outcome: store.OutcomeSucceeded},
					{Lease: ct.Lease, Outcome: store.OutcomeSucceeded},
				}, store.TaskClaimParams{WorkerID: defaultWorker, Limit: 10, LeaseDuration: defaultLease})
				require.ErrorIs(t, res.Finished[0].Err, store.ErrStaleEpoch, rule)
				require.Equal(t, store.RunRunning, res.Finished[0].RunStatus, rule)
				require.ErrorIs(t, res.Finished[1].Err, store.ErrNotFound, rule)
				require.ErrorIs(t, res.Finished[2].Err, store.ErrInvalidArgument, rule)
				require.NoError(t, res.Finished[3].Err, rule)
				require.ErrorIs(t, res.Finished[4].Err, store.ErrStaleEpoch, rule, "a repeated outcome applies once")
				require.Len(t, res.Claimed.Tasks, 1, rule)
				require.Equal(t, "b", res.Claimed.Tasks[0].Lease.Task, rule)

				// Only stale outcomes: the claim still takes ready work.
				other := createRun(t, h, nil)
				res = finishClaim(t, h, []store.TaskOutcome{{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}},
					store.TaskClaimParams{WorkerID: defaultWorker, Limit: 10, LeaseDuration: defaultLease})
				require.ErrorIs(t, res.Finished[0].Err, store.ErrStaleEpoch, rule)
				require.Len(t, res.Claimed.Tasks, 1, rule)
				require.Equal(t, store.Lease{RunID: other.ID, Task: "a", Epoch: 1}, res.Claimed.Tasks[0].Lease, rule)
				require.Equal(t, store.TaskSucceeded, taskOf(t, h, r.ID, "a").Status, rule)
			},
		},
		{
			name: "Retry",
			rule: "a finish-claim can hand a retry with no delay straight back to the claim, with the next attempt number",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, nil)
				ct := claimOne(t, h, "a", rule)
				res := finishClaim(t, h, []store.TaskOutcome{{Lease: ct.Lease, Outcome: store.OutcomeRetry, Error: "again"}},
					store.TaskClaimParams{WorkerID: defaultWorker, Limit: 10, LeaseDuration: defaultLease})
				require.NoError(t, res.Finished[0].Err, rule)
				require.Len(t, res.Claimed.Tasks, 1, rule)
				got := res.Claimed.Tasks[0]
				require.Equal(t, "a", got.Lease.Task, rule)
				require.Equal(t, int64(2), got.Lease.Epoch, rule)
				require.Equal(t, 2, got.Attempt, rule)
			},
		},
		{
			name: "InvalidClaim",
			rule: "a finish-claim whose claim arguments cannot be acted on returns ErrInvalidArgument and finishes nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				ct := claimOne(t, h, "a", rule)
				for _, c := range []store.TaskClaimParams{
					{WorkerID: defaultWorker, Limit: 1},
					{WorkerID: defaultWorker, Limit: 1, LeaseDuration: -time.Second},
				} {
					res, err := h.Store.TaskFinishClaim(bg, &store.TaskFinishClaimParams{
						Finish: store.TaskFinishParams{WorkerID: defaultWorker, Outcomes: []store.TaskOutcome{{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}}},
						Claim:  c,
					})
					require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
					require.Nil(t, res, rule)
				}
				ti := taskOf(t, h, r.ID, "a")
				require.Equal(t, store.TaskRunning, ti.Status, rule)
				require.Equal(t, int64(1), ti.Epoch, rule)
				succeed(t, h, ct.Lease, "", rule)
			},
		},
	}...))
}
