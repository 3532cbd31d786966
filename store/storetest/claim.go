package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

func testClaim(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "ClaimFields",
			rule: "a claim makes a task running with epoch 1, attempt 1, its worker, StartedAt now and a lease until now plus LeaseDuration, and starts the run",
			run: func(t *testing.T, h *Harness, rule string) {
				a := task("a")
				a.Payload = []byte(`{"n":1}`)
				a.Requires = []string{"gpu"}
				a.Timeout = time.Minute
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, a)})
				h.Advance(time.Second)
				now := h.Now()
				// A store that routes keeps the task on its routed queue.
				queues := []string{store.DefaultQueue}
				if _, ok := h.Store.(store.ClaimRouter); ok {
					queues = []string{store.RoutedQueue(store.DefaultQueue, a.Requires)}
				}
				res := claim(t, h, &claimOpts{Worker: "w-7", Lease: 20 * time.Second, Queues: queues})
				sameTime(t, now, res.Now, rule)
				require.Len(t, res.Tasks, 1, rule)
				ct := res.Tasks[0]
				require.Equal(t, store.Lease{RunID: r.ID, Task: "a", Epoch: 1}, ct.Lease, rule)
				sameTime(t, now.Add(20*time.Second), ct.LeaseUntil, rule)
				require.Equal(t, 1, ct.Attempt, rule)
				sameTime(t, now, ct.FirstStartedAt, rule)
				require.Empty(t, ct.ParentResults, rule)
				require.Equal(t, "a", ct.Spec.Name, rule)
				require.Equal(t, "h-a", ct.Spec.Handler, rule)
				require.Equal(t, []byte(`{"n":1}`), ct.Spec.Payload, rule)
				require.Equal(t, []string{"gpu"}, ct.Spec.Requires, rule)
				require.Equal(t, time.Minute, ct.Spec.Timeout, rule)
				require.Equal(t, store.DefaultQueue, ct.Spec.Queue, rule)

				got := getRun(t, h, r.ID)
				require.Equal(t, store.RunRunning, got.Status, rule)
				sameTime(t, now, got.StartedAt, rule)
				ti := got.Task("a")
				require.Equal(t, store.TaskRunning, ti.Status, rule)
				require.Equal(t, 1, ti.Attempt, rule)
				require.Equal(t, int64(1), ti.Epoch, rule)
				require.Equal(t, "w-7", ti.Worker, rule)
				sameTime(t, now, ti.StartedAt, rule)
				require.Empty(t, ti.Attempts, rule)
			},
		},
		{
			name: "Empty",
			rule: "a claim with nothing ready returns no task and a zero NextDueAt",
			run: func(t *testing.T, h *Harness, rule string) {
				res := claimNone(t, h, rule)
				require.True(t, res.NextDueAt.IsZero(), rule)
				sameTime(t, h.Now(), res.Now, rule)
				createRun(t, h, nil)
				claimOne(t, h, "a", rule)
				res = claimNone(t, h, rule)
				require.True(t, res.NextDueAt.IsZero(), rule)
			},
		},
		{
			name: "Priorities",
			rule: "a claim serves urgent tasks first, then high, normal and low",
			run: func(t *testing.T, h *Harness, rule string) {
				var tasks []store.TaskSpec
				for _, p := range []store.Priority{store.PriorityLow, store.PriorityNormal, store.PriorityHigh, store.PriorityUrgent} {
					ts := task(p.String())
					ts.Priority = p
					tasks = append(tasks, ts)
				}
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, tasks...)})
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, tasks...)})
				res := claim(t, h, &claimOpts{Limit: 3})
				var got []string
				for _, ct := range res.Tasks {
					got = append(got, ct.Lease.Task)
				}
				require.Equal(t, []string{"urgent", "urgent", "high"}, got, rule)
				got = got[:0]
				for i := 0; i < 5; i++ {
					res := claim(t, h, &claimOpts{Limit: 1})
					require.Len(t, res.Tasks, 1, rule)
					got = append(got, res.Tasks[0].Lease.Task)
				}
				require.Equal(t, []string{"high", "normal", "normal", "low", "low"}, got, rule)
			},
		},
		{
			name: "FIFO",
			rule: "within one priority, tasks are claimed oldest first",
			run: func(t *testing.T, h *Harness, rule string) {
				var ids []string
				for i := 0; i < 6; i++ {
					ids = append(ids, createRun(t, h, nil).ID)
					h.Advance(time.Millisecond)
				}
				res := claim(t, h, &claimOpts{Limit: 2})
				require.Len(t, res.Tasks, 2, rule)
				got := []string{res.Tasks[0].Lease.RunID, res.Tasks[1].Lease.RunID}
				for i := 0; i < 4; i++ {
					res := claim(t, h, &claimOpts{Limit: 1})
					require.Len(t, res.Tasks, 1, rule)
					got = append(got, res.Tasks[0].Lease.RunID)
				}
				require.Equal(t, ids, got, rule)
			},
		},
		{
			name: "Queues",
			rule: "a claim takes only from the queues it names, in the order given within a priority; no queue means the default queue",
			run: func(t *testing.T, h *Harness, rule string) {
				q1, q2 := task("q1"), task("q2")
				q1.Queue, q2.Queue = "one", "two"
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, q1, q2, task("d"))})
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, q1, q2)})

				res := claim(t, h, &claimOpts{Queues: []string{"two", "one"}, Limit: 3})
				require.Len(t, res.Tasks, 3, rule)
				require.Equal(t, []string{"q2", "q2", "q1"}, []string{res.Tasks[0].Lease.Task, res.Tasks[1].Lease.Task, res.Tasks[2].Lease.Task}, rule)
				require.Equal(t, "one", res.Tasks[2].Spec.Queue, rule)
				claimOne(t, h, "d", rule)
				res = claim(t, h, &claimOpts{Queues: []string{"nowhere"}})
				require.Empty(t, res.Tasks, rule)
				res = claim(t, h, &claimOpts{Queues: []string{"one"}})
				require.Len(t, res.Tasks, 1, rule)
				require.Equal(t, "q1", res.Tasks[0].Lease.Task, rule)
			},
		},
		{
			name: "Limit",
			rule: "a claim returns at most Limit tasks",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"), task("c"), task("d"), task("e"))})
				require.Len(t, claim(t, h, &claimOpts{Limit: 2}).Tasks, 2, rule)
				require.Len(t, claim(t, h, &claimOpts{Limit: 2}).Tasks, 2, rule)
				require.Len(t, claim(t, h, &claimOpts{Limit: 2}).Tasks, 1, rule)
			},
		},
		{
			name: "InvalidArguments",
			rule: "a claim with a limit below 1 or a lease that is not positive returns ErrInvalidArgument",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, nil)
				_, err := h.Store.TaskClaim(bg, &store.TaskClaimParams{WorkerID: "w", Limit: 0, LeaseDuration: time.Second})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
				_, err = h.Store.TaskClaim(bg, &store.TaskClaimParams{WorkerID: "w", Limit: 1})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
				claimOne(t, h, "a", rule)
			},
		},
		{
			name: "Extend",
			rule: "extending a held lease moves its deadline to now plus Duration",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, nil)
				ct := claimOne(t, h, "a", rule)
				h.Advance(20 * time.Second)
				res, err := h.Store.LeaseExtend(bg, &store.LeaseExtendParams{WorkerID: defaultWorker, Leases: []store.Lease{ct.Lease}, Duration: time.Minute})
				require.NoError(t, err, rule)
				require.Len(t, res, 1, rule)
				require.NoError(t, res[0].Err, rule)
				sameTime(t, h.Now().Add(time.Minute), res[0].Until, rule)
				h.Advance(time.Minute)
				sw := sweep(t, h, 10, 3)
				require.Empty(t, sw.Requeued, rule)
				succeed(t, h, ct.Lease, "ok", rule)
			},
		},
		{
			name: "StaleFinish",
			rule: "a stale epoch must not complete a task",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				first := claimOne(t, h, "a", rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: first.Lease, Outcome: store.OutcomeReleased}).Err, rule)
				second := claimOne(t, h, "a", rule)
				require.Equal(t, int64(3), second.Lease.Epoch, rule)
				for _, o := range []store.Outcome{store.OutcomeSucceeded, store.OutcomeRetry, store.OutcomeFailed, store.OutcomeReleased} {
					res := finish(t, h, store.TaskOutcome{Lease: first.Lease, Outcome: o, Result: []byte("stale")})
					require.ErrorIs(t, res.Err, store.ErrStaleEpoch, rule)
				}
				ti := taskOf(t, h, r.ID, "a")
				require.Equal(t, store.TaskRunning, ti.Status, rule)
				require.Equal(t, int64(3), ti.Epoch, rule)
				require.Len(t, ti.Attempts, 1, rule)
				succeed(t, h, second.Lease, "fresh", rule)
				require.Equal(t, []byte("fresh"), taskOf(t, h, r.ID, "a").Result, rule)
			},
		},
		{
			name: "FinishTwice",
			rule: "a finish that already applied answers ErrStaleEpoch the second time and never applies twice",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"))})
				ct := claimNames(t, h)["a"]
				require.NotNil(t, ct, rule)
				succeed(t, h, ct.Lease, "one", rule)
				res := finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded, Result: []byte("two")})
				require.ErrorIs(t, res.Err, store.ErrStaleEpoch, rule)
				require.Equal(t, store.RunRunning, res.RunStatus, rule)
				got := getRun(t, h, r.ID)
				require.Equal(t, 1, got.Succeeded, rule)
				require.Equal(t, []byte("one"), got.Task("a").Result, rule)
				require.Len(t, got.Task("a").Attempts, 1, rule)
			},
		},
		{
			name: "StaleExtend",
			rule: "a stale epoch must not extend a lease",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, nil)
				first := claimOne(t, h, "a", rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: first.Lease, Outcome: store.OutcomeReleased}).Err, rule)
				second := claimOne(t, h, "a", rule)
				res, err := h.Store.LeaseExtend(bg, &store.LeaseExtendParams{WorkerID: defaultWorker, Leases: []store.Lease{first.Lease, second.Lease}, Duration: time.Hour})
				require.NoError(t, err, rule)
				require.Len(t, res, 2, rule)
				require.ErrorIs(t, res[0].Err, store.ErrStaleEpoch, rule)
				require.NoError(t, res[1].Err, rule)
				succeed(t, h, second.Lease, "ok", rule)
				res, err = h.Store.LeaseExtend(bg, &store.LeaseExtendParams{WorkerID: defaultWorker, Leases: []store.Lease{second.Lease}, Duration: time.Hour})
				require.NoError(t, err, rule)
				require.ErrorIs(t, res[0].Err, store.ErrStaleEpoch, rule)
			},
		},
		{
			name: "UnknownRunLease",
			rule: "a finish or extend for an unknown run answers ErrNotFound",
			run: func(t *testing.T, h *Harness, rule string) {
				l := store.Lease{RunID: "no-such-run", Task: "a", Epoch: 1}
				require.ErrorIs(t, finish(t, h, store.TaskOutcome{Lease: l, Outcome: store.OutcomeSucceeded}).Err, store.ErrNotFound, rule)
				res, err := h.Store.LeaseExtend(bg, &store.LeaseExtendParams{Leases: []store.Lease{l}, Duration: time.Second})
				require.NoError(t, err, rule)
				require.ErrorIs(t, res[0].Err, store.ErrNotFound, rule)
			},
		},
		{
			name: "NextDueAt",
			rule: "NextDueAt is the earliest due time of the delayed tasks on the claimed queues",
			run: func(t *testing.T, h *Harness, rule string) {
				now := h.Now()
				a, b, c := task("a"), task("b"), task("c")
				a.Delay, b.Delay, c.Delay = 10*time.Second, 5*time.Second, time.Second
				c.Queue = "other"
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, a, b, c)})
				res := claimNone(t, h, rule)
				sameTime(t, now.Add(5*time.Second), res.NextDueAt, rule)
				res = claim(t, h, &claimOpts{Queues: []string{"other", store.DefaultQueue}})
				require.Empty(t, res.Tasks, rule)
				sameTime(t, now.Add(time.Second), res.NextDueAt, rule)
				h.Advance(5 * time.Second)
				claimOne(t, h, "b", rule)
				res = claimNone(t, h, rule)
				sameTime(t, now.Add(10*time.Second), res.NextDueAt, rule)
			},
		},
		{
			name: "ParentResults",
			rule: "a claimed task carries the results of its succeeded parents by name, and only those",
			run: func(t *testing.T, h *Harness, rule string) {
				c := task("c", "a")
				c.Deps = append(c.Deps, store.Dep{Task: "b", On: store.OnCompletion})
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"), c)})
				got := claimNames(t, h)
				require.Len(t, got, 2, rule)
				succeed(t, h, got["a"].Lease, "result-a", rule)
				failTask(t, h, got["b"].Lease, "boom", rule)
				ct := claimOne(t, h, "c", rule)
				require.Equal(t, map[string][]byte{"a": []byte("result-a")}, ct.ParentResults, rule)
			},
		},
	})
}

// sweep runs one LeaseSweep and requires it to succeed.
func sweep(t *testing.T, h *Harness, limit, crashLimit int) *store.LeaseSweepResult {
	t.Helper()
	res, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: limit, CrashLimit: crashLimit})
	require.NoError(t, err, "LeaseSweep must succeed")
	return res
}
