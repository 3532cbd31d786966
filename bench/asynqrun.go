package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
)

const asynqQueue = "default"

func (b *bench) asynqOpt() asynq.RedisClientOpt {
	return asynq.RedisClientOpt{Addr: b.addr}
}

func (b *bench) asynqServer(concurrency int, taskCheck time.Duration) *asynq.Server {
	return asynq.NewServer(b.asynqOpt(), asynq.Config{
		Concurrency:       concurrency,
		TaskCheckInterval: taskCheck, // zero: asynq's default, 1 s
		LogLevel:          asynq.FatalLevel,
		Queues:            map[string]int{asynqQueue: 1},
	})
}

// indexed returns a payload of the benchmark's size that starts with i.
func (b *bench) indexed(i int) []byte {
	p := b.payload()
	binary.LittleEndian.PutUint64(p, uint64(i))
	return p
}

func index(p []byte) int { return int(binary.LittleEndian.Uint64(p)) }

// asynqLabel names an asynq configuration in results.
func asynqLabel(taskCheck time.Duration) string {
	if taskCheck == 0 {
		return "asynq-tc-default"
	}
	return "asynq-tc-" + taskCheck.String()
}

func asynqThroughput(ctx context.Context, b *bench, concurrency int) error {
	client := asynq.NewClient(b.asynqOpt())
	defer client.Close()
	ph, err := startPhase(ctx, b.rc)
	if err != nil {
		return err
	}
	t0 := time.Now()
	for i := 0; i < b.n; i++ {
		if _, err := client.EnqueueContext(ctx, asynq.NewTask("noop", b.indexed(i))); err != nil {
			return fmt.Errorf("enqueue %d: %w", i, err)
		}
	}
	enq := time.Since(t0)
	b.record("asynq", "tp.enq", float64(b.n)/enq.Seconds())
	b.recordCost("asynq", "throughput: enqueue (Enqueue)", ph, b.n)

	var done atomic.Int64
	finished := make(chan struct{})
	mux := asynq.NewServeMux()
	mux.HandleFunc("noop", func(context.Context, *asynq.Task) error {
		if done.Add(1) == int64(b.n) {
			close(finished)
		}
		return nil
	})
	ph, err = startPhase(ctx, b.rc)
	if err != nil {
		return err
	}
	srv := b.asynqServer(concurrency, 0)
	t1 := time.Now()
	if err := srv.Start(mux); err != nil {
		return err
	}
	defer srv.Shutdown()
	if err := waitFor(ctx, finished, b.timeout, func() string { return fmt.Sprintf("%d/%d done", done.Load(), b.n) }); err != nil {
		return err
	}
	proc := time.Since(t1)
	b.record("asynq", "tp.proc.c"+strconv.Itoa(concurrency), float64(b.n)/proc.Seconds())
	b.recordCost("asynq", fmt.Sprintf("throughput: process c=%d", concurrency), ph, b.n)
	b.logf("asynq throughput c=%d: enqueue %d in %.2fs (%.0f/s), process %.2fs (%.0f/s)", concurrency, b.n, enq.Seconds(), float64(b.n)/enq.Seconds(), proc.Seconds(), float64(b.n)/proc.Seconds())
	return nil
}

// asynqChain has no DAG to lean on: each handler enqueues the next task.
// A hop is measured from the parent's Enqueue call (its last action) to the
// child's handler start.
func asynqChain(ctx context.Context, b *bench, taskCheck time.Duration, L int) error {
	client := asynq.NewClient(b.asynqOpt())
	defer client.Close()
	starts := make([]atomic.Int64, L)
	handoffs := make([]atomic.Int64, L)
	last := make(chan struct{})
	lastDone := closer(last)
	failed := make(chan error, 1)
	mux := asynq.NewServeMux()
	mux.HandleFunc("hop", func(ctx context.Context, t *asynq.Task) error {
		i := index(t.Payload())
		starts[i].Store(time.Now().UnixNano())
		if i == L-1 {
			lastDone()
			return nil
		}
		handoffs[i].Store(time.Now().UnixNano())
		if _, err := client.EnqueueContext(ctx, asynq.NewTask("hop", b.indexed(i+1))); err != nil {
			select {
			case failed <- err:
			default:
			}
		}
		return nil
	})
	srv := b.asynqServer(10, taskCheck)
	if err := srv.Start(mux); err != nil {
		return err
	}
	defer srv.Shutdown()
	time.Sleep(2 * effectiveTaskCheck(taskCheck)) // workers in their idle polling state
	label := asynqLabel(taskCheck)
	ph, err := startPhase(ctx, b.rc)
	if err != nil {
		return err
	}
	if _, err := client.EnqueueContext(ctx, asynq.NewTask("hop", b.indexed(0))); err != nil {
		return err
	}
	select {
	case err := <-failed:
		return err
	default:
	}
	if err := waitFor(ctx, last, b.timeout, func() string { return "chain not finished" }); err != nil {
		return err
	}
	hops := make([]float64, 0, L-1)
	for i := 1; i < L; i++ {
		hops = append(hops, float64(starts[i].Load()-handoffs[i-1].Load())/1e6)
	}
	mean := float64(starts[L-1].Load()-starts[0].Load()) / 1e6 / float64(L-1)
	p50, p99 := pct(hops, 50), pct(hops, 99)
	b.record(label, "chain.p50", p50)
	b.record(label, "chain.p99", p99)
	b.record(label, "chain.mean", mean)
	b.recordCost(label, fmt.Sprintf("chain L=%d", L), ph, L)
	b.logf("%s chain L=%d: hop p50 %.3f p99 %.3f mean %.3f ms", label, L, p50, p99, mean)
	return nil
}

// asynqFanout: the root enqueues F children; each child DECRs a counter and
// the one that reaches zero enqueues the join.
func asynqFanout(ctx context.Context, b *bench, taskCheck time.Duration) error {
	F := b.fanout
	client := asynq.NewClient(b.asynqOpt())
	defer client.Close()
	counter := b.nextPrefix("asynq-fanout") + ":remaining"
	var rootStart, rootEnqueued, lastChild, joinStart atomic.Int64
	var children atomic.Int64
	joined := make(chan struct{})
	joinedDone := closer(joined)
	failed := make(chan error, 1)
	fail := func(err error) {
		select {
		case failed <- err:
		default:
		}
	}
	mux := asynq.NewServeMux()
	mux.HandleFunc("root", func(ctx context.Context, t *asynq.Task) error {
		rootStart.Store(time.Now().UnixNano())
		if err := b.rc.Set(ctx, counter, F, 0).Err(); err != nil {
			fail(err)
			return nil
		}
		for i := 0; i < F; i++ {
			if _, err := client.EnqueueContext(ctx, asynq.NewTask("child", b.indexed(i))); err != nil {
				fail(err)
				return nil
			}
		}
		rootEnqueued.Store(time.Now().UnixNano())
		return nil
	})
	mux.HandleFunc("child", func(ctx context.Context, t *asynq.Task) error {
		children.Add(1)
		left, err := b.rc.Decr(ctx, counter).Result()
		if err != nil {
			fail(err)
			return nil
		}
		if left == 0 {
			lastChild.Store(time.Now().UnixNano())
			if _, err := client.EnqueueContext(ctx, asynq.NewTask("join", b.indexed(0))); err != nil {
				fail(err)
			}
		}
		return nil
	})
	mux.HandleFunc("join", func(context.Context, *asynq.Task) error {
		joinStart.Store(time.Now().UnixNano())
		joinedDone()
		return nil
	})
	srv := b.asynqServer(10, taskCheck)
	if err := srv.Start(mux); err != nil {
		return err
	}
	defer srv.Shutdown()
	time.Sleep(2 * effectiveTaskCheck(taskCheck))
	label := asynqLabel(taskCheck)
	ph, err := startPhase(ctx, b.rc)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if _, err := client.EnqueueContext(ctx, asynq.NewTask("root", b.indexed(0))); err != nil {
		return err
	}
	select {
	case <-joined:
	case err := <-failed:
		return err
	case <-time.After(b.timeout):
		return fmt.Errorf("timeout after %s (%d/%d children done)", b.timeout, children.Load(), F)
	}
	total := time.Duration(joinStart.Load() - t0.UnixNano())
	b.record(label, "fan.total", total.Seconds())
	b.record(label, "fan.tps", float64(F+2)/total.Seconds())
	b.record(label, "fan.join", float64(joinStart.Load()-lastChild.Load())/1e6)
	b.recordCost(label, fmt.Sprintf("fan-out F=%d", F), ph, F+2)
	b.logf("%s fanout F=%d: total %.3fs (%.0f tasks/s); root enqueue of children %.3fs, last child +%.3fs, join pickup %.2f ms",
		label, F, total.Seconds(), float64(F+2)/total.Seconds(),
		float64(rootEnqueued.Load()-rootStart.Load())/1e9, float64(lastChild.Load()-t0.UnixNano())/1e9, float64(joinStart.Load()-lastChild.Load())/1e6)
	return nil
}

func asynqMemory(ctx context.Context, b *bench) error {
	N := b.memN
	client := asynq.NewClient(b.asynqOpt())
	defer client.Close()
	if err := client.Ping(); err != nil {
		return err
	}
	m0, d0, err := usedMemory(ctx, b.rc)
	if err != nil {
		return err
	}
	if err := parallel(memEnqueuers, N, func(i int) error {
		_, err := client.EnqueueContext(ctx, asynq.NewTask("noop", b.indexed(i)), asynq.Retention(time.Hour))
		return err
	}); err != nil {
		return err
	}
	m1, d1, err := usedMemory(ctx, b.rc)
	if err != nil {
		return err
	}
	keys1, _ := b.rc.DBSize(ctx).Result()
	var done atomic.Int64
	finished := make(chan struct{})
	mux := asynq.NewServeMux()
	mux.HandleFunc("noop", func(context.Context, *asynq.Task) error {
		if done.Add(1) == int64(N) {
			close(finished)
		}
		return nil
	})
	srv := b.asynqServer(10, 0)
	if err := srv.Start(mux); err != nil {
		return err
	}
	err = waitFor(ctx, finished, b.timeout, func() string { return fmt.Sprintf("%d/%d done", done.Load(), N) })
	srv.Shutdown()
	if err != nil {
		return err
	}
	return b.recordMemory(ctx, "asynq", N, m0, d0, m1, d1, keys1)
}

func effectiveTaskCheck(d time.Duration) time.Duration {
	if d <= 0 {
		return time.Second
	}
	return d
}

func waitFor(ctx context.Context, ch <-chan struct{}, timeout time.Duration, what func() string) error {
	select {
	case <-ch:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("timeout after %s (%s)", timeout, what())
	case <-ctx.Done():
		return ctx.Err()
	}
}
