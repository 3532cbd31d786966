package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store/redisstore"
	"github.com/plaitdag/plait/store/storetest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestQueueListAndTaskSearchOnShards runs the queue list and task search
// suites on a store of three shards, whose registries, lease sets and run
// indexes are read one shard after another.
func TestQueueListAndTaskSearchOnShards(t *testing.T) {
	for _, capability := range []string{"QueueLister", "TaskSearchStore"} {
		storetest.RunCapability(t, capability, func(t *testing.T) *storetest.Harness {
			m := miniredis.RunT(t)
			m.SetTime(start)
			clk := fakeclock.New(start)
			c := redis.NewClient(&redis.Options{Addr: m.Addr()})
			t.Cleanup(func() { c.Close() })
			s, err := redisstore.New(context.Background(), c, redisstore.WithClock(clk), redisstore.WithLogger(quietLogger()),
				redisstore.WithShards(3))
			require.NoError(t, err)
			return &storetest.Harness{Store: s, Now: clk.Now, Advance: func(d time.Duration) { clk.Advance(d); m.FastForward(d) }}
		})
	}
}
