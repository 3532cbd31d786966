package plait_test

import (
	"context"
	"testing"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
	"github.com/plaitdag/plait/store/redisstore"
)

// fillRuns creates n single-task runs in batches of 1,000.
func fillRuns(b *testing.B, st store.Store, n int) {
	b.Helper()
	wf := &plait.WorkflowSpec{Name: "one", Tasks: []plait.TaskSpec{{Name: "t", Handler: "noop", Queue: plait.DefaultQueue}}}
	ctx := context.Background()
	for done := 0; done < n; {
		k := min(1000, n-done)
		ps := make([]*store.RunCreateParams, k)
		for i := range ps {
			ps[i] = &store.RunCreateParams{Workflow: wf}
		}
		out, err := st.RunCreateMany(ctx, ps)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range out {
			if o.Err != nil {
				b.Fatal(o.Err)
			}
		}
		done += k
	}
}

// eventBenchStores are the stores of the event and stats benchmarks:
// memstore with room for 200,000 events, Redis with its default cap and
// stats on.
func eventBenchStores() []benchStore {
	return []benchStore{
		{"memstore", func(b *testing.B) store.Store { return newMemStore(b, memstore.WithEventCap(200_000)) }},
		{"redis", func(b *testing.B) store.Store {
			srv, err := sharedRedis()
			if err != nil {
				b.Skipf("redis-server: %v", err)
			}
			return newRedisStore(b, srv.Addr, nil, redisstore.WithStats(0))
		}},
	}
}

// BenchmarkSubscribe measures the events one Subscribe delivers per second
// from a store that holds them already (two per run created).
func BenchmarkSubscribe(b *testing.B) {
	for _, st := range eventBenchStores() {
		b.Run(st.name, func(b *testing.B) {
			if b.N > 200_000 {
				b.Fatal("the stores keep 200,000 events here: run with -benchtime 200000x or less")
			}
			store := st.new(b)
			fillRuns(b, store, (b.N+1)/2)
			s := benchScheduler(b, store, 1, nil)
			ctx := context.Background()
			sub, err := s.Subscribe(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := sub.Next(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
		})
	}
}

// BenchmarkStats measures one Stats call on a store holding 100,000 runs,
// 1,000 of them finished.
func BenchmarkStats(b *testing.B) {
	for _, st := range eventBenchStores() {
		b.Run(st.name, func(b *testing.B) {
			st := st.new(b)
			fillRuns(b, st, 100_000)
			ctx := context.Background()
			for done := 0; done < 1000; {
				res, err := st.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 100, LeaseDuration: time.Minute})
				if err != nil {
					b.Fatal(err)
				}
				outs := make([]store.TaskOutcome, len(res.Tasks))
				for i, ct := range res.Tasks {
					outs[i] = store.TaskOutcome{Lease: ct.Lease, Outcome: plait.OutcomeSucceeded}
				}
				if _, err := st.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: outs}); err != nil {
					b.Fatal(err)
				}
				done += len(res.Tasks)
			}
			s := benchScheduler(b, st, 1, nil)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				stats, err := s.Stats(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if stats.Queues[plait.DefaultQueue].Succeeded != 1000 {
					b.Fatalf("stats: %+v", stats.Queues)
				}
			}
		})
	}
}
