package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// BenchmarkScripts measures the Redis CPU the scripts cost, from the usec
// of INFO commandstats (evalsha, eval and fcall, and the INCRBY of the run
// id sequence): b.N single-task runs
// (100 B payload) submitted through plait.Scheduler.Submit, then claimed and
// finished 64 at a time with TaskFinishClaim. docs/redis-schema.md quotes
// its output:
//
//	go test -run '^$' -bench Scripts -benchtime 5000x ./store/redisstore/
func BenchmarkScripts(b *testing.B) {
	ctx := context.Background()
	c, s, p := benchStore(b)
	wf := plait.NewWorkflow("one").Task("t", "noop", plait.Raw(make([]byte, 100)))
	submit := func(n int) {
		for i := 0; i < n; i++ {
			if _, err := p.Submit(ctx, wf); err != nil {
				b.Fatal(err)
			}
		}
	}
	worker := "bench"
	// Every claim carries a request id, as a worker's do, so the figures
	// include the claim memory.
	reqs := 0
	rid := func() string {
		reqs++
		return "bench-" + strconv.Itoa(reqs)
	}
	drain := func() int {
		done := 0
		var outs []store.TaskOutcome
		for {
			res, err := s.TaskFinishClaim(ctx, &store.TaskFinishClaimParams{
				Finish: store.TaskFinishParams{WorkerID: worker, Outcomes: outs},
				Claim:  store.TaskClaimParams{WorkerID: worker, Limit: 64, LeaseDuration: time.Minute, RequestID: rid()},
			})
			if err != nil {
				b.Fatal(err)
			}
			for _, f := range res.Finished {
				if f.Err != nil {
					b.Fatal(f.Err)
				}
			}
			done += len(outs)
			if len(res.Claimed.Tasks) == 0 {
				return done
			}
			outs = outs[:0]
			for _, ct := range res.Claimed.Tasks {
				outs = append(outs, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded})
			}
		}
	}
	// warm up: scripts loaded, shard keys exist.
	submit(100)
	drain()
	c.ConfigResetStat(ctx)
	b.ResetTimer()
	submit(b.N)
	calls, us := scriptStats(b, c)
	c.ConfigResetStat(ctx)
	n := drain()
	b.StopTimer()
	calls2, us2 := scriptStats(b, c)
	if n != b.N {
		b.Fatalf("finished %d of %d", n, b.N)
	}
	// the same again with claims and finishes in calls of their own,
	// measured apart (commandstats reset between them).
	submit(b.N)
	var claimUS, finishUS float64
	claimed := 0
	for {
		c.ConfigResetStat(ctx)
		res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: worker, Limit: 64, LeaseDuration: time.Minute, RequestID: rid()})
		if err != nil {
			b.Fatal(err)
		}
		_, u := scriptStats(b, c)
		claimUS += u
		if len(res.Tasks) == 0 {
			break
		}
		claimed += len(res.Tasks)
		var outs []store.TaskOutcome
		for _, ct := range res.Tasks {
			outs = append(outs, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded})
		}
		c.ConfigResetStat(ctx)
		fres, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: worker, Outcomes: outs})
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range fres {
			if f.Err != nil {
				b.Fatal(f.Err)
			}
		}
		_, u = scriptStats(b, c)
		finishUS += u
	}
	if claimed != b.N {
		b.Fatalf("claimed %d of %d", claimed, b.N)
	}
	b.ReportMetric(claimUS/float64(b.N), "claim-redis-µs/task")
	b.ReportMetric(finishUS/float64(b.N), "finish-redis-µs/task")
	b.ReportMetric(us/float64(b.N), "submit-redis-µs/run")
	b.ReportMetric(float64(calls)/float64(b.N), "submit-calls/run")
	b.ReportMetric(us2/float64(b.N), "claim+finish-redis-µs/task")
	b.ReportMetric(float64(calls2), "claim+finish-calls")
}

// scriptStats sums the calls and usec of the script commands in INFO
// commandstats, and of INCRBY: RunCreate reserves run ids with a plain
// INCRBY per block (no script calls INCRBY).
func scriptStats(b *testing.B, c *redis.Client) (calls int64, usec float64) {
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval" && name != "cmdstat_fcall" && name != "cmdstat_incrby") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				n, _ := strconv.ParseInt(v, 10, 64)
				calls += n
			case "usec":
				n, _ := strconv.ParseFloat(v, 64)
				usec += n
			}
		}
	}
	return calls, usec
}

// BenchmarkJoinClaim measures the Redis CPU of claiming a join: a run of
// 1000 parents with results, each succeeded, and one child after all of
// them; the claim of the child reads every parent's state and result. It
// reports Redis µs per parent of that one claim.
//
//	go test -run '^$' -bench JoinClaim -benchtime 5x ./store/redisstore/
func BenchmarkJoinClaim(b *testing.B) {
	const parents = 1000
	ctx := context.Background()
	c, s, p := benchStore(b)
	wf := plait.NewWorkflow("join")
	names := make([]string, parents)
	for i := range names {
		names[i] = "p" + strconv.Itoa(i)
		wf.Task(names[i], "noop", nil)
	}
	wf.Task("join", "noop", nil, plait.After(names...))
	worker := "bench"
	var us float64
	for i := 0; i < b.N; i++ {
		if _, err := p.Submit(ctx, wf); err != nil {
			b.Fatal(err)
		}
		for {
			res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: worker, Limit: 256, LeaseDuration: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Tasks) == 0 {
				b.Fatal("no join claimed")
			}
			if res.Tasks[0].Lease.Task == "join" {
				break
			}
			var outs []store.TaskOutcome
			for _, ct := range res.Tasks {
				outs = append(outs, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded, Result: []byte("result")})
			}
			if _, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: worker, Outcomes: outs}); err != nil {
				b.Fatal(err)
			}
			c.ConfigResetStat(ctx)
		}
		_, u := scriptStats(b, c)
		us += u
	}
	b.ReportMetric(us/float64(b.N)/parents, "join-claim-redis-µs/parent")
}

// benchStore starts a private redis-server and returns a client for it, a
// store on it and a scheduler that submits without local handlers.
func benchStore(b *testing.B) (*redis.Client, *redisstore.Store, *plait.Scheduler) {
	b.Helper()
	srv, err := redistest.Start()
	if err != nil {
		redistest.Skip(b, err)
	}
	b.Cleanup(func() { srv.Close() })
	c := srv.Client()
	b.Cleanup(func() { c.Close() })
	s, err := redisstore.New(context.Background(), c, redisstore.WithLogger(quietLogger()))
	if err != nil {
		b.Fatal(err)
	}
	p, err := plait.New(s, plait.WithRemoteHandlers())
	if err != nil {
		b.Fatal(err)
	}
	return c, s, p
}
