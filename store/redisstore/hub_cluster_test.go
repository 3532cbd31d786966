package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
)

// TestClusterRunWaitSubscribesOnTheRunsMaster: on a cluster, RunWait
// subscribes to the events channel on the master of the run's shard, where
// the script that ends the run publishes; the waits of runs on one master
// share one connection and one subscription, and each ends with its run.
func TestClusterRunWaitSubscribesOnTheRunsMaster(t *testing.T) {
	cluster, err := redistest.StartCluster(3)
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(cluster.Close)
	c := cluster.Client()
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	s, err := New(ctx, c, WithShards(16), WithPrefix("runhub"))
	require.NoError(t, err)
	var runs []string
	for range 16 { // ids take the shards in turn
		runs = append(runs, createOneTaskRun(t, s))
	}
	done := make(chan error, len(runs))
	for _, id := range runs {
		go func() {
			run, err := s.RunWait(ctx, &store.RunWaitParams{ID: id})
			if err == nil && run.Status != store.RunCancelled {
				err = errUnexpectedStatus(run.Status)
			}
			done <- err
		}()
	}
	ch := s.keys.eventsChannel()
	masters := map[string]bool{}
	for _, id := range runs {
		shard, err := s.runShard(id)
		require.NoError(t, err)
		master, err := c.MasterForKey(ctx, s.keys.base(shard))
		require.NoError(t, err)
		masters[master.Options().Addr] = true
		// The servers are other processes: they are asked until the wait
		// has subscribed.
		require.Eventually(t, func() bool {
			s.runHubs.mu.Lock()
			h := s.runHubs.byAddr[master.Options().Addr]
			s.runHubs.mu.Unlock()
			if h == nil {
				return false
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			c := h.chans[ch]
			return c != nil && c.confirmed && len(c.runs[id]) == 1
		}, 10*time.Second, time.Millisecond, "run %s is waited for on its master's hub", id)
	}
	require.Len(t, masters, len(cluster.Addrs), "the runs' shards span every master")
	for _, addr := range cluster.Addrs {
		node := redis.NewClient(&redis.Options{Addr: addr})
		n := node.PubSubNumSub(ctx, ch).Val()[ch]
		_ = node.Close()
		require.EqualValues(t, 1, n, "one subscription on %s for the waits of its runs", addr)
	}
	s.runHubs.mu.Lock()
	hubs := len(s.runHubs.byAddr)
	s.runHubs.mu.Unlock()
	require.Equal(t, len(cluster.Addrs), hubs, "one hub per master")
	for _, id := range runs {
		_, err := s.RunCancel(ctx, &store.RunCancelParams{ID: id})
		require.NoError(t, err)
	}
	for range runs {
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("a wait did not return after its run ended")
		}
	}
}
