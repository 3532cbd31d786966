package redisstore_test

import (
	"context"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// BenchmarkIdlePickup measures how long an idle worker blocked in ReadyWait
// takes to notice a task created on any shard: each iteration waits until
// the worker has emptied the queues and is blocked, creates a one-task run
// (the runs' ids spread them over the shards in turn), and times the
// create's start to ReadyWait's return. It reports the p50 and p99 of
// that latency, with 1 and 16 shards, on a plain client to one
// redis-server and on a cluster client to a three-master cluster.
//
//	go test -run '^$' -bench IdlePickup -benchtime 400x ./store/redisstore
func BenchmarkIdlePickup(b *testing.B) {
	if server.addr == "" {
		redistest.Skip(b, errString(server.missing))
	}
	for _, shards := range []int{1, 16} {
		b.Run("redis-server/shards="+strconv.Itoa(shards), func(b *testing.B) {
			c := redis.NewClient(&redis.Options{Addr: server.addr})
			b.Cleanup(func() { _ = c.Close() })
			measurePickup(b, c, shards)
		})
	}
	cluster, err := redistest.StartCluster(3)
	if err != nil {
		b.Logf("no cluster: %v", err)
		return
	}
	b.Cleanup(cluster.Close)
	for _, shards := range []int{1, 16} {
		b.Run("cluster/shards="+strconv.Itoa(shards), func(b *testing.B) {
			c := cluster.Client()
			b.Cleanup(func() { _ = c.Close() })
			measurePickup(b, c, shards)
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func measurePickup(b *testing.B, c redis.UniversalClient, shards int) {
	ctx := context.Background()
	s, err := redisstore.New(ctx, c, redisstore.WithShards(shards), redisstore.WithLogger(quietLogger()),
		redisstore.WithPrefix("pickup"+strconv.FormatInt(prefixes.Add(1), 10)))
	require.NoError(b, err)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h", Queue: store.DefaultQueue}}}
	idle := make(chan struct{})
	woke := make(chan time.Time)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		for {
			for {
				res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 100, LeaseDuration: time.Minute})
				if err != nil {
					done <- err
					return
				}
				if len(res.Tasks) == 0 {
					break
				}
			}
			select {
			case idle <- struct{}{}:
			case <-wctx.Done():
				done <- nil
				return
			}
			if err := s.ReadyWait(wctx, &store.ReadyWaitParams{Timeout: 5 * time.Second}); err != nil {
				done <- err
				return
			}
			select {
			case woke <- time.Now():
			case <-wctx.Done():
				done <- nil
				return
			}
		}
	}()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		<-idle
		// Pacing, not a condition: the worker is in ReadyWait by now or
		// about to be; either way it must see the task.
		time.Sleep(2 * time.Millisecond)
		t0 := time.Now()
		_, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(b, err)
		lat = append(lat, (<-woke).Sub(t0))
	}
	b.StopTimer()
	stop()
	require.NoError(b, <-done)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(q(1), "max-ms")
}
