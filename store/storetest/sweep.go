package storetest

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

func testSweep(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "Requeue",
			rule: "an expired lease goes back to ready with crashes+1, the epoch bumped, the attempt unchanged and a crashed attempt record",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				claimedAt := h.Now()
				ct := claimOne(t, h, "a", rule)
				h.Advance(defaultLease + time.Millisecond)
				res := sweep(t, h, 10, 3)
				require.Equal(t, []store.Lease{ct.Lease}, res.Requeued, rule)
				require.Empty(t, res.Dead, rule)
				require.False(t, res.More, rule)

				ti := taskOf(t, h, r.ID, "a")
				require.Equal(t, store.TaskReady, ti.Status, rule)
				require.Equal(t, 1, ti.Crashes, rule)
				require.Equal(t, int64(2), ti.Epoch, rule)
				require.Equal(t, 1, ti.Attempt, rule)
				require.Len(t, ti.Attempts, 1, rule)
				require.Equal(t, "crashed", ti.Attempts[0].Outcome, rule)
				require.Equal(t, int64(1), ti.Attempts[0].Epoch, rule)
				sameTime(t, claimedAt, ti.Attempts[0].StartedAt, rule)

				require.ErrorIs(t, finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}).Err, store.ErrStaleEpoch, rule)
				again := claimOne(t, h, "a", rule)
				require.Equal(t, 1, again.Attempt, rule)
				require.Equal(t, int64(3), again.Lease.Epoch, rule)
				sameTime(t, claimedAt, again.FirstStartedAt, rule)
				require.Empty(t, sweep(t, h, 10, 3).Requeued, rule)
			},
		},
		{
			name: "NotExpired",
			rule: "a lease is expired only once its deadline has passed; a live lease is left untouched",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				ct := claimOne(t, h, "a", rule)
				h.Advance(defaultLease)
				res := sweep(t, h, 10, 3)
				require.Empty(t, res.Requeued, rule)
				require.Empty(t, res.Dead, rule)
				ti := taskOf(t, h, r.ID, "a")
				require.Equal(t, store.TaskRunning, ti.Status, rule)
				require.Equal(t, int64(1), ti.Epoch, rule)
				require.Zero(t, ti.Crashes, rule)
				succeed(t, h, ct.Lease, "ok", rule)
			},
		},
		{
			name: "FinishedNotSwept",
			rule: "a task that finished is never swept, whatever its old lease deadline",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"))})
				got := claimNames(t, h)
				succeed(t, h, got["a"].Lease, "", rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: got["b"].Lease, Outcome: store.OutcomeRetry, RetryDelay: time.Hour}).Err, rule)
				h.Advance(2 * defaultLease)
				res := sweep(t, h, 10, 0)
				require.Empty(t, res.Requeued, rule)
				require.Empty(t, res.Dead, rule)
				require.Equal(t, map[string]store.TaskStatus{"a": store.TaskSucceeded, "b": store.TaskRetrying}, statuses(t, h, r.ID), rule)
			},
		},
		{
			name: "CrashLimit",
			rule: "a task whose crash count exceeds the crash limit becomes dead, counts as failed and the failure is applied",
			run: func(t *testing.T, h *Harness, rule string) {
				cleanup := task("cleanup")
				cleanup.Deps = []store.Dep{{Task: "a", On: store.OnFailure}}
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"), cleanup)})
				for i := 1; i <= 2; i++ {
					ct := claimOne(t, h, "a", rule)
					h.Advance(defaultLease + time.Millisecond)
					res := sweep(t, h, 10, 1)
					if i == 1 {
						require.Equal(t, []store.Lease{ct.Lease}, res.Requeued, rule)
						require.Empty(t, res.Dead, rule)
						continue
					}
					require.Empty(t, res.Requeued, rule)
					require.Equal(t, []store.Lease{ct.Lease}, res.Dead, rule)
				}
				run := getRun(t, h, r.ID)
				ti := run.Task("a")
				require.Equal(t, store.TaskDead, ti.Status, rule)
				require.Equal(t, 2, ti.Crashes, rule)
				require.Equal(t, 1, ti.Attempt, rule)
				require.Equal(t, "lease lost too many times", ti.Error, rule)
				sameTime(t, h.Now(), ti.EndedAt, rule)
				require.Len(t, ti.Attempts, 2, rule)
				require.Equal(t, 1, run.Failed, rule)
				require.Equal(t, store.TaskSkipped, run.Task("b").Status, rule)
				require.Equal(t, store.TaskReady, run.Task("cleanup").Status, rule)
				require.Equal(t, store.RunFailed, succeed(t, h, claimOne(t, h, "cleanup", rule).Lease, "", rule).RunStatus, rule)
			},
		},
		{
			name: "CrashLimitStop",
			rule: "a dead task under stop fails the run at once",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyStop, task("a"), task("b"))})
				got := claim(t, h, &claimOpts{Limit: 1}).Tasks
				require.Len(t, got, 1, rule)
				h.Advance(defaultLease + time.Millisecond)
				res := sweep(t, h, 10, 0)
				require.Len(t, res.Dead, 1, rule)
				run := getRun(t, h, r.ID)
				require.Equal(t, store.RunFailed, run.Status, rule)
				require.Equal(t, store.TaskDead, run.Task("a").Status, rule)
				require.Equal(t, store.TaskCancelled, run.Task("b").Status, rule)
				claimNone(t, h, rule)
			},
		},
		{
			name: "Limit",
			rule: "a sweep recovers at most Limit leases, earliest deadline first, and sets More when it stopped short",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"), task("c"))})
				var order []store.Lease
				for i := 0; i < 3; i++ {
					res := claim(t, h, &claimOpts{Limit: 1, Lease: time.Duration(3-i) * time.Second})
					require.Len(t, res.Tasks, 1, rule)
					order = append([]store.Lease{res.Tasks[0].Lease}, order...)
				}
				h.Advance(time.Minute)
				res := sweep(t, h, 2, 3)
				require.Equal(t, order[:2], res.Requeued, rule)
				require.True(t, res.More, rule)
				res = sweep(t, h, 2, 3)
				require.Equal(t, order[2:], res.Requeued, rule)
				require.False(t, res.More, rule)
			},
		},
		{
			name: "ConcurrentSweepers",
			rule: "many sweepers at once recover each expired lease exactly once",
			run: func(t *testing.T, h *Harness, rule string) {
				const n = 40
				var tasks []store.TaskSpec
				for i := 0; i < n; i++ {
					tasks = append(tasks, task("t"+strconv.Itoa(i)))
				}
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, tasks...)})
				require.Len(t, claim(t, h, nil).Tasks, n, rule)
				h.Advance(defaultLease + time.Millisecond)

				var mu sync.Mutex
				seen := map[string]int{}
				var wg sync.WaitGroup
				errs := make(chan error, 8)
				for w := 0; w < 8; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							res, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 3, CrashLimit: 3})
							if err != nil {
								errs <- err
								return
							}
							mu.Lock()
							for _, l := range res.Requeued {
								seen[l.Task]++
							}
							mu.Unlock()
							if !res.More && len(res.Requeued) == 0 {
								return
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(t, err, rule)
				}
				require.Len(t, seen, n, rule)
				for name, c := range seen {
					require.Equal(t, 1, c, rule+": "+name)
				}
				for _, ti := range getRun(t, h, r.ID).Tasks {
					require.Equal(t, 1, ti.Crashes, rule)
					require.Equal(t, int64(2), ti.Epoch, rule)
				}
			},
		},
		{
			name: "InvalidArguments",
			rule: "a sweep with a limit below 1 or a negative crash limit returns ErrInvalidArgument",
			run: func(t *testing.T, h *Harness, rule string) {
				_, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 0, CrashLimit: 3})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
				_, err = h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 1, CrashLimit: -1})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
			},
		},
	})
}
