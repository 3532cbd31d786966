package storetest

import (
	"strings"
	"testing"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// leasesOf lists the leases of a claim's answer, by task name.
func leasesOf(res *store.TaskClaimResult) map[string]store.Lease {
	out := map[string]store.Lease{}
	for _, ct := range res.Tasks {
		out[ct.Lease.Task] = ct.Lease
	}
	return out
}

func testRequests(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "ClaimSentAgain",
			rule: "a claim sent again with the same RequestID answers the tasks the first one claimed, with the same leases and payloads, and claims nothing new",
			run: func(t *testing.T, h *Harness, rule string) {
				wf := spec(store.StrategyContinue, task("a"), task("b"), task("c"))
				wf.Tasks[0].Payload = []byte("pa")
				createRun(t, h, &runOpts{Workflow: wf})
				first := claim(t, h, &claimOpts{Limit: 2, RequestID: "req-1"})
				require.Len(t, first.Tasks, 2, rule)
				again := claim(t, h, &claimOpts{Limit: 2, RequestID: "req-1"})
				require.Equal(t, leasesOf(first), leasesOf(again), rule)
				for _, ct := range again.Tasks {
					if ct.Lease.Task == "a" {
						require.Equal(t, []byte("pa"), ct.Spec.Payload, rule)
					}
					require.Equal(t, 1, ct.Attempt, rule)
				}
				rest := claim(t, h, &claimOpts{RequestID: "req-2"})
				require.Len(t, rest.Tasks, 1, rule)
				require.NotContains(t, leasesOf(first), rest.Tasks[0].Lease.Task, rule)
			},
		},
		{
			name: "ClaimSentAgainAfterAFinish",
			rule: "a claim sent again answers only the tasks its leases still hold",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"))})
				first := leasesOf(claim(t, h, &claimOpts{RequestID: "req-1"}))
				require.Len(t, first, 2, rule)
				succeed(t, h, first["a"], "ok", rule)
				again := leasesOf(claim(t, h, &claimOpts{RequestID: "req-1"}))
				require.Equal(t, map[string]store.Lease{"b": first["b"]}, again, rule)
			},
		},
		{
			name: "FinishClaimSentAgain",
			rule: "a TaskFinishClaim sent again with the same RequestID answers its outcomes as first applied, not as stale, and the same claimed tasks",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"), task("c", "a"))})
				a := claimOne(t, h, "a", rule)
				params := &store.TaskFinishClaimParams{
					Finish: store.TaskFinishParams{WorkerID: defaultWorker, Outcomes: []store.TaskOutcome{{Lease: a.Lease, Outcome: store.OutcomeSucceeded, Result: []byte("ra")}}},
					Claim:  store.TaskClaimParams{WorkerID: defaultWorker, Limit: 1, LeaseDuration: defaultLease, RequestID: "req-fc"},
				}
				first, err := h.Store.TaskFinishClaim(bg, params)
				require.NoError(t, err, rule)
				require.NoError(t, first.Finished[0].Err, rule)
				require.Len(t, first.Claimed.Tasks, 1, rule)
				again, err := h.Store.TaskFinishClaim(bg, params)
				require.NoError(t, err, rule)
				require.Len(t, again.Finished, 1, rule)
				require.NoError(t, again.Finished[0].Err, rule)
				require.Equal(t, first.Finished[0].RunStatus, again.Finished[0].RunStatus, rule)
				require.Equal(t, leasesOf(first.Claimed), leasesOf(again.Claimed), rule)
				require.Equal(t, map[string][]byte{"a": []byte("ra")}, again.Claimed.Tasks[0].ParentResults, rule)
				ta := taskOf(t, h, r.ID, "a")
				require.Len(t, ta.Attempts, 1, rule)
				require.Len(t, claim(t, h, nil).Tasks, 1, rule)
			},
		},
		{
			name: "InvalidRequestID",
			rule: "a RequestID longer than 64 bytes or outside [A-Za-z0-9._-] is an invalid argument",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, nil)
				for _, id := range []string{"has space", "brace{", strings.Repeat("x", 65)} {
					_, err := h.Store.TaskClaim(bg, &store.TaskClaimParams{WorkerID: defaultWorker, Limit: 1, LeaseDuration: defaultLease, RequestID: id})
					require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
				}
				require.Len(t, claim(t, h, &claimOpts{RequestID: strings.Repeat("x", 64)}).Tasks, 1, rule)
			},
		},
	})
}

func testResultLimit(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "OversizeResultRefusedAlone",
			rule: "a result over the store's limit is refused for its outcome alone with ErrResultTooLarge, its lease still holding, and the rest of the batch applies",
			run: func(t *testing.T, h *Harness, rule string) {
				if h.Caps.MaxResultBytes <= 0 {
					t.Skip("needs Caps.MaxResultBytes")
				}
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"), task("c"))})
				got := claimNames(t, h)
				require.Len(t, got, 3, rule)
				res, err := h.Store.TaskFinish(bg, &store.TaskFinishParams{WorkerID: defaultWorker, Outcomes: []store.TaskOutcome{
					{Lease: got["a"].Lease, Outcome: store.OutcomeSucceeded, Result: []byte("small")},
					{Lease: got["b"].Lease, Outcome: store.OutcomeSucceeded, Result: make([]byte, h.Caps.MaxResultBytes+1)},
					{Lease: got["c"].Lease, Outcome: store.OutcomeSucceeded, Result: make([]byte, h.Caps.MaxResultBytes)},
				}})
				require.NoError(t, err, rule)
				require.NoError(t, res[0].Err, rule)
				require.ErrorIs(t, res[1].Err, store.ErrResultTooLarge, rule)
				require.NoError(t, res[2].Err, rule)
				require.Equal(t, map[string]store.TaskStatus{"a": store.TaskSucceeded, "b": store.TaskRunning, "c": store.TaskSucceeded}, statuses(t, h, r.ID), rule)
				ext, err := h.Store.LeaseExtend(bg, &store.LeaseExtendParams{WorkerID: defaultWorker, Leases: []store.Lease{got["b"].Lease}, Duration: defaultLease})
				require.NoError(t, err, rule)
				require.NoError(t, ext[0].Err, rule)
				failTask(t, h, got["b"].Lease, "result too large", rule)
			},
		},
	})
}
