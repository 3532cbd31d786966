package plait_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// heartbeat registers node id, serving queues with capabilities caps,
// for ttl from now on the store's clock.
func heartbeat(t *testing.T, st store.Store, id string, queues, caps []string, ttl time.Duration) {
	t.Helper()
	ns, ok := st.(store.NodeStore)
	require.True(t, ok)
	_, err := ns.NodeHeartbeat(context.Background(), &store.NodeHeartbeatParams{TTL: ttl, HistoryLimit: 1,
		Node: store.NodeInfo{ID: id, Name: "w", Host: "h", PID: 1, Queues: queues, Capabilities: caps, Capacity: 1}})
	require.NoError(t, err)
}

func createTasks(t *testing.T, st store.Store, tasks ...store.TaskSpec) string {
	t.Helper()
	res, err := st.RunCreate(context.Background(), &store.RunCreateParams{Workflow: &store.WorkflowSpec{Name: "wf", Tasks: tasks}})
	require.NoError(t, err)
	return res.Run.ID
}

func TestTaskSearchFlagsATaskOnAGoneNodeOrphaned(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		ctx := context.Background()
		clk := fakeclock.New(epoch)
		st := f.new(t, clk)
		s, err := plait.New(st, plait.WithClock(clk))
		require.NoError(t, err)
		const node = "w1.0000000a"
		heartbeat(t, st, node, []string{plait.DefaultQueue}, nil, 10*time.Second)
		run := createTasks(t, st, store.TaskSpec{Name: "a", Handler: "h", Queue: plait.DefaultQueue})
		claimed, err := st.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: node, Limit: 1, LeaseDuration: 30 * time.Second})
		require.NoError(t, err)
		require.Len(t, claimed.Tasks, 1)
		running := plait.TaskSearchParams{Statuses: []plait.TaskStatus{plait.TaskRunning}}

		res, err := s.TaskSearch(ctx, running)
		require.NoError(t, err)
		require.Len(t, res.Tasks, 1)
		hit := res.Tasks[0]
		require.Equal(t, run, hit.RunID)
		require.Equal(t, node, hit.Node)
		require.True(t, hit.LeaseUntil.Equal(epoch.Add(30*time.Second)), "the lease deadline: %v", hit.LeaseUntil)
		require.True(t, hit.NodeAlive, "its node heartbeats")
		require.False(t, hit.Orphaned)

		clk.Advance(11 * time.Second) // the node's heartbeats stopped: kill -9
		res, err = s.TaskSearch(ctx, running)
		require.NoError(t, err)
		require.Len(t, res.Tasks, 1, "the task still shows running until its lease ends")
		require.False(t, res.Tasks[0].NodeAlive)
		require.True(t, res.Tasks[0].Orphaned, "a running task on a gone node is orphaned")

		clk.Advance(20 * time.Second)
		_, err = st.LeaseSweep(ctx, &store.LeaseSweepParams{Limit: 10, CrashLimit: 3})
		require.NoError(t, err)
		res, err = s.TaskSearch(ctx, running)
		require.NoError(t, err)
		require.Empty(t, res.Tasks, "the sweep took it back")
		res, err = s.TaskSearch(ctx, plait.TaskSearchParams{Statuses: []plait.TaskStatus{plait.TaskReady}})
		require.NoError(t, err)
		require.Len(t, res.Tasks, 1)
		require.False(t, res.Tasks[0].Orphaned, "a ready task is no one's")
	})
}

func TestQueueListNamesTheNodesServingEachQueue(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		ctx := context.Background()
		clk := fakeclock.New(epoch)
		st := f.new(t, clk)
		s, err := plait.New(st, plait.WithClock(clk), plait.WithQueueLimit("emial", 3))
		require.NoError(t, err)
		heartbeat(t, st, "a.0000000a", []string{plait.DefaultQueue}, []string{"gpu"}, time.Minute)
		heartbeat(t, st, "b.0000000b", []string{plait.DefaultQueue, "mail"}, nil, time.Minute)
		createTasks(t, st,
			store.TaskSpec{Name: "plain", Handler: "h", Queue: plait.DefaultQueue},
			store.TaskSpec{Name: "gpu", Handler: "h", Queue: plait.DefaultQueue, Requires: []string{"gpu"}},
			store.TaskSpec{Name: "typo", Handler: "h", Queue: "emial"})
		res, err := s.QueueList(ctx, plait.QueueListParams{})
		require.NoError(t, err)
		require.Len(t, res.Queues, 3)
		byName := map[string]plait.QueueInfo{}
		for _, q := range res.Queues {
			byName[q.Name] = q
		}
		require.Equal(t, []string{"a.0000000a", "b.0000000b"}, byName[plait.DefaultQueue].Nodes)
		require.Equal(t, []string{"a.0000000a"}, byName["default+gpu"].Nodes, "a routed queue is served by the nodes with its capabilities")
		require.Empty(t, byName["emial"].Nodes)
		require.True(t, byName["emial"].Unserved, "no live node serves a typo'd queue")
		require.False(t, byName[plait.DefaultQueue].Unserved)
		require.Equal(t, 1, byName["emial"].Ready)
		require.Equal(t, 3, byName["emial"].Limit, "the queue limit this scheduler puts on the queue")
		require.Zero(t, byName[plait.DefaultQueue].Limit)

		err = st.(store.NodeStore).NodeDrain(ctx, &store.NodeDrainParams{ID: "b.0000000b"})
		require.NoError(t, err)
		res, err = s.QueueList(ctx, plait.QueueListParams{})
		require.NoError(t, err)
		require.Equal(t, []string{"a.0000000a"}, res.Queues[0].Nodes, "a draining node takes nothing new")
	})
}

func TestQueueListAndTaskSearchNeedTheirCapabilities(t *testing.T) {
	t.Parallel()
	s, err := plait.New(coreOnly{newMemStore(t)})
	require.NoError(t, err)
	_, err = s.QueueList(context.Background(), plait.QueueListParams{})
	require.ErrorIs(t, err, plait.ErrUnsupported)
	_, err = s.TaskSearch(context.Background(), plait.TaskSearchParams{})
	require.ErrorIs(t, err, plait.ErrUnsupported)
}
