package faults_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/redisstore"
)

// Environment a worker subprocess reads; the test binary re-executes itself
// with these set.
const (
	envRedis  = "PLAIT_FAULT_REDIS"
	envPrefix = "PLAIT_FAULT_PREFIX"
	envName   = "PLAIT_FAULT_NAME"
	envWorkMS = "PLAIT_FAULT_WORK_MS"
	envLease  = "PLAIT_FAULT_LEASE_MS"
	envSweep  = "PLAIT_FAULT_SWEEP_MS"
	// envCaps lists the capabilities of the worker, comma separated.
	envCaps = "PLAIT_FAULT_CAPS"
	// envNodeTTL is the worker's node TTL in ms (heartbeats at a third).
	envNodeTTL = "PLAIT_FAULT_NODE_TTL_MS"
)

// auditKey is the Redis list every worker appends its observations to:
// "start|task|epoch|worker|unixnano", "end|…", "lost|…". It lives outside
// the store's prefix so it never interferes with plait's keys.
func auditKey(prefix string) string { return "audit:" + prefix }

func envMS(name string, def time.Duration) time.Duration {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return time.Duration(v) * time.Millisecond
	}
	return def
}

// workerMain is a worker process: it runs every "step" task, taking
// PLAIT_FAULT_WORK_MS per task, until SIGTERM.
func workerMain(addr string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	prefix, name := os.Getenv(envPrefix), os.Getenv(envName)
	work := envMS(envWorkMS, 10*time.Millisecond)
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	audit := func(kind, task string, epoch int64) {
		line := fmt.Sprintf("%s|%s|%d|%s|%d", kind, task, epoch, name, time.Now().UnixNano())
		client.RPush(context.Background(), auditKey(prefix), line)
	}
	store, err := redisstore.New(ctx, client, redisstore.WithPrefix(prefix))
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	var extra []plait.Option
	if caps := os.Getenv(envCaps); caps != "" {
		extra = append(extra, plait.WithCapabilities(strings.Split(caps, ",")...))
	}
	if ttl := envMS(envNodeTTL, 0); ttl > 0 {
		extra = append(extra, plait.WithNodeTTL(ttl), plait.WithNodeHeartbeat(ttl/3))
	}
	s, err := plait.New(store, append([]plait.Option{
		plait.WithWorkerID(name),
		plait.WithConcurrency(4),
		plait.WithLeaseDuration(envMS(envLease, time.Second)),
		plait.WithSweepInterval(envMS(envSweep, 200*time.Millisecond)),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		plait.WithObserver(func(e plait.Event) {
			if e.Type == plait.EventTaskLeaseLost {
				audit("lost", e.Task, e.Epoch)
			}
		}),
	}, extra...)...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	_ = s.Handle("step", func(ctx context.Context, t *plait.Task) (any, error) {
		audit("start", t.Name, t.Epoch)
		select {
		case <-time.After(work): // the task's work
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		audit("end", t.Name, t.Epoch)
		return name, nil
	})
	if err := s.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	return 0
}
