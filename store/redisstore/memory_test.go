package redisstore_test

import (
	"context"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// Memory budgets per single-task run (100 B payload) on redis-server with
// jemalloc and default encodings, in bytes of used_memory: a pending run
// and a finished run kept for retention, with their events (entries in the
// shard's stream, bounded by its cap). Measured at about 680 B and 955 B
// (record format 8, its name index a stream); the budgets leave about 8 % for the allocator's
// rounding and for the longer time offsets a loaded machine writes.
const (
	memBudgetPending  = 740
	memBudgetFinished = 1030
)

// TestMemoryPerRun measures the Redis memory of single-task runs with a
// 100-byte payload: used_memory after submitting n runs, then after
// claiming and finishing them all (kept for retention), per run, on a
// private redis-server. docs/redis-schema.md quotes its output:
//
//	go test -run TestMemoryPerRun -v ./store/redisstore/
func TestMemoryPerRun(t *testing.T) {
	c := redistest.Private(t)
	ctx := context.Background()

	const n = 5000
	random := make([]byte, 100)
	rand.New(rand.NewSource(1)).Read(random)
	text := []byte(strings.Repeat(`{"id":1234,"kind":"resize"}`, 4)[:100])
	for _, tc := range []struct {
		name    string
		payload []byte
		opts    []redisstore.Option
	}{
		{"plain", random, nil},
		{"compression, random payload", random, []redisstore.Option{redisstore.WithCompression(64)}},
		{"compression, JSON payload", text, []redisstore.Option{redisstore.WithCompression(64)}},
	} {
		require.NoError(t, c.FlushAll(ctx).Err())
		s, err := redisstore.New(ctx, c, append([]redisstore.Option{redisstore.WithLogger(quietLogger())}, tc.opts...)...)
		require.NoError(t, err)
		wf := &store.WorkflowSpec{Name: "one", Tasks: []store.TaskSpec{{Name: "t", Handler: "noop", Payload: tc.payload}}}
		worker := "vm-" + strconv.Itoa(os.Getpid())
		lifecycle := func(runs int) {
			for i := 0; i < runs; i++ {
				_, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
				require.NoError(t, err)
			}
		}
		drain := func() {
			for {
				res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: worker, Limit: 64, LeaseDuration: time.Minute})
				require.NoError(t, err)
				if len(res.Tasks) == 0 {
					return
				}
				outs := make([]store.TaskOutcome, len(res.Tasks))
				for i, ct := range res.Tasks {
					outs[i] = store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}
				}
				fin, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: worker, Outcomes: outs})
				require.NoError(t, err)
				for _, f := range fin {
					require.NoError(t, f.Err)
				}
			}
		}
		// warm up: scripts loaded, shard keys and their allocations exist.
		lifecycle(100)
		drain()
		base := usedMemory(t, c)
		lifecycle(n)
		pending := float64(usedMemory(t, c)-base) / n
		drain()
		finished := float64(usedMemory(t, c)-base) / n
		t.Logf("%s: %d single-task runs, 100 B payload: pending %.0f B/run, finished %.0f B/run", tc.name, n, pending, finished)
		if allocator(t, c) == "jemalloc" && tc.name == "plain" {
			require.LessOrEqual(t, pending, float64(memBudgetPending), "pending run over budget")
			require.LessOrEqual(t, finished, float64(memBudgetFinished), "finished run over budget")
		}
	}
}

func usedMemory(t *testing.T, c *redis.Client) int64 {
	return infoInt(t, c, "used_memory")
}

func allocator(t *testing.T, c *redis.Client) string {
	info, err := c.Info(context.Background(), "memory").Result()
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "mem_allocator:"); ok {
			return strings.SplitN(v, "-", 2)[0]
		}
	}
	return ""
}

func infoInt(t *testing.T, c *redis.Client, field string) int64 {
	info, err := c.Info(context.Background(), "memory").Result()
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("INFO memory has no %s", field)
	return 0
}
