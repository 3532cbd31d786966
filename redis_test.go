package plait_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/clock"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// The scheduler-level tests also run on the Redis store, over miniredis and
// over a real redis-server shared by the package (each test its own prefix).
func init() {
	extraStoreFactories = append(extraStoreFactories,
		storeFactory{name: "miniredis", new: func(t *testing.T, clk *fakeclock.Clock) store.Store {
			m := miniredis.RunT(t)
			return newRedisStore(t, m.Addr(), clk)
		}},
		storeFactory{name: "redis-server", new: func(t *testing.T, clk *fakeclock.Clock) store.Store {
			srv, err := sharedRedis()
			if err != nil {
				redistest.Skip(t, err)
			}
			return newRedisStore(t, srv.Addr, clk)
		}},
	)
}

var prefixSeq atomic.Int64

func newRedisStore(t testing.TB, addr string, clk *fakeclock.Clock, extra ...redisstore.Option) store.Store {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = client.Close() })
	opts := []redisstore.Option{redisstore.WithPrefix("t" + strconv.FormatInt(prefixSeq.Add(1), 10))}
	if clk != nil {
		opts = append(opts, redisstore.WithClock(clk))
	}
	store, err := redisstore.New(context.Background(), client, append(opts, extra...)...)
	require.NoError(t, err)
	return store
}

var shared struct {
	once sync.Once
	srv  *redistest.Server
	err  error
}

func sharedRedis() (*redistest.Server, error) {
	shared.once.Do(func() { shared.srv, shared.err = redistest.Start() })
	return shared.srv, shared.err
}

func stopSharedRedis() {
	if shared.srv != nil {
		_ = shared.srv.Close()
	}
}

// TestClusterShardedWorkflows runs workflows on a real three-master Redis
// Cluster with runs spread over six hash-tag shards, so scripts land on
// every master and the scheduler claims across shards.
func TestClusterShardedWorkflows(t *testing.T) {
	t.Parallel()
	cluster, err := redistest.StartCluster(3)
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(cluster.Close)
	client := cluster.Client()
	t.Cleanup(func() { _ = client.Close() })
	st, err := redisstore.New(context.Background(), client, redisstore.WithShards(6), redisstore.WithPrefix("cluster"))
	require.NoError(t, err)
	f := storeFactory{name: "cluster", new: func(*testing.T, *fakeclock.Clock) store.Store { return st }}
	b := setup(t, f, plait.WithClock(clock.Real{}))
	b.handle(t, "noop", noop)
	var ids []string
	for i := 0; i < 12; i++ {
		run := b.submit(t, plait.NewWorkflow("diamond").
			Task("a", "noop", nil).
			Task("b", "noop", nil, plait.After("a")).
			Task("c", "noop", nil, plait.After("a")).
			Task("d", "noop", nil, plait.After("b", "c")))
		ids = append(ids, run.ID)
	}
	b.start(t)
	for _, id := range ids {
		require.Equal(t, plait.RunCompleted, b.wait(t, id).Status, "every run must complete on a sharded cluster")
	}
}
