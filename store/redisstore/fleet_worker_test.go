package redisstore_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// A worker process of BenchmarkFleetPickup: the test binary run again with
// fleetEnvAddrs set. It is a plait.Scheduler with its own cluster client
// (every connection named fleetEnvName, so the benchmark can find its
// blocked connections in CLIENT LIST) over a store that reports, one line
// per call on stdout, when it entered and left ReadyWait, its claims and
// its finishes, and when the handler ran. It stops at SIGTERM or when its
// stdin closes (the benchmark is gone).
const (
	fleetEnvAddrs  = "PLAIT_FLEET_ADDRS"
	fleetEnvPrefix = "PLAIT_FLEET_PREFIX"
	fleetEnvShards = "PLAIT_FLEET_SHARDS"
	fleetEnvName   = "PLAIT_FLEET_NAME"
)

func init() {
	if addrs := os.Getenv(fleetEnvAddrs); addrs != "" {
		os.Exit(fleetWorkerMain(addrs))
	}
}

// fleetHandler is the one handler of the fleet's runs.
const fleetHandler = "fleet"

func fleetWorkerMain(addrs string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	name := os.Getenv(fleetEnvName)
	shards, err := strconv.Atoi(os.Getenv(fleetEnvShards))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet worker:", err)
		return 2
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ","), ClientName: name})
	defer c.Close()
	rs, err := redisstore.New(ctx, c, redisstore.WithShards(shards), redisstore.WithLogger(quietLogger()),
		redisstore.WithPrefix(os.Getenv(fleetEnvPrefix)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet worker:", err)
		return 2
	}
	tr := &fleetTracer{w: bufio.NewWriter(os.Stdout)}
	s, err := plait.New(&tracedStore{Store: rs, tr: tr}, plait.WithWorkerID(name), plait.WithLogger(quietLogger()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet worker:", err)
		return 2
	}
	if err := s.Handle(fleetHandler, func(context.Context, *plait.Task) (any, error) {
		now := time.Now()
		tr.line("run", now, now, 0)
		return nil, nil
	}); err != nil {
		fmt.Fprintln(os.Stderr, "fleet worker:", err)
		return 2
	}
	if err := s.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "fleet worker:", err)
		return 2
	}
	return 0
}

// fleetTracer writes "<kind> <start ns> <end ns> <n>" lines, wall clock
// Unix nanoseconds, which processes on one host share.
type fleetTracer struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (t *fleetTracer) line(kind string, start, end time.Time, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, "%s %d %d %d\n", kind, start.UnixNano(), end.UnixNano(), n)
	_ = t.w.Flush()
}

// tracedStore is the worker's store: the redisstore.Store, every optional
// interface included, with the calls of the pickup path reported.
type tracedStore struct {
	*redisstore.Store
	tr *fleetTracer
}

func (s *tracedStore) ReadyWait(ctx context.Context, params *store.ReadyWaitParams) error {
	t0 := time.Now()
	s.tr.line("waiting", t0, t0, 0)
	err := s.Store.ReadyWait(ctx, params)
	s.tr.line("wait", t0, time.Now(), 0)
	return err
}

func (s *tracedStore) TaskClaim(ctx context.Context, params *store.TaskClaimParams) (*store.TaskClaimResult, error) {
	t0 := time.Now()
	res, err := s.Store.TaskClaim(ctx, params)
	n := 0
	if res != nil {
		n = len(res.Tasks)
	}
	s.tr.line("claim", t0, time.Now(), n)
	return res, err
}

func (s *tracedStore) TaskFinishClaim(ctx context.Context, params *store.TaskFinishClaimParams) (*store.TaskFinishClaimResult, error) {
	t0 := time.Now()
	res, err := s.Store.TaskFinishClaim(ctx, params)
	n := 0
	if res != nil && res.Claimed != nil {
		n = len(res.Claimed.Tasks)
	}
	s.tr.line("finish", t0, time.Now(), n)
	return res, err
}

func (s *tracedStore) TaskFinish(ctx context.Context, params *store.TaskFinishParams) ([]store.TaskFinishResult, error) {
	t0 := time.Now()
	res, err := s.Store.TaskFinish(ctx, params)
	s.tr.line("finish", t0, time.Now(), 0)
	return res, err
}
