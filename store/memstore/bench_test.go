package memstore_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

// BenchmarkClaimFinish measures one claim plus one successful finish per
// task, claimed and finished in batches of 64 independent no-op tasks.
func BenchmarkClaimFinish(b *testing.B) {
	const batch = 64
	ctx := context.Background()
	s := newStore(b)
	tasks := make([]store.TaskSpec, batch)
	for i := range tasks {
		tasks[i] = store.TaskSpec{Name: "t" + strconv.Itoa(i), Handler: "noop", Queue: store.DefaultQueue}
	}
	wf := &store.WorkflowSpec{Name: "bench", Strategy: store.StrategyContinue, Tasks: tasks}
	claim := &store.TaskClaimParams{WorkerID: "w", Limit: batch, LeaseDuration: time.Minute}
	fin := &store.TaskFinishParams{WorkerID: "w", Outcomes: make([]store.TaskOutcome, 0, batch)}

	for n := 0; n < b.N; n += batch {
		if _, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf}); err != nil {
			b.Fatal(err)
		}
	}

	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		res, err := s.TaskClaim(ctx, claim)
		if err != nil || len(res.Tasks) != batch {
			b.Fatalf("claimed %d, err %v", len(res.Tasks), err)
		}
		fin.Outcomes = fin.Outcomes[:0]
		for _, ct := range res.Tasks {
			fin.Outcomes = append(fin.Outcomes, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded})
		}
		out, err := s.TaskFinish(ctx, fin)
		if err != nil || out[batch-1].Err != nil {
			b.Fatalf("finish: %v", err)
		}
		done += batch
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}

// BenchmarkMemoryAfterRetention reports the heap a store still holds per
// run once its runs are freed: it creates and finishes 200,000 one-task
// runs with a retention of one second, moves the clock past it, prunes as
// the janitor does, collects garbage and reports the heap above what the
// empty store held, per run. The event ring, at its default cap, counts
// in the figure: it is full by then.
func BenchmarkMemoryAfterRetention(b *testing.B) {
	const runs, batch = 200_000, 1000
	ctx := context.Background()
	wf := &store.WorkflowSpec{Name: "bench", Tasks: []store.TaskSpec{{Name: "a", Handler: "noop"}}}
	create := make([]*store.RunCreateParams, batch)
	for i := range create {
		create[i] = &store.RunCreateParams{Workflow: wf}
	}
	claim := &store.TaskClaimParams{WorkerID: "w", Limit: batch, LeaseDuration: time.Minute}
	fin := &store.TaskFinishParams{WorkerID: "w", Outcomes: make([]store.TaskOutcome, 0, batch)}
	var perRun float64
	for b.Loop() {
		clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
		s := newStore(b, memstore.WithClock(clk), memstore.WithRetention(time.Second))
		base := heapAfterGC()
		for n := 0; n < runs; n += batch {
			if _, err := s.RunCreateMany(ctx, create); err != nil {
				b.Fatal(err)
			}
			res, err := s.TaskClaim(ctx, claim)
			if err != nil || len(res.Tasks) != batch {
				b.Fatalf("claimed %d, err %v", len(res.Tasks), err)
			}
			fin.Outcomes = fin.Outcomes[:0]
			for _, ct := range res.Tasks {
				fin.Outcomes = append(fin.Outcomes, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded})
			}
			if _, err := s.TaskFinish(ctx, fin); err != nil {
				b.Fatal(err)
			}
		}
		clk.Advance(2 * time.Second)
		pr, err := s.RunPrune(ctx, &store.RunPruneParams{Limit: 1000})
		if err != nil || pr.Pruned != runs {
			b.Fatalf("pruned %v, err %v", pr, err)
		}
		perRun = (float64(heapAfterGC()) - float64(base)) / runs
		runtime.KeepAlive(s)
	}
	b.ReportMetric(perRun, "B/run")
}

// heapAfterGC collects garbage and returns the bytes of live heap.
func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
