package plait_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

// benchStore builds a fresh store on the real clock.
type benchStore struct {
	name string
	new  func(b *testing.B) store.Store
}

func benchStores() []benchStore {
	return []benchStore{
		{"memstore", func(b *testing.B) store.Store { return newMemStore(b) }},
		{"redis", func(b *testing.B) store.Store {
			srv, err := sharedRedis()
			if err != nil {
				b.Skipf("redis-server: %v", err)
			}
			return newRedisStore(b, srv.Addr, nil)
		}},
	}
}

func benchScheduler(b *testing.B, store store.Store, concurrency int, observer func(plait.Event), extra ...plait.Option) *plait.Scheduler {
	b.Helper()
	opts := append([]plait.Option{
		plait.WithConcurrency(concurrency),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	}, extra...)
	if observer != nil {
		opts = append(opts, plait.WithObserver(observer))
	}
	s, err := plait.New(store, opts...)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkIndependentTasks measures no-op single-task runs (100-byte
// payloads) processed per second; submission is timed apart as enqueue/s.
func BenchmarkIndependentTasks(b *testing.B) {
	for _, st := range benchStores() {
		for _, c := range []int{10, 50} {
			b.Run(fmt.Sprintf("%s/c=%d", st.name, c), func(b *testing.B) {
				var finished atomic.Int64
				done := make(chan struct{})
				n := int64(b.N)
				s := benchScheduler(b, st.new(b), c, func(e plait.Event) {
					if e.Type == plait.EventRunFinished && finished.Add(1) == n {
						close(done)
					}
				})
				if err := s.Handle("noop", noop); err != nil {
					b.Fatal(err)
				}
				wf := plait.NewWorkflow("one").Task("t", "noop", plait.Raw(make([]byte, 100)))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				b.StopTimer()
				enqStart := time.Now()
				for i := 0; i < b.N; i++ {
					if _, err := s.Submit(ctx, wf); err != nil {
						b.Fatal(err)
					}
				}
				enq := time.Since(enqStart)
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
				b.ReportMetric(float64(b.N)/enq.Seconds(), "enqueue/s")
			})
		}
	}
}

// BenchmarkChain measures a 1000-task chain, each task depending on the
// previous one: total time and the hop from a parent's end to its child's
// start.
func BenchmarkChain(b *testing.B) {
	const length = 1000
	wf := plait.NewWorkflow("chain").Task("t0", "rec", nil)
	for i := 1; i < length; i++ {
		wf.Task(fmt.Sprintf("t%d", i), "rec", nil, plait.After(fmt.Sprintf("t%d", i-1)))
	}
	for _, st := range benchStores() {
		b.Run(st.name, func(b *testing.B) {
			hops := benchWorkflow(b, st.new(b), wf, length, func(r *timings) []time.Duration {
				out := make([]time.Duration, 0, length)
				for i := 1; i < length; i++ {
					out = append(out, r.start(fmt.Sprintf("t%d", i)).Sub(r.end(fmt.Sprintf("t%d", i-1))))
				}
				return out
			})
			reportPercentiles(b, hops, "hop")
		})
	}
}

// BenchmarkFanOutFanIn measures one root, 5000 children and one join.
func BenchmarkFanOutFanIn(b *testing.B) {
	const width = 5000
	wf := plait.NewWorkflow("fan").Task("root", "rec", nil)
	deps := make([]string, width)
	for i := 0; i < width; i++ {
		deps[i] = fmt.Sprintf("c%d", i)
		wf.Task(deps[i], "rec", nil, plait.After("root"))
	}
	wf.Task("join", "rec", nil, plait.After(deps...))
	for _, st := range benchStores() {
		b.Run(st.name, func(b *testing.B) {
			benchWorkflow(b, st.new(b), wf, width+2, nil)
		})
	}
}

// timings records when each task's handler started and ended.
type timings struct {
	mu           sync.Mutex
	starts, ends map[string]time.Time
}

func (r *timings) start(n string) time.Time { r.mu.Lock(); defer r.mu.Unlock(); return r.starts[n] }
func (r *timings) end(n string) time.Time   { r.mu.Lock(); defer r.mu.Unlock(); return r.ends[n] }

// benchWorkflow submits wf b.N times, one after the other, times each from
// submit to the run's end, and collects samples from each run's timings.
func benchWorkflow(b *testing.B, store store.Store, wf *plait.Workflow, tasks int, sample func(*timings) []time.Duration) []time.Duration {
	s := benchScheduler(b, store, 10, nil)
	var cur atomic.Pointer[timings]
	if err := s.Handle("rec", func(ctx context.Context, t *plait.Task) (any, error) {
		r := cur.Load()
		now := time.Now()
		r.mu.Lock()
		r.starts[t.Name] = now
		r.mu.Unlock()
		end := time.Now()
		r.mu.Lock()
		r.ends[t.Name] = end
		r.mu.Unlock()
		return nil, nil
	}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- s.Run(ctx) }()
	var samples []time.Duration
	var elapsed time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := &timings{starts: map[string]time.Time{}, ends: map[string]time.Time{}}
		cur.Store(r)
		start := time.Now()
		run, err := s.Submit(ctx, wf)
		if err != nil {
			b.Fatal(err)
		}
		final, err := s.RunWait(ctx, run.ID)
		if err != nil || final.Status != plait.RunCompleted {
			b.Fatalf("run ended %v: %v", final, err)
		}
		elapsed += time.Since(start)
		if sample != nil {
			samples = append(samples, sample(r)...)
		}
	}
	b.StopTimer()
	cancel()
	if err := <-stopped; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N*tasks)/elapsed.Seconds(), "tasks/s")
	b.ReportMetric(float64(elapsed.Microseconds())/float64(b.N)/1000, "ms/run")
	return samples
}

func reportPercentiles(b *testing.B, d []time.Duration, name string) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.50), name+"-p50-ms")
	b.ReportMetric(at(0.99), name+"-p99-ms")
}
