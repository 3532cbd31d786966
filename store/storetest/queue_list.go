package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testQueueLister is the suite of [store.QueueLister].
func testQueueLister(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "DepthsPerPriority",
			rule: "QueueList lists every queue that had tasks, a typo'd one and a routed one included, with its ready tasks per priority, its delayed, set-aside and running tasks, exactly",
			run: func(t *testing.T, h *Harness, rule string) {
				prio := func(name string, p store.Priority) store.TaskSpec {
					ts := task(name)
					ts.Priority = p
					return ts
				}
				later := task("later")
				later.Delay = time.Minute
				typo := task("typo")
				typo.Queue = "emial"
				gpu := task("gpu")
				gpu.Requires = []string{"gpu"}
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue,
					prio("u1", store.PriorityUrgent), prio("h1", store.PriorityHigh), prio("h2", store.PriorityHigh),
					prio("n1", store.PriorityNormal), prio("l1", store.PriorityLow), prio("l2", store.PriorityLow), prio("l3", store.PriorityLow),
					later, typo, gpu, task("child", "u1"))})
				got := queueList(t, h, rule)
				require.Equal(t, []string{store.DefaultQueue, "default+gpu", "emial"}, queueNames(got), rule)
				d := got[0]
				require.Equal(t, [4]int{1, 2, 1, 3}, [4]int{d.Urgent, d.High, d.Normal, d.Low}, rule)
				require.Equal(t, 7, d.Ready, rule)
				require.Equal(t, 1, d.Delayed, rule)
				require.Equal(t, store.DefaultQueue, d.Queue, rule)
				require.Empty(t, d.Requires, rule)
				require.Equal(t, store.DefaultQueue, got[1].Queue, rule)
				require.Equal(t, []string{"gpu"}, got[1].Requires, rule)
				require.Equal(t, 1, got[1].Ready, rule)
				require.Equal(t, 1, got[2].Normal, rule)
				require.Equal(t, 1, got[2].Ready, rule)

				// two claims: one runs u1 and h1, one lacks the low tasks'
				// handlers and sets them aside
				res := claim(t, h, &claimOpts{Queues: []string{store.DefaultQueue}, Limit: 2})
				require.Len(t, res.Tasks, 2, rule)
				got = queueList(t, h, rule)
				d = got[0]
				require.Equal(t, 2, d.Running, rule)
				require.Equal(t, [4]int{0, 1, 1, 3}, [4]int{d.Urgent, d.High, d.Normal, d.Low}, rule)
				require.Equal(t, 0, got[2].Running, rule)
				if _, ok := h.Store.(store.ClaimRouter); ok {
					claim(t, h, &claimOpts{Queues: []string{store.DefaultQueue}, Limit: 1, Handlers: []string{"none"}})
					d = queueList(t, h, rule)[0]
					require.Equal(t, 2, d.Running, rule)
					require.Zero(t, d.Ready, rule+": a claim without the handlers sets every ready task aside")
					require.Equal(t, 5, d.SetAside, rule)
				}
				if ns, ok := h.Store.(store.NodeStore); ok {
					_, err := ns.QueuePause(bg, &store.QueuePauseParams{Queue: "emial"})
					require.NoError(t, err, rule)
					got = queueList(t, h, rule)
					require.Equal(t, []bool{false, false, true}, []bool{got[0].Paused, got[1].Paused, got[2].Paused}, rule)
				}
			},
		},
		{
			name: "LimitedByTheQueueLimit",
			rule: "QueueList counts the ready tasks the queue's own limit holds back as Limited, apart from Ready, on the plain queue's entry",
			run: func(t *testing.T, h *Harness, rule string) {
				queueLimitHeld(t, h, rule)
				q := queueList(t, h, rule)[0]
				require.Equal(t, "lim", q.Name, rule)
				require.Equal(t, 1, q.Running, rule)
				require.Equal(t, 2, q.Limited, rule)
				require.Zero(t, q.Ready, rule)
			},
		},
		{
			name: "OldestReady",
			rule: "QueueList's OldestReadyAt is when the oldest ready or due task of the queue became ready, whatever its priority",
			run: func(t *testing.T, h *Harness, rule string) {
				t0 := h.Now()
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"))})
				h.Advance(10 * time.Second)
				urgent := task("b")
				urgent.Priority = store.PriorityUrgent
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, urgent)})
				sameTime(t, t0, queueList(t, h, rule)[0].OldestReadyAt, rule+": the normal task is older than the urgent head")
				require.Len(t, claim(t, h, nil).Tasks, 2, rule)
				require.True(t, queueList(t, h, rule)[0].OldestReadyAt.IsZero(), rule+": nothing ready")

				t1 := h.Now()
				later := task("later")
				later.Delay = time.Minute
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, later)})
				require.True(t, queueList(t, h, rule)[0].OldestReadyAt.IsZero(), rule+": a delayed task not yet due is not ready")
				h.Advance(2 * time.Minute)
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("c"))})
				sameTime(t, t1.Add(time.Minute), queueList(t, h, rule)[0].OldestReadyAt, rule+": a due task is ready since its due time")
			},
		},
		{
			name: "Pages",
			rule: "QueueList pages by name without a repeat or a gap, and a queue that gets its first task after the cursor's name is on a later page",
			run: func(t *testing.T, h *Harness, rule string) {
				on := func(q string) *runOpts {
					ts := task("a")
					ts.Queue = q
					return &runOpts{Workflow: spec(store.StrategyContinue, ts)}
				}
				for _, q := range []string{"q1", "q3", "q5", "q7"} {
					createRun(t, h, on(q))
				}
				l := h.Store.(store.QueueLister)
				var names []string
				p := &store.QueueListParams{Limit: 2}
				for i := 0; ; i++ {
					res, err := l.QueueList(bg, p)
					require.NoError(t, err, rule)
					require.LessOrEqual(t, len(res.Queues), 2, rule)
					names = append(names, queueNames(res.Queues)...)
					if i == 0 {
						createRun(t, h, on("q0"))
						createRun(t, h, on("q4"))
					}
					if res.NextCursor == "" {
						break
					}
					p.Cursor = res.NextCursor
				}
				require.Equal(t, []string{"q1", "q3", "q4", "q5", "q7"}, names, rule)
				_, err := l.QueueList(bg, &store.QueueListParams{})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
				_, err = l.QueueList(bg, &store.QueueListParams{Limit: 1, Cursor: "a:b"})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
			},
		},
	})
}

// queueList lists every queue in one page.
func queueList(t *testing.T, h *Harness, rule string) []store.QueueInfo {
	t.Helper()
	res, err := h.Store.(store.QueueLister).QueueList(bg, &store.QueueListParams{Limit: store.QueueListPageMax})
	require.NoError(t, err, rule)
	require.Empty(t, res.NextCursor, rule)
	require.False(t, res.RunningCapped, rule)
	return res.Queues
}

func queueNames(qs []store.QueueInfo) []string {
	var out []string
	for _, q := range qs {
		out = append(out, q.Name)
	}
	return out
}
