package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// BenchmarkMemoryPerFinishedRun measures the used_memory a finished run of
// ten tasks keeps for its retention, with its attempt history (one attempt
// each, and a second one for two tasks of ten, which retry) and, in the "logs" case, three log
// lines per attempt sent in one append: the delta over 10,000 runs on a
// private redis-server, reported as B/run. It does the same work whatever
// b.N is; run it once:
//
//	go test -run '^$' -bench MemoryPerFinishedRun -benchtime 1x ./store/redisstore/
func BenchmarkMemoryPerFinishedRun(b *testing.B) {
	for _, logs := range []bool{false, true} {
		name := "history"
		if logs {
			name = "history+logs"
		}
		b.Run(name, func(b *testing.B) {
			srv, err := redistest.Start()
			if err != nil {
				b.Skip(err)
			}
			defer srv.Close()
			c := srv.Client()
			defer c.Close()
			ctx := context.Background()
			s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()))
			if err != nil {
				b.Fatal(err)
			}
			const runs, tasks = 10000, 10
			wf := &store.WorkflowSpec{Name: "bench"}
			for i := 0; i < tasks; i++ {
				wf.Tasks = append(wf.Tasks, store.TaskSpec{Name: "t" + strconv.Itoa(i), Handler: "h", Payload: []byte(`{"n":1}`)})
			}
			cycle := func(n int) {
				params := make([]*store.RunCreateParams, n)
				for i := range params {
					params[i] = &store.RunCreateParams{Workflow: wf}
				}
				for i := 0; i < n; i += 256 {
					if _, err := s.RunCreateMany(ctx, params[i:min(i+256, n)]); err != nil {
						b.Fatal(err)
					}
				}
				drainBench(b, s, logs)
				drainBench(b, s, logs) // the retries
			}
			cycle(100) // warm-up: scripts, sequence, shard keys
			before := infoUsedMemory(b, c)
			b.ResetTimer()
			cycle(runs)
			after := infoUsedMemory(b, c)
			b.ReportMetric(float64(after-before)/runs, "B/run")
		})
	}
}

// drainBench claims and finishes every ready task, 100 at a time: every
// task named t2 or t7 retries once, without a delay. With logs, each attempt sends
// three lines in one append, eight appends at a time.
func drainBench(b *testing.B, s *redisstore.Store, logs bool) {
	ctx := context.Background()
	line := strings.Repeat("x", 40)
	for {
		res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "node-1.w1", Limit: 100, LeaseDuration: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Tasks) == 0 {
			return
		}
		if logs {
			var wg sync.WaitGroup
			sem := make(chan struct{}, 8)
			for _, ct := range res.Tasks {
				wg.Add(1)
				sem <- struct{}{}
				go func(ct *store.ClaimedTask) {
					defer wg.Done()
					defer func() { <-sem }()
					now := time.Now()
					_, err := s.TaskLogAppend(ctx, &store.TaskLogAppendParams{Lease: ct.Lease, Attempt: ct.Attempt, Seq: 1, Lines: []store.LogLine{
						{Time: now, Text: "start " + line}, {Time: now, Text: "working " + line}, {Time: now, Text: "done " + line}}})
					if err != nil {
						b.Error(err)
					}
				}(ct)
			}
			wg.Wait()
		}
		outs := make([]store.TaskOutcome, len(res.Tasks))
		for i, ct := range res.Tasks {
			outs[i] = store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}
			if ct.Attempt == 1 && ct.Lease.Task[1]%5 == 0 {
				outs[i] = store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeRetry, Error: "flaky upstream"}
			}
		}
		if _, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "node-1.w1", Outcomes: outs}); err != nil {
			b.Fatal(err)
		}
	}
}

// infoUsedMemory reads used_memory from INFO memory.
func infoUsedMemory(b *testing.B, c *redis.Client) int64 {
	info, err := c.Info(context.Background(), "memory").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("no used_memory in INFO")
	return 0
}
