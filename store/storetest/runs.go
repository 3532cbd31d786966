package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

func testRuns(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "CreateFields",
			rule: "a new run is pending with zero counters, Total equal to its task count, CreatedAt now, and every field as given",
			run: func(t *testing.T, h *Harness, rule string) {
				wf := spec(store.StrategySkip, task("a"), task("b", "a"))
				wf.Name = "orders"
				r := createRun(t, h, &runOpts{Workflow: wf, Tenant: "acme", Service: "billing", Metadata: map[string]string{"k": "v"}})
				require.NotEmpty(t, r.ID, rule)
				require.Equal(t, "orders", r.Workflow, rule)
				require.Equal(t, store.StrategySkip, r.Strategy, rule)
				require.Equal(t, store.RunPending, r.Status, rule)
				require.Equal(t, "acme", r.Tenant, rule)
				require.Equal(t, "billing", r.Service, rule)
				require.Equal(t, map[string]string{"k": "v"}, r.Metadata, rule)
				require.Equal(t, 2, r.Total, rule)
				require.Zero(t, r.Succeeded+r.Failed+r.Skipped+r.Cancelled, rule)
				sameTime(t, h.Now(), r.CreatedAt, rule)
				require.True(t, r.StartedAt.IsZero() && r.EndedAt.IsZero(), rule)

				got := getRun(t, h, r.ID)
				require.Equal(t, r.ID, got.ID, rule)
				require.Equal(t, store.RunPending, got.Status, rule)
				require.Equal(t, map[string]string{"k": "v"}, got.Metadata, rule)
				sameTime(t, h.Now(), got.CreatedAt, rule)
			},
		},
		{
			name: "TasksInDefinitionOrder",
			rule: "a new run lists every task in definition order with attempt 0 and epoch 0; roots are ready and the others pending",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("c"), task("a", "c"), task("b"))})
				got := getRun(t, h, r.ID)
				require.Len(t, got.Tasks, 3, rule)
				want := []struct {
					name   string
					status store.TaskStatus
				}{{"c", store.TaskReady}, {"a", store.TaskPending}, {"b", store.TaskReady}}
				for i, w := range want {
					ti := got.Tasks[i]
					require.Equal(t, w.name, ti.Name, rule)
					require.Equal(t, "h-"+w.name, ti.Handler, rule)
					require.Equal(t, w.status, ti.Status, rule)
					require.Zero(t, ti.Attempt, rule)
					require.Zero(t, ti.Epoch, rule)
					require.Zero(t, ti.Crashes, rule)
					require.Empty(t, ti.Attempts, rule)
				}
			},
		},
		{
			name: "UnknownRun",
			rule: "RunGet, RunCancel and RunWait of an unknown id return ErrNotFound",
			run: func(t *testing.T, h *Harness, rule string) {
				createRun(t, h, nil)
				_, err := h.Store.RunGet(bg, &store.RunGetParams{ID: "no-such-run"})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
				_, err = h.Store.RunCancel(bg, &store.RunCancelParams{ID: "no-such-run"})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
				_, err = h.Store.RunWait(bg, &store.RunWaitParams{ID: "no-such-run"})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
			},
		},
		{
			name: "IdempotentKey",
			rule: "a second create with the same key returns the first run with Existing set and writes nothing",
			run: func(t *testing.T, h *Harness, rule string) {
				first := createRun(t, h, &runOpts{Key: "order-42"})
				h.Advance(time.Second)
				again := createRunResult(t, h, &runOpts{Key: "order-42", Workflow: spec(store.StrategyContinue, task("x"), task("y"))})
				require.True(t, again.Existing, rule)
				require.Equal(t, first.ID, again.Run.ID, rule)
				require.Equal(t, 1, again.Run.Total, rule)
				sameTime(t, first.CreatedAt, again.Run.CreatedAt, rule)
				other := createRun(t, h, &runOpts{Key: "order-43"})
				require.NotEqual(t, first.ID, other.ID, rule)

				res := claim(t, h, nil)
				require.Len(t, res.Tasks, 2, rule)
				for _, ct := range res.Tasks {
					require.Equal(t, "a", ct.Lease.Task, rule)
				}
			},
		},
		{
			name: "MonotonicIDs",
			rule: "run ids are unique and increase in creation order (a later id is longer, or as long and greater)",
			run: func(t *testing.T, h *Harness, rule string) {
				seen := map[string]bool{}
				prev := ""
				for i := 0; i < 25; i++ {
					id := createRun(t, h, nil).ID
					require.False(t, seen[id], rule)
					seen[id] = true
					if prev != "" {
						require.True(t, len(id) > len(prev) || (len(id) == len(prev) && id > prev), rule+": %q after %q", id, prev)
					}
					prev = id
				}
			},
		},
		{
			name: "DelayedRoot",
			rule: "a root task with a Delay is claimable only once the store clock reaches CreatedAt plus Delay",
			run: func(t *testing.T, h *Harness, rule string) {
				a := task("a")
				a.Delay = 10 * time.Second
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, a, task("b"))})
				require.Equal(t, store.TaskPending, taskOf(t, h, r.ID, "a").Status, rule)
				claimOne(t, h, "b", rule)
				res := claimNone(t, h, rule)
				sameTime(t, r.CreatedAt.Add(10*time.Second), res.NextDueAt, rule)
				h.Advance(10*time.Second - time.Millisecond)
				claimNone(t, h, rule)
				h.Advance(time.Millisecond)
				ct := claimOne(t, h, "a", rule)
				require.Equal(t, 1, ct.Attempt, rule)
			},
		},
		{
			name: "RunAtRoot",
			rule: "a root task is due at the later of RunAt and CreatedAt plus Delay",
			run: func(t *testing.T, h *Harness, rule string) {
				now := h.Now()
				a := task("a")
				a.RunAt = now.Add(time.Minute)
				a.Delay = 30 * time.Second
				b := task("b")
				b.RunAt = now.Add(20 * time.Second)
				b.Delay = 40 * time.Second
				c := task("c")
				c.RunAt = now.Add(-time.Hour)
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, a, b, c)})
				claimOne(t, h, "c", rule)
				res := claimNone(t, h, rule)
				sameTime(t, now.Add(40*time.Second), res.NextDueAt, rule)
				h.Advance(40 * time.Second)
				claimOne(t, h, "b", rule)
				res = claimNone(t, h, rule)
				sameTime(t, now.Add(time.Minute), res.NextDueAt, rule)
				h.Advance(20 * time.Second)
				claimOne(t, h, "a", rule)
			},
		},
		{
			name: "ReturnsCopies",
			rule: "a run returned by the store is a copy: changing it, or the workflow given to RunCreate, changes nothing stored",
			run: func(t *testing.T, h *Harness, rule string) {
				a := task("a")
				a.Payload = []byte("payload")
				wf := spec(store.StrategyContinue, a, task("b", "a"))
				meta := map[string]string{"k": "v"}
				r := createRun(t, h, &runOpts{Workflow: wf, Metadata: meta})
				wf.Tasks[0].Payload[0] = 'X'
				wf.Tasks[1].Deps[0].Task = "zzz"
				meta["k"] = "changed"
				r.Metadata["k"] = "changed"
				r.Tasks[0].Status = store.TaskFailed

				got := getRun(t, h, r.ID)
				require.Equal(t, "v", got.Metadata["k"], rule)
				require.Equal(t, store.TaskReady, got.Tasks[0].Status, rule)
				got.Tasks[0].Attempts = append(got.Tasks[0].Attempts, store.Attempt{Outcome: "bogus"})

				ct := claimOne(t, h, "a", rule)
				require.Equal(t, []byte("payload"), ct.Spec.Payload, rule)
				ct.Spec.Payload[0] = 'Y'
				succeed(t, h, ct.Lease, "result", rule)
				got = getRun(t, h, r.ID)
				got.Tasks[0].Result[0] = 'Z'
				require.Len(t, taskOf(t, h, r.ID, "a").Attempts, 1, rule)

				child := claimOne(t, h, "b", rule)
				require.Equal(t, "a", child.Spec.Deps[0].Task, rule)
				require.Equal(t, []byte("result"), child.ParentResults["a"], rule)
				require.Equal(t, []byte("result"), taskOf(t, h, r.ID, "a").Result, rule)
			},
		},
		{
			name: "RejectsNilWorkflow",
			rule: "RunCreate without a workflow returns ErrInvalidArgument",
			run: func(t *testing.T, h *Harness, rule string) {
				_, err := h.Store.RunCreate(bg, &store.RunCreateParams{})
				require.True(t, errors.Is(err, store.ErrInvalidArgument), rule)
			},
		},
	})
}
