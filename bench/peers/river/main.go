// Command riverbench measures River (github.com/riverqueue/river, riverpgxv5
// driver) on the workloads of the plait-vs-asynq bench (bench/ in the plait
// repository), so that River on Postgres can be set next to plait and asynq
// on Redis. It prints one markdown table (plus a cost table and notes).
//
//	./run.sh -quick                        # scratch Postgres, small sizes
//	./run.sh -out results/$(date +%F).md   # full run
//	go run . -dsn postgres://... -quick    # an existing, scratch database: river_job is TRUNCATEd
//
// Workloads: throughput (enqueue and process rates of independent no-op
// jobs), chain (per-hop latency when each handler inserts the next job),
// fanout (one root, many children, one join through a counter row), memory
// (river_job bytes per pending and per completed job), ceiling (raw Postgres
// round trip and commit rates from Go). See README.md.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

var allWorkloads = []string{"throughput", "chain", "fanout", "memory", "ceiling"}

// fetchCfg is one River client configuration under test.
type fetchCfg struct {
	label           string
	cooldown, poll  time.Duration // zero: River's shipped default
	effectivePoll   time.Duration
	effectiveCooldn time.Duration
}

var (
	cfgDefault = fetchCfg{label: "river-default", effectivePoll: river.FetchPollIntervalDefault, effectiveCooldn: river.FetchCooldownDefault}
	cfg1ms     = fetchCfg{label: "river-1ms", cooldown: river.FetchCooldownMin, poll: river.FetchPollIntervalMin,
		effectivePoll: river.FetchPollIntervalMin, effectiveCooldn: river.FetchCooldownMin}
)

type bench struct {
	pool     *pgxpool.Pool
	poolSize int
	pgpid    int
	logger   *slog.Logger

	n, nDefault, chainLen, chainDefaultLen, fanout, fanoutDefault, memN int
	payloadSize                                                         int
	ceilDur                                                             time.Duration
	timeout                                                             time.Duration

	mu        sync.Mutex
	prefixSeq int
	vals      map[string][]float64
	costs     map[string][]cost
	costOrder []string
	errs      map[string]string
	skip      map[string]bool
	notes     []string
	progress  io.Writer
	logBuf    bytes.Buffer // a copy of the progress log, for the report
}

func (b *bench) nextPrefix(what string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prefixSeq++
	return fmt.Sprintf("bench-%s-%d", what, b.prefixSeq)
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.progress, "  "+format+"\n", args...)
}

func (b *bench) note(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, n := range b.notes {
		if n == s {
			return
		}
	}
	b.notes = append(b.notes, s)
}

func (b *bench) record(label, metric string, v float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.vals[label+"/"+metric] = append(b.vals[label+"/"+metric], v)
}

func (b *bench) recordCost(label, phase string, ph *phaseStats, tasks int) {
	c, err := ph.end(context.Background(), tasks)
	if err != nil {
		b.note(fmt.Sprintf("%s %s: cost figures: %v", label, phase, err))
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	key := phase + "|" + label
	if _, ok := b.costs[key]; !ok {
		b.costOrder = append(b.costOrder, key)
	}
	b.costs[key] = append(b.costs[key], c)
}

// reset empties River's job table and the bench's own tables and takes a
// checkpoint, so every part of every workload starts from the same state
// (the Postgres analogue of the Redis bench's FLUSHDB).
func (b *bench) reset(ctx context.Context) error {
	if _, err := b.pool.Exec(ctx, "TRUNCATE river_job, bench_counter, bench_ceiling"); err != nil {
		return err
	}
	_, err := b.pool.Exec(ctx, "CHECKPOINT")
	return err
}

// try runs one part of a workload on an empty job table and keeps its error;
// a timeout skips that part in later repetitions.
func (b *bench) try(ctx context.Context, label, workload string, fn func() error) {
	key := label + "/" + workload
	if b.skip[key] || ctx.Err() != nil {
		return
	}
	if err := b.reset(ctx); err != nil {
		b.errs[key] = err.Error()
		return
	}
	err := fn()
	runtime.GC()
	time.Sleep(200 * time.Millisecond)
	if err == nil {
		return
	}
	fmt.Fprintf(b.progress, "  %s %s: ERROR %v\n", label, workload, err)
	b.errs[key] = err.Error()
	if strings.Contains(err.Error(), "timeout") {
		b.skip[key] = true
	}
}

// newClient builds a River client with the given fetch settings. With c > 0
// it works the default queue with MaxWorkers = c; with c == 0 it is an
// insert-only client (no Queues), like a web process that only enqueues.
func (b *bench) newClient(cfg fetchCfg, c int, workers *river.Workers) (*river.Client[pgx.Tx], error) {
	conf := &river.Config{
		FetchCooldown:     cfg.cooldown,
		FetchPollInterval: cfg.poll,
		Logger:            b.logger,
		Workers:           workers,
	}
	if c > 0 {
		conf.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: c}}
	}
	return river.NewClient(riverpgxv5.New(b.pool), conf)
}

// stopClient stops a started client, waiting for running jobs (soft stop),
// then cancelling them if they have not finished in 30 s.
func stopClient(c *river.Client[pgx.Tx]) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel2()
		_ = c.StopAndCancel(ctx2)
	}
}

func main() {
	dsn := flag.String("dsn", "", "Postgres connection string of a scratch database (run.sh starts one); river_job is TRUNCATEd")
	pgpid := flag.Int("pgpid", 0, "postmaster pid, to measure the server's CPU (run.sh passes it); 0: not measured")
	reps := flag.Int("reps", 3, "repetitions; the table shows median [min-max]")
	only := flag.String("only", "", "comma list of workloads: "+strings.Join(allWorkloads, ","))
	n := flag.Int("n", 20000, "throughput: jobs per run with the 1 ms fetch settings")
	nDefault := flag.Int("n-default", 2000, "throughput: jobs per run with River's default fetch settings (at most MaxWorkers jobs per 100 ms fetch cooldown)")
	chainLen := flag.Int("chain", 2000, "chain: jobs in the chain with the 1 ms fetch settings")
	chainDefault := flag.Int("chain-default", 100, "chain: jobs in the chain with River's default fetch settings (a hop costs about one 100 ms fetch cooldown)")
	fanout := flag.Int("fanout", 5000, "fanout: children between the root and the join, 1 ms fetch settings")
	fanoutDefault := flag.Int("fanout-default", 1000, "fanout: children with River's default fetch settings (about 100 jobs/s at c=10, so 5000 take about 50 s)")
	memN := flag.Int("mem", 100000, "memory: jobs enqueued")
	payloadSize := flag.Int("payload", 100, "payload bytes per job (a JSON string field of the job args)")
	poolSize := flag.Int("pool", 20, "pgxpool MaxConns (pgx's default would be max(4, NumCPU); 20 matches go-redis's default pool on 2 cores)")
	timeout := flag.Duration("timeout", 5*time.Minute, "limit for one configuration's part of one workload")
	quick := flag.Bool("quick", false, "small sizes and one repetition, for a smoke run")
	out := flag.String("out", "", "also write the report to this file")
	noteText := flag.String("note", "", "a line to add under the report's header")
	jsonOut := flag.String("json", "", "also write every repetition's figures to this file, as JSON (values by \"label/metric\")")
	flag.Parse()

	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	b := &bench{n: *n, nDefault: *nDefault, chainLen: *chainLen, chainDefaultLen: *chainDefault,
		fanout: *fanout, fanoutDefault: *fanoutDefault, memN: *memN, payloadSize: *payloadSize,
		poolSize: *poolSize, pgpid: *pgpid, timeout: *timeout, ceilDur: 2 * time.Second,
		vals: map[string][]float64{}, costs: map[string][]cost{}, errs: map[string]string{}, skip: map[string]bool{},
	}
	b.progress = io.MultiWriter(os.Stderr, &b.logBuf)
	if *quick {
		quickSize := func(name string, p *int, v int) {
			if !set[name] {
				*p = v
			}
		}
		quickSize("n", &b.n, 2000)
		quickSize("n-default", &b.nDefault, 300)
		quickSize("chain", &b.chainLen, 200)
		quickSize("chain-default", &b.chainDefaultLen, 10)
		quickSize("fanout", &b.fanout, 500)
		quickSize("fanout-default", &b.fanoutDefault, 200)
		quickSize("mem", &b.memN, 5000)
		quickSize("reps", reps, 1)
		b.ceilDur = 500 * time.Millisecond
		if !set["timeout"] {
			b.timeout = time.Minute
		}
	}
	if b.chainLen < 2 || b.chainDefaultLen < 2 || b.fanout < 1 || b.fanoutDefault < 1 || b.n < 1 || b.nDefault < 1 ||
		b.memN < 1 || *reps < 1 || b.poolSize < 4 || b.payloadSize < 0 {
		fatalf("sizes must be positive, chains at least 2 long, -pool at least 4")
	}
	if *dsn == "" {
		fatalf("-dsn is required (./run.sh starts a scratch Postgres and passes it)")
	}
	workloads := map[string]bool{}
	if *only == "" {
		for _, w := range allWorkloads {
			workloads[w] = true
		}
	} else {
		for _, w := range strings.Split(*only, ",") {
			w = strings.TrimSpace(w)
			if !contains(allWorkloads, w) {
				fatalf("unknown workload %q (want %s)", w, strings.Join(allWorkloads, ","))
			}
			workloads[w] = true
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// River logs warnings to stdout by default; the report goes there, so
	// River's log goes to stderr, errors only.
	b.logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))

	pcfg, err := pgxpool.ParseConfig(*dsn)
	if err != nil {
		fatalf("dsn: %v", err)
	}
	pcfg.MaxConns = int32(b.poolSize)
	b.pool, err = pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		fatalf("connect: %v", err)
	}
	defer b.pool.Close()
	if err := b.pool.Ping(ctx); err != nil {
		fatalf("postgres: %v", err)
	}
	if err := b.setup(ctx); err != nil {
		fatalf("setup: %v", err)
	}
	env, err := b.environment(ctx)
	if err != nil {
		fatalf("environment: %v", err)
	}

	started := time.Now()
	for r := 1; r <= *reps && ctx.Err() == nil; r++ {
		fmt.Fprintf(b.progress, "repetition %d/%d\n", r, *reps)
		b.runRep(ctx, workloads, r)
	}
	_ = b.reset(context.Background())
	if ctx.Err() != nil {
		b.note("interrupted: the table holds what was measured before the interrupt")
	}

	report := b.report(workloads, *reps, time.Since(started), *noteText, env)
	fmt.Print(report)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(report), 0o644); err != nil {
			fatalf("write %s: %v", *out, err)
		}
	}
	if *jsonOut != "" {
		b.mu.Lock()
		raw, err := json.MarshalIndent(map[string]any{"values": b.vals}, "", " ")
		b.mu.Unlock()
		if err == nil {
			err = os.WriteFile(*jsonOut, append(raw, '\n'), 0o644)
		}
		if err != nil {
			fatalf("write %s: %v", *jsonOut, err)
		}
	}
}

// setup runs River's migrations (rivermigrate, up to the latest version) and
// creates the bench's own tables.
func (b *bench) setup(ctx context.Context) error {
	migrator, err := rivermigrate.New(riverpgxv5.New(b.pool), nil)
	if err != nil {
		return err
	}
	res, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("rivermigrate: %w", err)
	}
	if len(res.Versions) > 0 {
		b.note(fmt.Sprintf("River migrations applied by rivermigrate: versions %d-%d.", res.Versions[0].Version, res.Versions[len(res.Versions)-1].Version))
	}
	_, err = b.pool.Exec(ctx, `
		CREATE TABLE IF NOT EXISTS bench_counter (id text PRIMARY KEY, n integer NOT NULL);
		CREATE TABLE IF NOT EXISTS bench_ceiling (id bigserial PRIMARY KEY, p text NOT NULL)`)
	return err
}

func (b *bench) runRep(ctx context.Context, w map[string]bool, rep int) {
	cfgs := []fetchCfg{cfgDefault, cfg1ms}
	if w["ceiling"] {
		fmt.Fprintln(b.progress, " ceiling")
		b.try(ctx, "pg", "ceiling", func() error { return pgCeiling(ctx, b) })
	}
	if w["throughput"] {
		fmt.Fprintln(b.progress, " throughput")
		for _, c := range []int{10, 50} {
			for _, cfg := range cfgs {
				b.try(ctx, cfg.label, fmt.Sprintf("throughput c=%d", c), func() error { return riverThroughput(ctx, b, cfg, c) })
			}
		}
		for _, cfg := range cfgs {
			b.try(ctx, cfg.label, "bulk enqueue", func() error { return riverBulkEnqueue(ctx, b, cfg) })
		}
	}
	if w["chain"] {
		fmt.Fprintln(b.progress, " chain")
		for _, v := range []string{"insert", "tx"} {
			b.try(ctx, cfg1ms.label, "chain "+v, func() error { return riverChain(ctx, b, cfg1ms, v, b.chainLen) })
			b.try(ctx, cfgDefault.label, "chain "+v, func() error { return riverChain(ctx, b, cfgDefault, v, b.chainDefaultLen) })
		}
	}
	if w["fanout"] {
		fmt.Fprintln(b.progress, " fanout")
		for _, v := range []string{"plain", "tx"} {
			b.try(ctx, cfg1ms.label, "fanout "+v, func() error { return riverFanout(ctx, b, cfg1ms, v, b.fanout) })
			b.try(ctx, cfgDefault.label, "fanout "+v, func() error { return riverFanout(ctx, b, cfgDefault, v, b.fanoutDefault) })
		}
	}
	if w["memory"] && rep == 1 {
		// Sizes do not depend on the machine's speed: measured once.
		fmt.Fprintln(b.progress, " memory")
		b.try(ctx, cfg1ms.label, "memory", func() error { return riverMemory(ctx, b) })
	}
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

// closer returns a func that closes ch once.
func closer(ch chan struct{}) func() {
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// firstErr keeps the first error reported from a handler.
type firstErr struct {
	ch chan error
}

func newFirstErr() *firstErr { return &firstErr{ch: make(chan error, 1)} }

func (f *firstErr) fail(err error) {
	if err == nil {
		return
	}
	select {
	case f.ch <- err:
	default:
	}
}

func (f *firstErr) check() error {
	select {
	case err := <-f.ch:
		return err
	default:
		return nil
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "riverbench: "+format+"\n", args...)
	os.Exit(1)
}

// pct returns the p-th percentile (nearest rank) of v.
func pct(v []float64, p int) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := (len(s)*p + 99) / 100
	if i < 1 {
		i = 1
	}
	if i > len(s) {
		i = len(s)
	}
	return s[i-1]
}

// summary is the median, min and max of some samples.
type summary struct {
	med, lo, hi float64
	n           int
}

func summarize(v []float64) (summary, bool) {
	if len(v) == 0 {
		return summary{}, false
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return summary{med: m, lo: s[0], hi: s[len(s)-1], n: len(s)}, true
}
