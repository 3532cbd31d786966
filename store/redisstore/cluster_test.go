package redisstore_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
	"github.com/plaitdag/plait/store/storetest"
)

// TestConformanceCluster runs the shared suite on a real three-master Redis
// Cluster through a cluster client: every script must touch one slot, or
// the cluster answers CROSSSLOT.
func TestConformanceCluster(t *testing.T) {
	cluster, err := redistest.StartCluster(3)
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(cluster.Close)
	var n atomic.Int64
	storetest.Run(t, func(t *testing.T) *storetest.Harness {
		c := cluster.Client()
		t.Cleanup(func() { _ = c.Close() })
		return clusterHarness(t, c, "cl"+strconv.FormatInt(n.Add(1), 10))
	})
}

func clusterHarness(t *testing.T, c *redis.ClusterClient, prefix string) *storetest.Harness {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := fakeclock.New(start)
	s, err := redisstore.New(context.Background(), c, redisstore.WithClock(clk), redisstore.WithPrefix(prefix),
		redisstore.WithLogger(quietLogger()), redisstore.WithStats(0))
	require.NoError(t, err)
	return &storetest.Harness{Store: s, Now: clk.Now, Advance: clk.Advance}
}

// TestClusterReadyWaitWakesOnEveryShard: on a cluster client a wait blocks
// on every shard at once, so a task created on any shard ends it, long
// before its timeout; a wait whose context ends returns and loses no token.
func TestClusterReadyWaitWakesOnEveryShard(t *testing.T) {
	cluster, err := redistest.StartCluster(3)
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(cluster.Close)
	ctx := context.Background()
	c := cluster.Client()
	t.Cleanup(func() { _ = c.Close() })
	s, err := redisstore.New(ctx, c, redisstore.WithShards(16), redisstore.WithPrefix("wake16"), redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h", Queue: store.DefaultQueue}}}
	const never = time.Hour
	for i := 0; i < 16; i++ {
		woke := make(chan error, 1)
		go func() { woke <- s.ReadyWait(ctx, &store.ReadyWaitParams{Timeout: never}) }()
		_, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
		select {
		case err := <-woke:
			require.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Fatalf("a task on the shard of run %d did not end the wait", i+1)
		}
		res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
		require.NoError(t, err)
		require.Len(t, res.Tasks, 1)
	}
	wctx, cancel := context.WithCancel(ctx)
	woke := make(chan error, 1)
	go func() { woke <- s.ReadyWait(wctx, &store.ReadyWaitParams{Timeout: never}) }()
	cancel()
	require.NoError(t, <-woke, "a wait whose context ends returns nil")
}
