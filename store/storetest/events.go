package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

// RunCapability runs the suite of the one optional capability named name
// (a name [Capabilities] lists), for a store built differently from the one
// [Run] gets: an [store.EventStore] with a small EventCap, say. It fails
// t when no suite has that name or the store lacks the capability.
func RunCapability(t *testing.T, name string, newHarness func(t *testing.T) *Harness) {
	t.Helper()
	probe := newHarness(t).Store
	for _, c := range capabilities() {
		if c.name != name {
			continue
		}
		require.True(t, c.has(probe), "the store must implement %s", name)
		t.Run(c.name, func(t *testing.T) { c.fn(t, newHarness) })
		return
	}
	t.Fatalf("storetest: no capability suite named %q", name)
}

// readEvents reads every event of one stream after the cursor, in pages of
// limit, and returns them with the cursor after the last.
func readEvents(t *testing.T, h *Harness, runID string, after store.EventCursor, limit int) ([]store.StoreEvent, store.EventCursor) {
	t.Helper()
	es := h.Store.(store.EventStore)
	var out []store.StoreEvent
	for {
		res, err := es.EventRead(bg, &store.EventReadParams{RunID: runID, After: after, Limit: limit})
		require.NoError(t, err, "EventRead must answer a valid read")
		require.False(t, res.FellBehind, "a read within the caps is not behind")
		out = append(out, res.Events...)
		if len(res.Events) == 0 {
			require.Equal(t, after, res.Cursor, "a read that found nothing keeps its cursor")
			return out, after
		}
		require.Equal(t, res.Events[len(res.Events)-1].Cursor, res.Cursor, "the cursor of a read is its last event's")
		after = res.Cursor
	}
}

func eventTypes(evs []store.StoreEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e.Type)
		if e.Task != "" {
			out[i] += " " + e.Task
		}
	}
	return out
}

// testEvents is the suite of [store.EventStore].
func testEvents(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, append(eventStartCases(), []testCase{
		{
			name: "OrderPerRun",
			rule: "every status change of a run and its tasks is one event, in the order it happened, carrying the task's and the run's fields",
			run: func(t *testing.T, h *Harness, rule string) {
				wf := spec(store.StrategyContinue, task("a"), task("b", "a"))
				wf.Tasks[1].Queue = "q2"
				wf.Tasks[1].Priority = store.PriorityHigh
				r := createRun(t, h, &runOpts{Workflow: wf, Tenant: "acme", Service: "billing"})
				a := claimOne(t, h, "a", rule)
				h.Advance(1500 * time.Millisecond)
				succeed(t, h, a.Lease, "ok", rule)
				b := claim(t, h, &claimOpts{Queues: []string{"q2"}, Worker: "worker-2"})
				require.Len(t, b.Tasks, 1, rule)
				h.Advance(250 * time.Millisecond)
				failTask(t, h, b.Tasks[0].Lease, "boom", rule)

				evs, _ := readEvents(t, h, r.ID, "", 3)
				require.Equal(t, []string{
					"run_pending", "task_ready a", "task_running a", "run_running", "task_succeeded a",
					"task_ready b", "task_running b", "task_failed b", "run_failed",
				}, eventTypes(evs), rule)
				for _, e := range evs {
					require.Equal(t, r.ID, e.RunID, rule)
					require.Equal(t, "wf", e.Workflow, rule)
					require.Equal(t, "acme", e.Tenant, rule)
					require.Equal(t, "billing", e.Service, rule)
					require.NotEmpty(t, e.Cursor, rule)
				}
				run := evs[3]
				require.Equal(t, store.RunRunning, run.RunStatus, rule)
				ok := evs[4]
				require.Equal(t, store.TaskSucceeded, ok.TaskStatus, rule)
				require.Equal(t, 1, ok.Attempt, rule)
				require.Equal(t, a.Lease.Epoch, ok.Epoch, rule)
				require.Equal(t, defaultWorker, ok.Worker, rule)
				require.Equal(t, "h-a", ok.Handler, rule)
				require.Equal(t, store.DefaultQueue, ok.Queue, rule)
				sameDuration(t, 1500*time.Millisecond, ok.Duration, rule)
				sameTime(t, h.Now().Add(-250*time.Millisecond), ok.At, rule)
				bad := evs[7]
				require.Equal(t, "q2", bad.Queue, rule)
				require.Equal(t, store.PriorityHigh, bad.Priority, rule)
				require.Equal(t, "worker-2", bad.Worker, rule)
				require.Equal(t, "boom", bad.Error, rule)
				sameDuration(t, 250*time.Millisecond, bad.Duration, rule)
				require.Equal(t, store.RunFailed, evs[8].RunStatus, rule)
			},
		},
		{
			name: "StoreStreamResumesFromCursor",
			rule: "the store's stream holds every run's events in each run's order, and a read from a cursor delivers exactly the events after it",
			run: func(t *testing.T, h *Harness, rule string) {
				r1 := createRun(t, h, nil)
				r2 := createRun(t, h, nil)
				drain(t, h, rule)
				all, end := readEvents(t, h, "", "", 1000)
				byRun := map[string][]string{}
				for _, e := range all {
					byRun[e.RunID] = append(byRun[e.RunID], eventTypes([]store.StoreEvent{e})[0])
				}
				want := []string{"run_pending", "task_ready a", "task_running a", "run_running", "task_succeeded a", "run_completed"}
				require.Equal(t, want, byRun[r1.ID], rule)
				require.Equal(t, want, byRun[r2.ID], rule)
				// every split point resumes without a gap or a repeat.
				for i := range all {
					rest, _ := readEvents(t, h, "", all[i].Cursor, 2)
					require.Equal(t, all[i+1:], nonNil(rest), rule)
				}
				// events after the end cursor are the new ones only.
				r3 := createRun(t, h, nil)
				more, _ := readEvents(t, h, "", end, 10)
				require.Equal(t, []string{"run_pending", "task_ready a"}, eventTypes(more), rule)
				require.Equal(t, r3.ID, more[0].RunID, rule)
				// the run's own stream resumes the same way.
				runEvs, _ := readEvents(t, h, r1.ID, "", 10)
				rest, _ := readEvents(t, h, r1.ID, runEvs[2].Cursor, 10)
				require.Equal(t, runEvs[3:], rest, rule)
			},
		},
		{
			name: "ReadWaitsForAnEvent",
			rule: "a read with Wait and nothing after its cursor returns when an event is appended",
			run: func(t *testing.T, h *Harness, rule string) {
				es := h.Store.(store.EventStore)
				createRun(t, h, nil)
				_, end := readEvents(t, h, "", "", 100)
				got := make(chan *store.EventReadResult, 1)
				errs := make(chan error, 1)
				go func() {
					res, err := es.EventRead(bg, &store.EventReadParams{After: end, Limit: 10, Wait: time.Minute})
					if err != nil {
						errs <- err
						return
					}
					got <- res
				}()
				r := createRun(t, h, nil)
				select {
				case res := <-got:
					require.NotEmpty(t, res.Events, rule)
					require.Equal(t, r.ID, res.Events[0].RunID, rule)
				case err := <-errs:
					require.NoError(t, err, rule)
				case <-time.After(30 * time.Second):
					t.Fatal(rule)
				}
				res, err := es.EventRead(bg, &store.EventReadParams{After: "", Limit: 1, Wait: 0})
				require.NoError(t, err, rule)
				require.Len(t, res.Events, 1, rule)
			},
		},
		{
			name: "NoChangeNoEvent",
			rule: "a cancel of a finished run and a sweep that recovered nothing append no event",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, nil)
				drain(t, h, rule)
				_, end := readEvents(t, h, "", "", 100)
				_, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: r.ID, Reason: "late"})
				require.NoError(t, err, rule)
				_, err = h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10, CrashLimit: 3})
				require.NoError(t, err, rule)
				more, _ := readEvents(t, h, "", end, 10)
				require.Empty(t, more, rule)
			},
		},
		{
			name: "CancelAndSweepEvents",
			rule: "a cancel makes one event per task it stops and one for the run; a recovered lease makes the task's event",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				claimOne(t, h, "a", rule)
				h.Advance(defaultLease + time.Second)
				res, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10, CrashLimit: 3})
				require.NoError(t, err, rule)
				require.Len(t, res.Requeued, 1, rule)
				_, err = h.Store.RunCancel(bg, &store.RunCancelParams{ID: r.ID, Reason: "stop"})
				require.NoError(t, err, rule)
				evs, _ := readEvents(t, h, r.ID, "", 100)
				types := eventTypes(evs)
				require.Equal(t, []string{"run_pending", "task_ready a", "task_running a", "run_running", "task_ready a"}, types[:5], rule)
				sameDuration(t, defaultLease+time.Second, evs[4].Duration, rule)
				require.ElementsMatch(t, []string{"task_cancelled a", "task_cancelled b"}, types[5:7], rule)
				require.Equal(t, []string{"run_cancelled"}, types[7:], rule)
			},
		},
		{
			name: "FellBehind",
			rule: "a reader whose next events the cap dropped is told so, then reads on from the oldest event kept",
			run: func(t *testing.T, h *Harness, rule string) {
				if h.Caps.EventCap == 0 {
					t.Skip("the harness gives no EventCap")
				}
				es := h.Store.(store.EventStore)
				var ts []store.TaskSpec
				for i := 0; i < h.Caps.EventCap/4+1; i++ {
					ts = append(ts, task("t"+itoa(i)))
				}
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, ts...)})
				first, err := es.EventRead(bg, &store.EventReadParams{RunID: r.ID, Limit: 1})
				require.NoError(t, err, rule)
				require.Len(t, first.Events, 1, rule)
				require.False(t, first.FellBehind, "a read from the start is never behind")
				// each round of claims and retries makes three events per
				// task; go on well past the cap (Redis trims whole nodes of
				// up to 100 entries).
				for made := len(ts); made < h.Caps.EventCap+250; {
					h.Advance(time.Millisecond)
					res := claim(t, h, &claimOpts{Limit: 1000})
					require.NotEmpty(t, res.Tasks, rule)
					for _, ct := range res.Tasks {
						fr := finish(t, h, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeRetry, Error: "again"})
						require.NoError(t, fr.Err, rule)
						made += 2
					}
				}
				res, err := es.EventRead(bg, &store.EventReadParams{RunID: r.ID, After: first.Cursor, Limit: 10})
				require.NoError(t, err, rule)
				require.True(t, res.FellBehind, rule)
				require.NotEmpty(t, res.Events, rule)
				next, err := es.EventRead(bg, &store.EventReadParams{RunID: r.ID, After: res.Cursor, Limit: 10})
				require.NoError(t, err, rule)
				require.False(t, next.FellBehind, rule)
			},
		},
		{
			name: "SubscribeFilters",
			rule: "Subscribe delivers the events of the runs and types its filter names, in order, and resumes from a cursor",
			run: func(t *testing.T, h *Harness, rule string) {
				s, err := plait.New(h.Store)
				require.NoError(t, err, rule)
				ctx, cancel := context.WithTimeout(bg, time.Minute)
				defer cancel()
				createRun(t, h, &runOpts{Tenant: "t1", Service: "s1"})
				r2 := createRun(t, h, &runOpts{Tenant: "t2", Service: "s1"})
				r3 := createRun(t, h, &runOpts{Tenant: "t2", Service: "s2", Workflow: &store.WorkflowSpec{Name: "other", Tasks: []store.TaskSpec{task("a")}}})
				drain(t, h, rule)

				next := func(sub *plait.Subscription) *store.StoreEvent {
					t.Helper()
					ev, err := sub.Next(ctx)
					require.NoError(t, err, rule)
					return ev
				}
				sub, err := s.Subscribe(ctx, &plait.SubscribeFilter{Tenant: "t2", Workflow: "wf", Types: []store.StoreEventType{
					store.RunEventType(store.RunPending), store.RunEventType(store.RunCompleted),
				}})
				require.NoError(t, err, rule)
				ev := next(sub)
				require.Equal(t, r2.ID, ev.RunID, rule)
				require.Equal(t, store.RunPending, ev.RunStatus, rule)
				cur := sub.Cursor()
				ev = next(sub)
				require.Equal(t, r2.ID, ev.RunID, rule)
				require.Equal(t, store.RunCompleted, ev.RunStatus, rule)

				again, err := s.Subscribe(ctx, &plait.SubscribeFilter{Service: "s2", After: cur})
				require.NoError(t, err, rule)
				ev = next(again)
				require.Equal(t, r3.ID, ev.RunID, rule)
				require.Equal(t, store.RunEventType(store.RunPending), ev.Type, rule)

				one, err := s.Subscribe(ctx, &plait.SubscribeFilter{RunID: r3.ID, Types: []store.StoreEventType{store.TaskEventType(store.TaskSucceeded)}})
				require.NoError(t, err, rule)
				ev = next(one)
				require.Equal(t, "a", ev.Task, rule)

				// a new run arrives at a subscriber that waits at the end.
				short, cancelShort := context.WithTimeout(ctx, 30*time.Second)
				defer cancelShort()
				live, err := s.Subscribe(short, &plait.SubscribeFilter{After: sub.Cursor(), Tenant: "t9"})
				require.NoError(t, err, rule)
				done := make(chan *store.StoreEvent, 1)
				go func() {
					ev, err := live.Next(short)
					if err != nil {
						done <- nil
						return
					}
					done <- ev
				}()
				r4 := createRun(t, h, &runOpts{Tenant: "t9"})
				got := <-done
				require.NotNil(t, got, rule)
				require.Equal(t, r4.ID, got.RunID, rule)
			},
		},
	}...))
}

func nonNil(evs []store.StoreEvent) []store.StoreEvent {
	if evs == nil {
		return []store.StoreEvent{}
	}
	return evs
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for i > 0 {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
	}
	return string(b)
}
