package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// TestLostNodeReplies loses the replies of a heartbeat and of a pause on a
// real redis-server: go-redis sends each again, the heartbeat adds its
// history once, and the pause bumps the control version once.
func TestLostNodeReplies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, 3, nil)
	at := time.UnixMilli(1_900_000_000_000).UTC()
	hist := []store.NodeTask{
		{Seq: 1, RunID: "3-abcdefghij", Task: "a", Attempt: 1, Outcome: store.OutcomeSucceeded, StartedAt: at, EndedAt: at},
		{Seq: 2, RunID: "3-abcdefghij", Task: "b", Attempt: 2, Outcome: store.OutcomeFailed, StartedAt: at, EndedAt: at},
	}
	e.proxy.DropReplyTo("lost-node-1")
	_, err := e.store.NodeHeartbeat(ctx, &store.NodeHeartbeatParams{Node: store.NodeInfo{ID: "lost-node-1", Capabilities: []string{"gpu"}},
		TTL: time.Minute, History: hist, HistoryLimit: 10})
	require.NoError(t, err)
	require.Equal(t, 1, e.proxy.Dropped(), "the heartbeat's reply was lost once")
	n, err := e.store.NodeGet(ctx, &store.NodeGetParams{ID: "lost-node-1"})
	require.NoError(t, err)
	require.Len(t, n.History, 2, "a heartbeat sent again adds no history entry twice")

	before, err := e.store.QueuePause(ctx, &store.QueuePauseParams{Queue: "warm"})
	require.NoError(t, err)
	e.proxy.DropReplyTo("lost-queue")
	res, err := e.store.QueuePause(ctx, &store.QueuePauseParams{Queue: "lost-queue"})
	require.NoError(t, err)
	require.Equal(t, 2, e.proxy.Dropped(), "the pause's reply was lost once")
	require.False(t, res.Changed, "the pause sent again finds the queue paused")
	after, err := e.store.QueueListPaused(ctx, &store.QueueListPausedParams{})
	require.NoError(t, err)
	require.Equal(t, []string{"lost-queue", "warm"}, after.Queues)
	require.Equal(t, before.ControlVersion+1, after.ControlVersion, "the lost pause bumped the version once")
}
