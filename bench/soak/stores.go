package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

// soakRedis soaks redisstore on a primary, a replica and three sentinels,
// with worker processes.
func soakRedis(o options, w io.Writer) (bool, error) {
	sent, err := redistest.StartSentinel(3, false)
	if err != nil {
		return false, err
	}
	defer sent.Close()
	ctx := context.Background()
	logDir, err := os.MkdirTemp("", "plait-soak-")
	if err != nil {
		return false, err
	}
	sentinels := strings.Join(sent.Addrs, ",")
	st, c, err := redisStore(ctx, sent.Addrs, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return false, err
	}
	defer c.Close()
	s, err := plait.New(st, plait.WithRemoteHandlers())
	if err != nil {
		return false, err
	}
	f := &procFleet{sentinels: sentinels, logDir: logDir}
	for i := 0; i < o.workers; i++ {
		p, err := startWorker(workerID(i, 0), sentinels, logDir)
		if err != nil {
			return false, err
		}
		f.procs = append(f.procs, p)
	}
	defer f.kill()
	// The event stream (one entry per script call, capped at
	// store.EventCapDefault entries) is most of what grows until it
	// reaches its cap: its length is a column of its own.
	g := func(ctx context.Context) (int64, int64, int64, int64, error) {
		info, err := c.Info(ctx, "memory").Result()
		if err != nil {
			return 0, 0, 0, 0, err
		}
		keys, err := c.DBSize(ctx).Result()
		if err != nil {
			return 0, 0, 0, 0, err
		}
		stream, err := c.XLen(ctx, "soak:{0}:e").Result()
		return infoInt(info, "used_memory"), infoInt(info, "used_memory_rss"), keys, stream, err
	}
	failover := func() error { return sent.Failover(ctx) }
	ok, err := drive(o, w, "Redis (primary, replica, 3 sentinels; worker processes)", newLoad(s, o.rate), f, g, failover)
	fmt.Fprintf(w, "Worker logs: %s\n", logDir)
	return ok, err
}

func workerID(i, generation int) string { return fmt.Sprintf("w%d.%d", i, generation) }

func infoInt(info, field string) int64 {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// procFleet is worker processes.
type procFleet struct {
	sentinels, logDir string
	procs             []*proc
	generation        int
}

func (f *procFleet) crash(i int) (string, error) {
	which := f.procs[i].id
	f.procs[i].kill()
	f.generation++
	p, err := startWorker(workerID(i, f.generation), f.sentinels, f.logDir)
	if err != nil {
		return "", err
	}
	f.procs[i] = p
	return which, nil
}

func (f *procFleet) stop() (time.Duration, []string) {
	type result struct {
		id   string
		took time.Duration
		err  error
	}
	out := make(chan result, len(f.procs))
	for _, p := range f.procs {
		go func() {
			took, err := p.term(10 * time.Second)
			out <- result{p.id, took, err}
		}()
	}
	var slowest time.Duration
	var failures []string
	for range f.procs {
		r := <-out
		slowest = max(slowest, r.took)
		if r.err != nil {
			failures = append(failures, r.id+": "+r.err.Error())
		}
	}
	f.procs = nil
	return slowest, failures
}

func (f *procFleet) drain() (func() error, error) {
	p, err := startWorker("drain", f.sentinels, f.logDir)
	if err != nil {
		return nil, err
	}
	f.procs = []*proc{p}
	return func() error {
		_, err := p.term(10 * time.Second)
		f.procs = nil
		return err
	}, nil
}

// kill ends what is still running (a soak that failed half-way).
func (f *procFleet) kill() {
	for _, p := range f.procs {
		p.kill()
	}
}

// soakMemory soaks memstore with in-process schedulers.
func soakMemory(o options, w io.Writer) (bool, error) {
	st, err := memstore.New(memstore.WithRetention(retention))
	if err != nil {
		return false, err
	}
	s, err := plait.New(st, plait.WithRemoteHandlers())
	if err != nil {
		return false, err
	}
	f := &memFleet{st: st}
	for i := 0; i < o.workers; i++ {
		if err := f.start(i); err != nil {
			return false, err
		}
	}
	g := func(context.Context) (int64, int64, int64, int64, error) {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapInuse), rss(), -1, -1, nil
	}
	return drive(o, w, "memory store (in-process schedulers)", newLoad(s, o.rate), f, g, nil)
}

// rss answers the process's resident set size, from /proc.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(fields[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// memFleet is schedulers in this process, each over its own cut-off-able
// view of the one memory store.
type memFleet struct {
	st         *memstore.Store
	workers    []*memWorker
	generation int
}

type memWorker struct {
	id     string
	view   *severable
	cancel context.CancelFunc
	done   chan error
}

func (f *memFleet) start(i int) error {
	view := &severable{Store: f.st}
	s, err := plait.New(view, append(workerOptions(workerID(i, f.generation)),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))...)
	if err == nil {
		err = handle(s)
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	mw := &memWorker{id: workerID(i, f.generation), view: view, cancel: cancel, done: make(chan error, 1)}
	go func() { mw.done <- s.Run(ctx) }()
	if i < len(f.workers) {
		f.workers[i] = mw
	} else {
		f.workers = append(f.workers, mw)
	}
	return nil
}

// crash cuts the worker holding the most tasks off from the store, as a
// process that died: from then on its calls fail, its leases go
// unextended and its outcomes unrecorded, and the sweep of the others
// recovers its tasks. It is then dropped (its Run returns on its own) and
// replaced. (In one process the schedulers race for each claim, and the
// one that wins most is the one whose death shows.)
func (f *memFleet) crash(int) (string, error) {
	i := 0
	for j, mw := range f.workers {
		if mw.view.held.Load() > f.workers[i].view.held.Load() {
			i = j
		}
	}
	old := f.workers[i]
	old.view.cut.Store(true)
	held := old.view.held.Load()
	old.cancel()
	go func() { <-old.done }()
	f.generation++
	return fmt.Sprintf("%s (holding %d)", old.id, held), f.start(i)
}

func (f *memFleet) stop() (time.Duration, []string) {
	begin := time.Now()
	var failures []string
	for _, mw := range f.workers {
		mw.cancel()
	}
	for i, mw := range f.workers {
		select {
		case err := <-mw.done:
			if err != nil {
				failures = append(failures, fmt.Sprintf("w%d: %v", i, err))
			}
		case <-time.After(10 * time.Second):
			failures = append(failures, fmt.Sprintf("w%d: Run did not return", i))
		}
	}
	f.workers = nil
	return time.Since(begin), failures
}

func (f *memFleet) drain() (func() error, error) {
	f.generation++
	if err := f.start(0); err != nil {
		return nil, err
	}
	mw := f.workers[0]
	return func() error {
		mw.cancel()
		return <-mw.done
	}, nil
}

// severable is a view of a store that can be cut off: every call a worker
// makes then fails. It counts the tasks its worker holds (claimed, not yet
// finished), roughly: a finish that fails is not counted.
type severable struct {
	store.Store
	cut  atomic.Bool
	held atomic.Int64
}

var errCut = errors.New("soak: worker cut off (crashed)")

func (v *severable) TaskClaim(ctx context.Context, p *store.TaskClaimParams) (*store.TaskClaimResult, error) {
	if v.cut.Load() {
		return nil, errCut
	}
	res, err := v.Store.TaskClaim(ctx, p)
	if err == nil {
		v.held.Add(int64(len(res.Tasks)))
	}
	return res, err
}

func (v *severable) TaskFinish(ctx context.Context, p *store.TaskFinishParams) ([]store.TaskFinishResult, error) {
	if v.cut.Load() {
		return nil, errCut
	}
	res, err := v.Store.TaskFinish(ctx, p)
	if err == nil {
		v.held.Add(-int64(len(p.Outcomes)))
	}
	return res, err
}

func (v *severable) TaskFinishClaim(ctx context.Context, p *store.TaskFinishClaimParams) (*store.TaskFinishClaimResult, error) {
	if v.cut.Load() {
		return nil, errCut
	}
	res, err := v.Store.TaskFinishClaim(ctx, p)
	if err == nil {
		n := -len(p.Finish.Outcomes)
		if res.Claimed != nil {
			n += len(res.Claimed.Tasks)
		}
		v.held.Add(int64(n))
	}
	return res, err
}

func (v *severable) LeaseExtend(ctx context.Context, p *store.LeaseExtendParams) ([]store.LeaseExtendResult, error) {
	if v.cut.Load() {
		return nil, errCut
	}
	return v.Store.LeaseExtend(ctx, p)
}

func (v *severable) LeaseSweep(ctx context.Context, p *store.LeaseSweepParams) (*store.LeaseSweepResult, error) {
	if v.cut.Load() {
		return nil, errCut
	}
	return v.Store.LeaseSweep(ctx, p)
}

func (v *severable) ReadyWait(ctx context.Context, p *store.ReadyWaitParams) error {
	if v.cut.Load() {
		return errCut
	}
	return v.Store.ReadyWait(ctx, p)
}
