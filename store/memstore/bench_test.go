package memstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
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
