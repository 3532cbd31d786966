package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// clusterWake is a 16-shard store on a three-master cluster, with the
// cluster client it runs on.
func clusterWake(t *testing.T, prefix string) (*redis.ClusterClient, *redisstore.Store) {
	t.Helper()
	cluster, err := redistest.StartCluster(3)
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(cluster.Close)
	c := cluster.Client()
	t.Cleanup(func() { _ = c.Close() })
	s, err := redisstore.New(context.Background(), c, redisstore.WithShards(16), redisstore.WithPrefix(prefix), redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	return c, s
}

// wakeList is the wake list of the default queue on a shard
// (docs/redis-schema.md).
func wakeList(prefix string, shard int) string {
	return prefix + ":{" + strconv.Itoa(shard) + "}:n:" + store.DefaultQueue
}

// tokens counts the tokens in the default queue's wake lists.
func tokens(t *testing.T, c *redis.ClusterClient, prefix string) int64 {
	t.Helper()
	var n int64
	for shard := range 16 {
		l, err := c.LLen(context.Background(), wakeList(prefix, shard)).Result()
		require.NoError(t, err)
		n += l
	}
	return n
}

// TestClusterReadyWaitTakesAWaitingToken: a wait that starts with a token
// already waiting on one shard returns at once, taking that token and no
// other, whatever the shard: the wait's other BLPOPs, sent at the same
// moment, are let go without being waited for (a CLIENT UNBLOCK that
// reaches the server before its BLPOP unblocks nothing, and such a BLPOP
// used to hold the wait for its whole second).
func TestClusterReadyWaitTakesAWaitingToken(t *testing.T) {
	c, s := clusterWake(t, "waiting")
	ctx := context.Background()
	for i := range 48 {
		shard := i % 16
		require.NoError(t, c.RPush(ctx, wakeList("waiting", shard), "1").Err())
		begin := time.Now()
		require.NoError(t, s.ReadyWait(ctx, &store.ReadyWaitParams{Timeout: time.Hour}))
		require.Less(t, time.Since(begin), 500*time.Millisecond, "wait %d, token on shard %d", i, shard)
		// The BLPOPs let go answer in the background and push back what
		// they took: the count settles at zero.
		require.Eventually(t, func() bool { return tokens(t, c, "waiting") == 0 }, 10*time.Second, time.Millisecond)
	}
}

// TestClusterReadyWaitKeepsTokensBetweenWaits: a token pushed while no wait
// holds the store's blocking connections (some of whose BLPOPs may still be
// in flight) is left for, or pushed back to, the next wait, which takes it
// at once; no token is lost or made up.
func TestClusterReadyWaitKeepsTokensBetweenWaits(t *testing.T) {
	c, s := clusterWake(t, "between")
	ctx := context.Background()
	require.NoError(t, c.RPush(ctx, wakeList("between", 0), "1").Err())
	for i := range 48 {
		require.NoError(t, s.ReadyWait(ctx, &store.ReadyWaitParams{Timeout: time.Hour}))
		// the wait just ended: push the next token at once, to another shard
		require.NoError(t, c.RPush(ctx, wakeList("between", (i*7+3)%16), "1").Err())
		require.Eventually(t, func() bool { return tokens(t, c, "between") == 1 }, 10*time.Second, time.Millisecond,
			"the token pushed after wait %d is kept", i)
	}
	begin := time.Now()
	require.NoError(t, s.ReadyWait(ctx, &store.ReadyWaitParams{Timeout: time.Hour}))
	require.Less(t, time.Since(begin), 500*time.Millisecond)
	require.Eventually(t, func() bool { return tokens(t, c, "between") == 0 }, 10*time.Second, time.Millisecond)
}

// TestClusterReadyWaitOneTokenOneWaiter: of two processes waiting (two
// stores on one prefix), a token wakes one; the other waits on to its
// timeout, which it keeps to within the timer's precision (a BLPOP's own
// timeout is whole seconds).
func TestClusterReadyWaitOneTokenOneWaiter(t *testing.T) {
	c, a := clusterWake(t, "one")
	b, err := redisstore.New(context.Background(), c, redisstore.WithShards(16), redisstore.WithPrefix("one"), redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	ctx := context.Background()
	const timeout = 1500 * time.Millisecond
	type woke struct {
		who   string
		after time.Duration
	}
	out := make(chan woke, 2)
	errs := make(chan error, 2)
	begin := time.Now()
	for who, s := range map[string]*redisstore.Store{"a": a, "b": b} {
		go func() {
			errs <- s.ReadyWait(ctx, &store.ReadyWaitParams{Timeout: timeout})
			out <- woke{who, time.Since(begin)}
		}()
	}
	// Both are blocked on every shard once the masters hold 32 blocked
	// clients; the servers are other processes, so they are asked again.
	require.Eventually(t, func() bool { return blockedClients(t, c) == 32 }, 10*time.Second, time.Millisecond)
	require.NoError(t, c.RPush(ctx, wakeList("one", 5), "1").Err())
	first := <-out
	require.Less(t, first.after, timeout-200*time.Millisecond, "the token woke %s at once", first.who)
	second := <-out
	require.GreaterOrEqual(t, second.after, timeout, "%s waited to its timeout", second.who)
	require.Less(t, second.after, timeout+500*time.Millisecond, "%s returned at its timeout", second.who)
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	require.Equal(t, int64(0), tokens(t, c, "one"))
}

// blockedClients sums blocked_clients over the cluster's masters.
func blockedClients(t *testing.T, c *redis.ClusterClient) int {
	return clientCount(t, c, "blocked_clients")
}

// clientCount sums a field of INFO clients over the cluster's masters.
func clientCount(t *testing.T, c *redis.ClusterClient, field string) int {
	t.Helper()
	var n atomic.Int64
	err := c.ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error {
		info, err := m.Info(ctx, "clients").Result()
		if err != nil {
			return err
		}
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
				k, _ := strconv.Atoi(v)
				n.Add(int64(k))
			}
		}
		return nil
	})
	require.NoError(t, err)
	return int(n.Load())
}

// TestClusterReadyWaitClosesItsConnectionsWhenStopped: the blocking
// connections are the wait's own, not the cluster client's, so a wait
// whose context ends (its worker is stopping) closes them.
func TestClusterReadyWaitClosesItsConnectionsWhenStopped(t *testing.T) {
	c, s := clusterWake(t, "stopped")
	ctx := context.Background()
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.ReadyWait(wctx, &store.ReadyWaitParams{Timeout: time.Hour}) }()
	// The servers are other processes: they are asked until they agree.
	require.Eventually(t, func() bool { return blpopClients(t, c) == 16 }, 10*time.Second, time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	require.Eventually(t, func() bool { return blpopClients(t, c) == 0 }, 10*time.Second, time.Millisecond,
		"connections whose last command was BLPOP are left")
}

// blpopClients counts the masters' connections whose last command was
// BLPOP: in the cluster's multi-shard wait, the wait's own.
func blpopClients(t *testing.T, c *redis.ClusterClient) int {
	t.Helper()
	var n atomic.Int64
	err := c.ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error {
		list, err := m.ClientList(ctx).Result()
		if err != nil {
			return err
		}
		for _, line := range strings.Split(list, "\n") {
			if strings.Contains(" "+line+" ", " cmd=blpop ") {
				n.Add(1)
			}
		}
		return nil
	})
	require.NoError(t, err)
	return int(n.Load())
}
