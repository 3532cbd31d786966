package plait_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plaitdag/plait"
)

// BenchmarkLimits measures what a limit costs: no-op single-task runs on
// 10 handler slots, as BenchmarkIndependentTasks, with no limit, with a
// per-key concurrency limit of 2 over 1000 keys (checked on every claim,
// rarely binding), and with a queue limit of 5 (binding: half the slots).
func BenchmarkLimits(b *testing.B) {
	variants := []struct {
		name string
		opts []plait.Option
		task func(i int) []plait.TaskOption
	}{
		{"none", nil, func(int) []plait.TaskOption { return nil }},
		{"key", nil, func(i int) []plait.TaskOption {
			return []plait.TaskOption{plait.ConcurrencyKey(fmt.Sprintf("customer-%d", i%1000), 2)}
		}},
		{"queue", []plait.Option{plait.WithQueueLimit(plait.DefaultQueue, 5)}, func(int) []plait.TaskOption { return nil }},
	}
	for _, st := range benchStores() {
		for _, v := range variants {
			b.Run(st.name+"/"+v.name, func(b *testing.B) {
				var finished atomic.Int64
				done := make(chan struct{})
				n := int64(b.N)
				s := benchScheduler(b, st.new(b), 10, func(e plait.Event) {
					if e.Type == plait.EventRunFinished && finished.Add(1) == n {
						close(done)
					}
				}, v.opts...)
				if err := s.Handle("noop", noop); err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				b.StopTimer()
				for i := 0; i < b.N; i++ {
					wf := plait.NewWorkflow("one").Task("t", "noop", plait.Raw(make([]byte, 100)), v.task(i)...)
					if _, err := s.Submit(ctx, wf); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				start := time.Now()
				stopped := make(chan error, 1)
				go func() { stopped <- s.Run(ctx) }()
				select {
				case <-done:
				case <-time.After(5 * time.Minute):
					b.Fatal("workload did not finish")
				}
				elapsed := time.Since(start)
				b.StopTimer()
				cancel()
				if err := <-stopped; err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "tasks/s")
			})
		}
	}
}
