package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/redisstore"
)

// plaitEnv is one plait scheduler over its own Redis client and key prefix,
// the way a service embeds it.
type plaitEnv struct {
	client    *redis.Client
	s         *plait.Scheduler
	succeeded atomic.Int64
	target    atomic.Int64
	done      chan struct{}
	doneOnce  sync.Once
	failed    chan error
}

func newPlaitEnv(ctx context.Context, b *bench, concurrency int) (*plaitEnv, error) {
	e := &plaitEnv{done: make(chan struct{}), failed: make(chan error, 1)}
	e.target.Store(-1)
	e.client = redis.NewClient(&redis.Options{Addr: b.addr})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := redisstore.New(ctx, e.client,
		redisstore.WithPrefix(b.nextPrefix("plait")),
		redisstore.WithRetention(time.Hour),
		redisstore.WithLogger(quiet))
	if err != nil {
		e.client.Close()
		return nil, err
	}
	e.s, err = plait.New(store,
		plait.WithConcurrency(concurrency),
		plait.WithLogger(quiet),
		plait.WithObserver(e.observe))
	if err != nil {
		e.client.Close()
		return nil, err
	}
	return e, nil
}

// newNoopEnv is newPlaitEnv with the no-op handler registered.
func newNoopEnv(ctx context.Context, b *bench, concurrency int) (*plaitEnv, error) {
	e, err := newPlaitEnv(ctx, b, concurrency)
	if err != nil {
		return nil, err
	}
	if err := e.s.Handle("noop", noop); err != nil {
		e.client.Close()
		return nil, err
	}
	return e, nil
}

func (e *plaitEnv) observe(ev plait.Event) {
	switch ev.Type {
	case plait.EventTaskSucceeded:
		n := e.succeeded.Add(1)
		if t := e.target.Load(); t >= 0 && n >= t {
			e.doneOnce.Do(func() { close(e.done) })
		}
	case plait.EventTaskFailed, plait.EventTaskRetrying, plait.EventTaskLeaseLost:
		select {
		case e.failed <- fmt.Errorf("task %s of run %s: %s: %v", ev.Task, ev.RunID, ev.Type, ev.Err):
		default:
		}
	}
}

// expect arms the done channel for when n tasks in all have succeeded.
func (e *plaitEnv) expect(n int64) {
	e.target.Store(n)
	if e.succeeded.Load() >= n {
		e.doneOnce.Do(func() { close(e.done) })
	}
}

// start runs the scheduler's workers until the returned stop is called.
func (e *plaitEnv) start(ctx context.Context) (stop func()) {
	rctx, cancel := context.WithCancel(ctx)
	ended := make(chan struct{})
	go func() { _ = e.s.Run(rctx); close(ended) }()
	return func() {
		cancel()
		select {
		case <-ended:
		case <-time.After(15 * time.Second):
		}
	}
}

// wait blocks until done, a failure, or the timeout.
func (e *plaitEnv) wait(ctx context.Context, ch <-chan struct{}, timeout time.Duration, what func() string) error {
	select {
	case <-ch:
		return nil
	case err := <-e.failed:
		return err
	case <-time.After(timeout):
		return fmt.Errorf("timeout after %s (%s)", timeout, what())
	case <-ctx.Done():
		return ctx.Err()
	}
}

func noop(context.Context, *plait.Task) (any, error) { return nil, nil }

func plaitThroughput(ctx context.Context, b *bench, concurrency int) error {
	e, err := newNoopEnv(ctx, b, concurrency)
	if err != nil {
		return err
	}
	defer e.client.Close()
	payload := plait.Raw(b.payload())
	ph, err := startPhase(ctx, b.rc)
	if err != nil {
		return err
	}
	t0 := time.Now()
	for i := 0; i < b.n; i++ {
		wf := plait.NewWorkflow("noop").Task("t", "noop", payload)
		if _, err := e.s.Submit(ctx, wf); err != nil {
			return fmt.Errorf("submit %d: %w", i, err)
		}
	}
	enq := time.Since(t0)
	b.record("plait", "tp.enq", float64(b.n)/enq.Seconds())
	b.recordCost("plait", "throughput: enqueue (Submit)", ph, b.n)

	ph, err = startPhase(ctx, b.rc)
	if err != nil {
		return err
	}
	e.expect(int64(b.n))
	t1 := time.Now()
	stop := e.start(ctx)
	defer stop()
	if err := e.wait(ctx, e.done, b.timeout, func() string { return fmt.Sprintf("%d/%d done", e.succeeded.Load(), b.n) }); err != nil {
		return err
	}
	proc := time.Since(t1)
	key := "tp.proc.c" + strconv.Itoa(concurrency)
	b.record("plait", key, float64(b.n)/proc.Seconds())
	b.recordCost("plait", fmt.Sprintf("throughput: process c=%d", concurrency), ph, b.n)
	b.logf("plait throughput c=%d: enqueue %d in %.2fs (%.0f/s), process %.2fs (%.0f/s)", concurrency, b.n, enq.Seconds(), float64(b.n)/enq.Seconds(), proc.Seconds(), float64(b.n)/proc.Seconds())
	return plaitSubmitMany(ctx, b)
}

// submitManyBatch is how many runs one SubmitMany call carries in the bulk
// enqueue measurement.
const submitManyBatch = 1000

// plaitSubmitMany measures bulk enqueue: the same n single-task runs, sent
// with SubmitMany in batches of submitManyBatch, under a prefix of their own
// and left unprocessed (the next workload starts on an empty database).
func plaitSubmitMany(ctx context.Context, b *bench) error {
	e, err := newNoopEnv(ctx, b, 1)
	if err != nil {
		return err
	}
	defer e.client.Close()
	payload := plait.Raw(b.payload())
	t0 := time.Now()
	for done := 0; done < b.n; {
		k := min(submitManyBatch, b.n-done)
		subs := make([]plait.Submission, k)
		for i := range subs {
			subs[i] = plait.Submission{Workflow: plait.NewWorkflow("noop").Task("t", "noop", payload)}
		}
		if _, err := e.s.SubmitMany(ctx, subs); err != nil {
			return fmt.Errorf("submit many: %w", err)
		}
		done += k
	}
	el := time.Since(t0)
	b.record("plait", "tp.enqmany", float64(b.n)/el.Seconds())
	b.logf("plait throughput: SubmitMany of %d in batches of %d in %.2fs (%.0f/s)", b.n, submitManyBatch, el.Seconds(), float64(b.n)/el.Seconds())
	return nil
}

func plaitChain(ctx context.Context, b *bench) error {
	L := b.chainLen
	e, err := newPlaitEnv(ctx, b, 10)
	if err != nil {
		return err
	}
	defer e.client.Close()
	starts := make([]atomic.Int64, L)
	ends := make([]atomic.Int64, L)
	last := make(chan struct{})
	lastDone := closer(last)
	err = e.s.Handle("hop", func(ctx context.Context, t *plait.Task) (any, error) {
		now := time.Now().UnixNano()
		i, err := strconv.Atoi(t.Name[1:])
		if err != nil {
			return nil, plait.Permanent(err)
		}
		starts[i].Store(now)
		if i == L-1 {
			lastDone()
		}
		ends[i].Store(time.Now().UnixNano())
		return nil, nil
	})
	if err != nil {
		return err
	}
	payload := plait.Raw(b.payload())
	wf := plait.NewWorkflow("chain")
	for i := 0; i < L; i++ {
		var opts []plait.TaskOption
		if i > 0 {
			opts = append(opts, plait.After("c"+strconv.Itoa(i-1)))
		}
		wf.Task("c"+strconv.Itoa(i), "hop", payload, opts...)
	}
	stop := e.start(ctx)
	defer stop()
	time.Sleep(300 * time.Millisecond) // workers idle, waiting for work
	ph, err := startPhase(ctx, b.rc)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if _, err := e.s.Submit(ctx, wf); err != nil {
		return err
	}
	submit := time.Since(t0)
	if err := e.wait(ctx, last, b.timeout, func() string { return fmt.Sprintf("%d/%d done", e.succeeded.Load(), L) }); err != nil {
		return err
	}
	e.expect(int64(L))
	_ = e.wait(ctx, e.done, 10*time.Second, func() string { return "" })
	hops := make([]float64, 0, L-1)
	for i := 1; i < L; i++ {
		hops = append(hops, float64(starts[i].Load()-ends[i-1].Load())/1e6)
	}
	mean := float64(starts[L-1].Load()-starts[0].Load()) / 1e6 / float64(L-1)
	p50, p99 := pct(hops, 50), pct(hops, 99)
	b.record("plait", "chain.p50", p50)
	b.record("plait", "chain.p99", p99)
	b.record("plait", "chain.mean", mean)
	b.record("plait", "chain.submit", submit.Seconds()*1e3)
	b.recordCost("plait", fmt.Sprintf("chain L=%d", L), ph, L)
	b.logf("plait chain L=%d: submit %.1f ms, hop p50 %.3f p99 %.3f mean %.3f ms", L, submit.Seconds()*1e3, p50, p99, mean)
	return nil
}

func plaitFanout(ctx context.Context, b *bench) error {
	F := b.fanout
	e, err := newPlaitEnv(ctx, b, 10)
	if err != nil {
		return err
	}
	defer e.client.Close()
	var rootStart, lastChild, joinStart atomic.Int64
	var children atomic.Int64
	joined := make(chan struct{})
	joinedDone := closer(joined)
	if err := e.s.Handle("root", func(context.Context, *plait.Task) (any, error) {
		rootStart.Store(time.Now().UnixNano())
		return nil, nil
	}); err != nil {
		return err
	}
	if err := e.s.Handle("child", func(context.Context, *plait.Task) (any, error) {
		children.Add(1)
		storeMax(&lastChild, time.Now().UnixNano())
		return nil, nil
	}); err != nil {
		return err
	}
	if err := e.s.Handle("join", func(context.Context, *plait.Task) (any, error) {
		joinStart.Store(time.Now().UnixNano())
		joinedDone()
		return nil, nil
	}); err != nil {
		return err
	}
	payload := plait.Raw(b.payload())
	wf := plait.NewWorkflow("fanout").Task("root", "root", payload)
	names := make([]string, F)
	for i := range names {
		names[i] = "k" + strconv.Itoa(i)
		wf.Task(names[i], "child", payload, plait.After("root"))
	}
	wf.Task("join", "join", payload, plait.After(names...))
	stop := e.start(ctx)
	defer stop()
	time.Sleep(300 * time.Millisecond)
	ph, err := startPhase(ctx, b.rc)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if _, err := e.s.Submit(ctx, wf); err != nil {
		return err
	}
	submit := time.Since(t0)
	if err := e.wait(ctx, joined, b.timeout, func() string { return fmt.Sprintf("%d/%d children done", children.Load(), F) }); err != nil {
		return err
	}
	total := time.Duration(joinStart.Load() - t0.UnixNano())
	e.expect(int64(F + 2))
	_ = e.wait(ctx, e.done, 10*time.Second, func() string { return "" })
	b.record("plait", "fan.total", total.Seconds())
	b.record("plait", "fan.tps", float64(F+2)/total.Seconds())
	b.record("plait", "fan.submit", submit.Seconds()*1e3)
	b.record("plait", "fan.join", float64(joinStart.Load()-lastChild.Load())/1e6)
	b.recordCost("plait", fmt.Sprintf("fan-out F=%d", F), ph, F+2)
	b.logf("plait fanout F=%d: total %.3fs (%.0f tasks/s); submit %.1f ms, root start +%.1f ms, last child +%.3fs, join pickup %.2f ms",
		F, total.Seconds(), float64(F+2)/total.Seconds(), submit.Seconds()*1e3,
		float64(rootStart.Load()-t0.UnixNano())/1e6, float64(lastChild.Load()-t0.UnixNano())/1e9, float64(joinStart.Load()-lastChild.Load())/1e6)
	return nil
}

func plaitMemory(ctx context.Context, b *bench) error {
	N := b.memN
	e, err := newNoopEnv(ctx, b, 10)
	if err != nil {
		return err
	}
	defer e.client.Close()
	payload := plait.Raw(b.payload())
	m0, d0, err := usedMemory(ctx, b.rc)
	if err != nil {
		return err
	}
	if err := parallel(memEnqueuers, N, func(i int) error {
		_, err := e.s.Submit(ctx, plait.NewWorkflow("noop").Task("t", "noop", payload))
		return err
	}); err != nil {
		return err
	}
	m1, d1, err := usedMemory(ctx, b.rc)
	if err != nil {
		return err
	}
	keys1, _ := b.rc.DBSize(ctx).Result()
	e.expect(int64(N))
	stop := e.start(ctx)
	err = e.wait(ctx, e.done, b.timeout, func() string { return fmt.Sprintf("%d/%d done", e.succeeded.Load(), N) })
	stop()
	if err != nil {
		return err
	}
	return b.recordMemory(ctx, "plait", N, m0, d0, m1, d1, keys1)
}

// storeMax raises a to v if v is larger.
func storeMax(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// parallel calls fn for 0..n-1 from g goroutines and returns the first error.
func parallel(g, n int, fn func(i int) error) error {
	var next atomic.Int64
	next.Store(-1)
	var first atomic.Pointer[error]
	var wg sync.WaitGroup
	for w := 0; w < g; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first.Load() == nil {
				i := int(next.Add(1))
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if p := first.Load(); p != nil {
		return *p
	}
	return nil
}

// closer returns a function that closes ch once, however often it is called:
// handlers run at least once.
func closer(ch chan struct{}) func() {
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}
