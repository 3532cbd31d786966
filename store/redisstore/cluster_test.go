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
