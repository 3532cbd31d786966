package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// Node-form workers: the worker and a node suffix, as a Scheduler makes
// them (store.SplitWorker).
const (
	searchNode1 = "n1.0000000a"
	searchNode2 = "n2.0000000b"
)

// testTaskSearch is the suite of [store.TaskSearchStore].
func testTaskSearch(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "FiltersExact",
			rule: "TaskSearch finds, for each filter of status, queue, handler, node, tenant and service, exactly the tasks RunGet shows matching it, each as RunGet has it, in pages that repeat nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				on := func(name, queue string, deps ...string) store.TaskSpec {
					ts := task(name, deps...)
					ts.Queue = queue
					return ts
				}
				queues := map[string]string{}
				mk := func(o *runOpts) string {
					r := createRun(t, h, o)
					for _, ts := range o.Workflow.Tasks {
						queues[r.ID+" "+ts.Name] = ts.Queue
					}
					return r.ID
				}
				low := on("x4", "b")
				low.Priority = store.PriorityLow
				mk(&runOpts{Service: "shop", Tenant: "t1", Workflow: spec(store.StrategyContinue,
					on("x1", "a"), on("x2", "b", "x1"), on("x5", "b", "x2"), on("x3", "mail"), low)})
				mk(&runOpts{Service: "shop", Tenant: "t2", Workflow: spec(store.StrategyContinue,
					on("y1", "r"), on("y2", "r2"), on("y3", "f"))})
				mk(&runOpts{Workflow: spec(store.StrategyContinue, on("z1", "emial"), on("z2", "b"))})
				w := mk(&runOpts{Service: "other", Workflow: spec(store.StrategyContinue, on("w1", "w"), on("w2", "w"))})
				mk(&runOpts{Service: "shop", Tenant: "t1", Workflow: spec(store.StrategyContinue, on("v1", "f"), on("v2", "f", "v1"))})

				x1 := claimOn(t, h, "a", searchNode1, rule)
				finishAs(t, h, searchNode1, store.TaskOutcome{Lease: x1[0].Lease, Outcome: store.OutcomeSucceeded}, rule)
				y1 := claimOn(t, h, "r", searchNode1, rule)
				finishAs(t, h, searchNode1, store.TaskOutcome{Lease: y1[0].Lease, Outcome: store.OutcomeRetry, Error: "again", RetryDelay: time.Minute}, rule)
				claimOn(t, h, "r2", searchNode2, rule)
				for _, ct := range claimOn(t, h, "f", searchNode2, rule) {
					finishAs(t, h, searchNode2, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeFailed, Error: "boom"}, rule)
				}
				_, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: w, Reason: "stop"})
				require.NoError(t, err, rule)
				if _, ok := h.Store.(store.ClaimRouter); ok {
					claim(t, h, &claimOpts{Queues: []string{"mail"}, Handlers: []string{"nope"}})
				}

				all := []store.TaskStatus{store.TaskPending, store.TaskReady, store.TaskRunning, store.TaskRetrying,
					store.TaskSucceeded, store.TaskFailed, store.TaskSkipped, store.TaskCancelled, store.TaskDead}
				var filters []store.TaskSearchParams
				filters = append(filters, store.TaskSearchParams{})
				for _, st := range all {
					filters = append(filters, store.TaskSearchParams{Statuses: []store.TaskStatus{st}})
				}
				filters = append(filters,
					store.TaskSearchParams{Statuses: []store.TaskStatus{store.TaskReady, store.TaskFailed}},
					store.TaskSearchParams{Queue: "b"}, store.TaskSearchParams{Queue: "emial"}, store.TaskSearchParams{Queue: "mail"},
					store.TaskSearchParams{Queue: "f", Statuses: []store.TaskStatus{store.TaskFailed, store.TaskSkipped}},
					store.TaskSearchParams{Handler: "h-x2"}, store.TaskSearchParams{Handler: "h-y1"},
					store.TaskSearchParams{Node: searchNode1}, store.TaskSearchParams{Node: searchNode2},
					store.TaskSearchParams{Tenant: "t1"}, store.TaskSearchParams{Service: "shop"},
					store.TaskSearchParams{Service: "shop", Tenant: "t2", Statuses: []store.TaskStatus{store.TaskRunning, store.TaskRetrying}},
					store.TaskSearchParams{Service: "other"})
				ids := runIDs(t, h)
				for _, f := range filters {
					want := map[string]store.TaskInstance{}
					for _, id := range ids {
						r := getRun(t, h, id)
						for _, in := range r.Tasks {
							hit := store.TaskHit{RunID: id, Tenant: r.Tenant, Service: r.Service, Queue: queues[id+" "+in.Name], TaskInstance: in}
							if f.Matches(&hit) {
								want[id+" "+in.Name] = in
							}
						}
					}
					got := map[string]store.TaskHit{}
					for _, hit := range searchAll(t, h, f, 2, rule) {
						k := hit.RunID + " " + hit.Name
						require.NotContains(t, got, k, rule+": %+v", f)
						got[k] = hit
					}
					require.Equal(t, len(want), len(got), rule+": %+v: %v", f, keysOf(got))
					for k, in := range want {
						hit, ok := got[k]
						require.True(t, ok, rule+": %+v misses %s", f, k)
						require.Equal(t, in, hit.TaskInstance, rule+": %s", k)
						require.Equal(t, queues[k], hit.Queue, rule)
						require.Equal(t, "wf", hit.Workflow, rule)
						require.Equal(t, in.Status == store.TaskRunning, !hit.LeaseUntil.IsZero(), rule+": a running task has its lease deadline, no other")
					}
				}
				require.NotEmpty(t, searchAll(t, h, store.TaskSearchParams{Statuses: []store.TaskStatus{store.TaskPending}}, 10, rule), rule)
				_, err = h.Store.(store.TaskSearchStore).TaskSearch(bg, &store.TaskSearchParams{Limit: 1, Statuses: []store.TaskStatus{"lost"}})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
				_, err = h.Store.(store.TaskSearchStore).TaskSearch(bg, &store.TaskSearchParams{Limit: 1, Cursor: "x"})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
			},
		},
		{
			name: "HeldByTheQueueLimit",
			rule: "TaskSearch lists the ready tasks the queue's own limit holds back, with the queue's other ready tasks",
			run: func(t *testing.T, h *Harness, rule string) {
				queueLimitHeld(t, h, rule)
				hits := searchAll(t, h, store.TaskSearchParams{Queue: "lim", Statuses: []store.TaskStatus{store.TaskReady}}, 1, rule)
				require.Len(t, hits, 2, rule)
				for _, hit := range hits {
					require.Equal(t, store.WaitingForLimit(store.QueueLimitKey("lim")), hit.WaitingFor, rule)
				}
			},
		},
		{
			name: "RunningLeases",
			rule: "TaskSearch answers each running task with its lease deadline",
			run: func(t *testing.T, h *Harness, rule string) {
				t0 := h.Now()
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"))})
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("b"))})
				claim(t, h, &claimOpts{Limit: 1, Lease: time.Minute})
				h.Advance(time.Second)
				claim(t, h, &claimOpts{Limit: 1, Lease: 10 * time.Second})
				hits := searchAll(t, h, store.TaskSearchParams{Statuses: []store.TaskStatus{store.TaskRunning}}, 10, rule)
				require.Len(t, hits, 2, rule)
				if hits[0].Name != "b" {
					// another shard's first: a shard's leases come by deadline
					hits[0], hits[1] = hits[1], hits[0]
				}
				require.Equal(t, "b", hits[0].Name, rule)
				sameTime(t, t0.Add(11*time.Second), hits[0].LeaseUntil, rule)
				sameTime(t, t0.Add(time.Minute), hits[1].LeaseUntil, rule)
			},
		},
		{
			name: "PagesWhileTasksMove",
			rule: "TaskSearch's cursor is a position that survives claims at a list's head and runs created between pages: no task is seen twice, and each that stayed in its status is seen",
			run: func(t *testing.T, h *Harness, rule string) {
				var runs []string
				for range 6 {
					runs = append(runs, createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("t"), task("c", "t"))}).ID)
					h.Advance(time.Millisecond) // runs of one millisecond are in id order
				}
				ready := store.TaskSearchParams{Statuses: []store.TaskStatus{store.TaskReady}, Limit: 2}
				var seen []string
				moves := []func(){
					func() { // the head is claimed, a run arrives
						claim(t, h, &claimOpts{Limit: 1})
						runs = append(runs, createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("t"), task("c", "t"))}).ID)
						h.Advance(time.Millisecond)
					},
					func() { claim(t, h, &claimOpts{Limit: 3}) }, // the cursor's entry leaves
				}
				for i := 0; ; i++ {
					res, err := h.Store.(store.TaskSearchStore).TaskSearch(bg, &ready)
					require.NoError(t, err, rule)
					for _, hit := range res.Tasks {
						seen = append(seen, hit.RunID)
					}
					if res.NextCursor == "" {
						break
					}
					if i < len(moves) {
						moves[i]()
					}
					ready.Cursor = res.NextCursor
				}
				stayed := 0
				for _, id := range runs {
					if taskOf(t, h, id, "t").Status == store.TaskReady {
						require.Contains(t, seen, id, rule+": a task that stayed ready is seen")
						stayed++
					}
				}
				require.Equal(t, 3, stayed, rule)
				require.Equal(t, seen, unique(seen), rule+": no task is seen twice")

				pending := store.TaskSearchParams{Statuses: []store.TaskStatus{store.TaskPending}, Limit: 2}
				seen = nil
				before := len(runs)
				for {
					res, err := h.Store.(store.TaskSearchStore).TaskSearch(bg, &pending)
					require.NoError(t, err, rule)
					for _, hit := range res.Tasks {
						seen = append(seen, hit.RunID)
					}
					if res.NextCursor == "" {
						break
					}
					runs = append(runs, createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("t"), task("c", "t"))}).ID)
					pending.Cursor = res.NextCursor
				}
				require.Equal(t, seen, unique(seen), rule+": no task is seen twice")
				require.Subset(t, seen, runs[:before], rule+": each run there from the first page to the last is seen")
				require.Subset(t, runs, seen, rule)

			},
		},
	})
}

// claimOn claims up to 10 tasks of queue as worker and requires one.
func claimOn(t *testing.T, h *Harness, queue, worker, rule string) []*store.ClaimedTask {
	t.Helper()
	res := claim(t, h, &claimOpts{Queues: []string{queue}, Worker: worker, Limit: 10})
	require.NotEmpty(t, res.Tasks, rule)
	return res.Tasks
}

// finishAs applies one outcome as worker and requires it applied.
func finishAs(t *testing.T, h *Harness, worker string, o store.TaskOutcome, rule string) {
	t.Helper()
	res, err := h.Store.TaskFinish(bg, &store.TaskFinishParams{WorkerID: worker, Outcomes: []store.TaskOutcome{o}})
	require.NoError(t, err, rule)
	require.NoError(t, res[0].Err, rule)
}

// searchAll pages through every hit of p, limit hits a page.
func searchAll(t *testing.T, h *Harness, p store.TaskSearchParams, limit int, rule string) []store.TaskHit {
	t.Helper()
	p.Limit = limit
	var out []store.TaskHit
	for range 1000 {
		res, err := h.Store.(store.TaskSearchStore).TaskSearch(bg, &p)
		require.NoError(t, err, rule)
		require.LessOrEqual(t, len(res.Tasks), limit, rule)
		out = append(out, res.Tasks...)
		if res.NextCursor == "" {
			return out
		}
		p.Cursor = res.NextCursor
	}
	t.Fatal(rule + ": paging does not end")
	return nil
}

// runIDs lists every run through the query store.
func runIDs(t *testing.T, h *Harness) []string {
	t.Helper()
	q, ok := h.Store.(store.QueryStore)
	require.True(t, ok, "a TaskSearchStore's suite reads the runs through QueryStore")
	res, err := q.RunList(bg, &store.RunListParams{Limit: 1000})
	require.NoError(t, err)
	var ids []string
	for _, r := range res.Runs {
		ids = append(ids, r.ID)
	}
	return ids
}

func keysOf(m map[string]store.TaskHit) []string {
	var out []string
	for k := range m {
		out = append(out, fmt.Sprint(k, " ", m[k].Status))
	}
	return out
}

func unique(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
