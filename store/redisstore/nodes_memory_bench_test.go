package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// BenchmarkNodeMemory registers 1,000 live nodes, each with two
// capabilities, two queues, three handlers, four held tasks and a full
// history of 100 attempts, and reports the Redis memory they take (the
// server's used_memory before and after) per node and in all.
//
//	go test -run '^$' -bench NodeMemory -benchtime 1x ./store/redisstore
func BenchmarkNodeMemory(b *testing.B) {
	if server.addr == "" {
		redistest.Skip(b, errString(server.missing))
	}
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: server.addr})
	b.Cleanup(func() { _ = c.Close() })
	const nodes, history = 1000, 100
	for i := 0; i < b.N; i++ {
		s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()),
			redisstore.WithPrefix("nodemem"+strconv.FormatInt(prefixes.Add(1), 10)))
		require.NoError(b, err)
		before := nodeUsedMemory(b, c)
		now := time.Now()
		for n := 0; n < nodes; n++ {
			info := store.NodeInfo{ID: "worker-" + strconv.Itoa(n) + ".1a2b3c4d", Name: "worker-" + strconv.Itoa(n), Host: "host-" + strconv.Itoa(n),
				PID: 40000 + n, Version: "v0.9.0", Capabilities: []string{"gpu", "region-eu"}, Queues: []string{"default", "mail"},
				Handlers: []string{"extract", "transform", "load"}, Capacity: 16, Load: 4, Completed: 123456, Failed: 78}
			for t := 0; t < 4; t++ {
				info.Tasks = append(info.Tasks, store.NodeTask{RunID: strconv.Itoa(1000000+t) + "-abcdefghij", Task: "transform", Attempt: 1, StartedAt: now})
			}
			var hist []store.NodeTask
			for h := 1; h <= history; h++ {
				hist = append(hist, store.NodeTask{Seq: int64(h), RunID: strconv.Itoa(900000+h) + "-abcdefghij", Task: "extract", Attempt: 1,
					Outcome: store.OutcomeSucceeded, StartedAt: now, EndedAt: now.Add(time.Second)})
			}
			_, err := s.NodeHeartbeat(ctx, &store.NodeHeartbeatParams{Node: info, TTL: time.Minute, History: hist, HistoryLimit: history})
			require.NoError(b, err)
		}
		used := nodeUsedMemory(b, c) - before
		b.ReportMetric(float64(used)/nodes, "B/node")
		b.ReportMetric(float64(used)/(1<<20), "MiB/1000-nodes")
	}
}

func nodeUsedMemory(b *testing.B, c *redis.Client) int64 {
	info, err := c.InfoMap(context.Background(), "memory").Result()
	require.NoError(b, err)
	n, err := strconv.ParseInt(info["Memory"]["used_memory"], 10, 64)
	require.NoError(b, err)
	return n
}
