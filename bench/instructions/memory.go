package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/redisstore"
)

// memoryRuns is how many one-task runs the bytes figures average over at
// -n 1.
const memoryRuns = 20000

// memSubmitters is how many goroutines submit in the memory measurement,
// where the rate is not the point.
const memSubmitters = 10

// bytesResult is the memory measurement: Redis used_memory per run.
type bytesResult struct {
	Runs     int     `json:"runs"`
	Pending  float64 `json:"pending_bytes_per_run"`
	Finished float64 `json:"finished_bytes_per_run"`
	// PendingParts and FinishedParts are the bytes per run of each kind of
	// key (memoryParts).
	PendingParts  map[string]float64 `json:"pending_parts,omitempty"`
	FinishedParts map[string]float64 `json:"finished_parts,omitempty"`
	Seconds       float64            `json:"seconds"`
}

// memoryLease is the memory worker's lease. A claim's request record (what
// makes a resent claim safe) lives as long as the lease: it belongs to the
// claim call, not to a run, so the finished figure is read once they have
// lapsed.
const memoryLease = 2 * time.Second

// measureBytes starts a plain redis-server (memory needs no callgrind),
// submits n one-task runs with no worker running, then runs them all with
// finished runs kept for an hour, and reads INFO memory's used_memory
// before, with the runs pending, and after they finished.
func measureBytes(ctx context.Context, redisServer string, n int) (bytesResult, error) {
	t0 := time.Now()
	dir, err := tempDir("memory")
	if err != nil {
		return bytesResult{}, err
	}
	defer os.RemoveAll(dir)
	srv, err := startServer([]string{redisServer}, dir, 30*time.Second)
	if err != nil {
		return bytesResult{}, err
	}
	defer srv.stop(30 * time.Second)
	client := redis.NewClient(&redis.Options{Addr: srv.addr})
	defer client.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := redisstore.New(ctx, client, redisstore.WithRetention(time.Hour), redisstore.WithLogger(quiet))
	if err != nil {
		return bytesResult{}, err
	}
	var succeeded atomic.Int64
	all := make(chan struct{})
	s, err := plait.New(st, plait.WithLogger(quiet), plait.WithConcurrency(batch), plait.WithLeaseDuration(memoryLease),
		plait.WithObserver(func(ev plait.Event) {
			if ev.Type == plait.EventTaskSucceeded && succeeded.Add(1) == int64(n) {
				close(all)
			}
		}))
	if err == nil {
		err = s.Handle("noop", func(context.Context, *plait.Task) (any, error) { return nil, nil })
	}
	if err != nil {
		return bytesResult{}, err
	}
	m0, err := usedMemory(ctx, client)
	if err != nil {
		return bytesResult{}, err
	}
	payload := plait.Raw(strings.Repeat("p", payloadSize))
	if err := parallel(memSubmitters, n, func() error {
		_, err := s.Submit(ctx, plait.NewWorkflow("noop").Task("t", "noop", payload))
		return err
	}); err != nil {
		return bytesResult{}, err
	}
	m1, err := usedMemory(ctx, client)
	if err != nil {
		return bytesResult{}, err
	}
	pendingParts, err := memoryParts(ctx, client, n)
	if err != nil {
		return bytesResult{}, err
	}
	rctx, cancel := context.WithCancel(ctx)
	ended := make(chan error, 1)
	go func() { ended <- s.Run(rctx) }()
	select {
	case <-all:
	case <-ctx.Done():
	case <-time.After(10 * time.Minute):
	}
	cancel()
	if err := <-ended; err != nil {
		return bytesResult{}, err
	}
	if done := succeeded.Load(); done < int64(n) {
		return bytesResult{}, fmt.Errorf("%d of %d runs finished (%v)", done, n, ctx.Err())
	}
	// Read after Run has stopped, which removes its node record, and once
	// the claims' request records have lapsed: a SCAN deletes those Redis
	// has not expired yet.
	select {
	case <-time.After(memoryLease + 100*time.Millisecond):
	case <-ctx.Done():
		return bytesResult{}, ctx.Err()
	}
	if err := scanAll(ctx, client); err != nil {
		return bytesResult{}, err
	}
	m2, err := usedMemory(ctx, client)
	if err != nil {
		return bytesResult{}, err
	}
	finishedParts, err := memoryParts(ctx, client, n)
	if err != nil {
		return bytesResult{}, err
	}
	return bytesResult{Runs: n, Pending: (m1 - m0) / float64(n), Finished: (m2 - m0) / float64(n),
		PendingParts: pendingParts, FinishedParts: finishedParts, Seconds: time.Since(t0).Seconds()}, nil
}

// scanAll walks the keyspace, which deletes the keys whose time is up.
func scanAll(ctx context.Context, c *redis.Client) error {
	var cursor uint64
	for {
		_, next, err := c.Scan(ctx, cursor, "", 1000).Result()
		if err != nil || next == 0 {
			return err
		}
		cursor = next
	}
}

// usedMemory reads INFO memory's used_memory after a short pause, for the
// frees Redis does in the background to land.
func usedMemory(ctx context.Context, c *redis.Client) (float64, error) {
	select {
	case <-time.After(500 * time.Millisecond):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	txt, err := c.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(txt, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("no used_memory in INFO memory")
}

// parallel calls fn n times from g goroutines and returns the first error.
func parallel(g, n int, fn func() error) error {
	var next atomic.Int64
	var failed atomic.Bool
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < g; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() && next.Add(1) <= int64(n) {
				if err := fn(); err != nil {
					once.Do(func() { first = err })
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
