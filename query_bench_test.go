package plait_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// queryBenchRuns is the number of runs stored before a query is timed.
const queryBenchRuns = 100_000

// queryBenchMem keeps the filled memstore across the runs of
// BenchmarkRunQuery (the testing package calls it more than once); the
// Redis runs stay on the shared server under one prefix, and a later run
// finds them there.
var queryBenchMem struct {
	once  sync.Once
	store store.Store
	err   error
}

// BenchmarkRunQuery measures one page of 50 runs of one service and tenant
// among 100,000 stored runs (100 services of 10 tenants, so 100 runs per
// service and tenant), newest first, with their tasks:
//
//	go test -run '^$' -bench RunList -benchtime 200x .
func BenchmarkRunQuery(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"memstore", "redis"} {
		b.Run(name, func(b *testing.B) {
			qs := queryBenchStore(b, name)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				svc := "svc" + strconv.Itoa(i%100)
				res, err := qs.RunList(ctx, &plait.RunListParams{
					Filter: plait.RunFilter{Service: svc, Tenant: "t" + strconv.Itoa(i%10)}, Limit: 50})
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Runs) != 50 {
					b.Fatalf("page of %d runs", len(res.Runs))
				}
			}
		})
	}
}

// queryBenchStore returns the filled store of BenchmarkRunQuery and
// BenchmarkRunCount: "memstore" or "redis".
func queryBenchStore(b *testing.B, name string) store.QueryStore {
	ctx := context.Background()
	var st store.Store
	var err error
	if name == "memstore" {
		queryBenchMem.once.Do(func() {
			queryBenchMem.store = newMemStore(b)
			queryBenchMem.err = fillQueryBench(ctx, queryBenchMem.store)
		})
		st, err = queryBenchMem.store, queryBenchMem.err
	} else {
		srv, serr := sharedRedis()
		if serr != nil {
			b.Skipf("redis-server: %v", serr)
		}
		client := redis.NewClient(&redis.Options{Addr: srv.Addr})
		b.Cleanup(func() { _ = client.Close() })
		st, err = redisstore.New(ctx, client, redisstore.WithPrefix("querybench"))
		if err == nil {
			err = fillQueryBench(ctx, st)
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	return st.(store.QueryStore)
}

// BenchmarkRunCount measures a count among the 100,000 runs of
// BenchmarkRunQuery: indexed (every pending run: ZCOUNTs on Redis) and
// read (one tenant's runs of one workflow, 10,000 of them, each read):
//
//	go test -run '^$' -bench RunCount -benchtime 20x .
func BenchmarkRunCount(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"memstore", "redis"} {
		for _, c := range []struct {
			kind string
			f    plait.RunFilter
			want int64
		}{
			{"indexed", plait.RunFilter{Statuses: []plait.RunStatus{plait.RunPending}}, queryBenchRuns},
			{"read", plait.RunFilter{Tenant: "t3", Workflow: "report"}, queryBenchRuns / 10},
		} {
			b.Run(name+"/"+c.kind, func(b *testing.B) {
				qs := queryBenchStore(b, name)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					res, err := qs.RunCount(ctx, &plait.RunCountParams{Filter: c.f})
					if err != nil {
						b.Fatal(err)
					}
					if n := res.Counts[plait.RunPending]; n != c.want || res.Capped {
						b.Fatalf("counted %d (capped %v), want %d", n, res.Capped, c.want)
					}
				}
			})
		}
	}
}

// fillQueryBench stores queryBenchRuns runs, unless the store holds them
// already.
func fillQueryBench(ctx context.Context, s store.Store) error {
	counts, err := s.(store.QueryStore).RunCount(ctx, &store.RunCountParams{})
	if err != nil {
		return err
	}
	if counts.Counts[plait.RunPending] >= queryBenchRuns {
		return nil
	}
	wf := &plait.WorkflowSpec{Name: "report", Tasks: []plait.TaskSpec{{Name: "t", Handler: "noop", Payload: make([]byte, 100)}}}
	const batch = 1000
	for i := 0; i < queryBenchRuns; i += batch {
		params := make([]*store.RunCreateParams, batch)
		for j := range params {
			n := i + j
			params[j] = &store.RunCreateParams{Workflow: wf, Service: "svc" + strconv.Itoa(n%100), Tenant: "t" + strconv.Itoa(n/100%10)}
		}
		outs, err := s.RunCreateMany(ctx, params)
		if err != nil {
			return err
		}
		for _, o := range outs {
			if o.Err != nil {
				return o.Err
			}
		}
	}
	return nil
}
