package plait_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/memstore"
)

// benchScheduler runs a scheduler on a fresh memstore with the real clock and
// calls onRunFinished for every finished run.
func benchScheduler(b *testing.B, concurrency int, onRunFinished func()) (*plait.Scheduler, error) {
	b.Helper()
	s, err := plait.New(memstore.New(),
		plait.WithConcurrency(concurrency),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		plait.WithObserver(func(e plait.Event) {
			if e.Type == plait.EventRunFinished {
				onRunFinished()
			}
		}),
	)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Handle("noop", noop); err != nil {
		b.Fatal(err)
	}
	return s, nil
}

func runUntil(b *testing.B, s *plait.Scheduler, done <-chan struct{}) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- s.Run(ctx) }()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		b.Fatal("benchmark workload did not finish")
	}
	b.StopTimer()
	cancel()
	if err := <-stopped; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkIndependentTasks measures no-op single-task runs processed per
// second through the in-memory store (submission not timed).
func BenchmarkIndependentTasks(b *testing.B) {
	for _, c := range []int{10, 50} {
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			var finished atomic.Int64
			done := make(chan struct{})
			n := int64(b.N)
			s, _ := benchScheduler(b, c, func() {
				if finished.Add(1) == n {
					close(done)
				}
			})
			wf := plait.NewWorkflow("one").Task("t", "noop", plait.Raw(make([]byte, 100)))
			ctx := context.Background()
			for i := 0; i < b.N; i++ {
				if _, err := s.Submit(ctx, wf); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			start := time.Now()
			runUntil(b, s, done)
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "tasks/s")
		})
	}
}

// BenchmarkChain measures a 1000-task chain, each task depending on the
// previous one.
func BenchmarkChain(b *testing.B) {
	const length = 1000
	wf := plait.NewWorkflow("chain").Task("t0", "noop", nil)
	for i := 1; i < length; i++ {
		wf.Task(fmt.Sprintf("t%d", i), "noop", nil, plait.After(fmt.Sprintf("t%d", i-1)))
	}
	benchWorkflow(b, wf, length)
}

// BenchmarkFanOutFanIn measures one root, 5000 children and one join.
func BenchmarkFanOutFanIn(b *testing.B) {
	const width = 5000
	wf := plait.NewWorkflow("fan").Task("root", "noop", nil)
	deps := make([]string, width)
	for i := 0; i < width; i++ {
		deps[i] = fmt.Sprintf("c%d", i)
		wf.Task(deps[i], "noop", nil, plait.After("root"))
	}
	wf.Task("join", "noop", nil, plait.After(deps...))
	benchWorkflow(b, wf, width+2)
}

// benchWorkflow submits wf b.N times, one after the other, and times each
// from submit to the run's end.
func benchWorkflow(b *testing.B, wf *plait.Workflow, tasks int) {
	s, _ := benchScheduler(b, 10, func() {})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- s.Run(ctx) }()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		run, err := s.Submit(ctx, wf)
		if err != nil {
			b.Fatal(err)
		}
		final, err := s.Wait(ctx, run.ID)
		if err != nil || final.Status != plait.RunCompleted {
			b.Fatalf("run ended %v: %v", final, err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	if err := <-stopped; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N*tasks)/elapsed.Seconds(), "tasks/s")
	b.ReportMetric(float64(elapsed.Microseconds())/float64(b.N)/1000, "ms/run")
}
