// Command bench measures plait on Redis side by side with asynq, on the
// same Redis server and the same machine, and prints one markdown table.
//
//	go run .                      # from bench/: scratch redis-server, full run
//	go run . -quick               # small sizes, one repetition
//	go run . -only chain,fanout   # some workloads
//	go run . -redis 127.0.0.1:6379 -out results/today.md
//
// Workloads: throughput (enqueue and process rates of independent no-op
// tasks), chain (per-hop latency of a sequential DAG), fanout (one root,
// many children, one join), memory (Redis bytes per pending and per
// finished task), ceiling (raw Redis rates from redis-benchmark and a no-op
// script from Go). See README.md.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/internal/redistest"
)

// memEnqueuers is how many goroutines enqueue in the memory workload, where
// the rate is not the point.
const memEnqueuers = 10

var allWorkloads = []string{"throughput", "chain", "fanout", "memory", "ceiling"}

type bench struct {
	addr string
	rc   *redis.Client

	n, chainLen, chainDefaultLen, fanout, memN int
	benchN, evalN, payloadSize                 int
	timeout                                    time.Duration

	mu        sync.Mutex
	prefixSeq int
	vals      map[string][]float64
	costs     map[string][]cost
	costOrder []string
	errs      map[string]string
	skip      map[string]bool
	notes     []string
	progress  io.Writer
}

func (b *bench) nextPrefix(what string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prefixSeq++
	return fmt.Sprintf("bench-%s-%d", what, b.prefixSeq)
}

func (b *bench) payload() []byte {
	p := make([]byte, b.payloadSize)
	for i := range p {
		p[i] = 'x'
	}
	return p
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
		b.note(fmt.Sprintf("%s %s: commandstats: %v", label, phase, err))
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// The Redis CPU per processed task, for the peer table (peers.sh).
	if cs, ok := strings.CutPrefix(phase, "throughput: process c="); ok {
		b.vals[label+"/rcpu.proc.c"+cs] = append(b.vals[label+"/rcpu.proc.c"+cs], c.redisCPU)
	}
	key := phase + "|" + label
	if _, ok := b.costs[key]; !ok {
		b.costOrder = append(b.costOrder, key)
	}
	b.costs[key] = append(b.costs[key], c)
}

// try runs one library's part of a workload on an empty database and keeps
// its error; a timeout skips that part in later repetitions.
func (b *bench) try(ctx context.Context, label, workload string, fn func() error) {
	key := label + "/" + workload
	if b.skip[key] {
		return
	}
	if err := b.rc.FlushDB(ctx).Err(); err != nil {
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

func main() {
	addr := flag.String("redis", "", "use this Redis (host:port) instead of a scratch redis-server; it is FLUSHDB'd")
	reps := flag.Int("reps", 3, "repetitions; the table shows median [min-max]")
	only := flag.String("only", "", "comma list of workloads: "+strings.Join(allWorkloads, ","))
	n := flag.Int("n", 20000, "throughput: tasks per run")
	chainLen := flag.Int("chain", 2000, "chain: tasks in the chain")
	chainDefault := flag.Int("chain-default", 30, "chain: tasks in asynq's chain at its default 1 s task check (each hop costs about 1 s)")
	fanout := flag.Int("fanout", 5000, "fanout: children between the root and the join")
	memN := flag.Int("mem", 100000, "memory: tasks enqueued")
	payloadSize := flag.Int("payload", 100, "payload bytes per task")
	timeout := flag.Duration("timeout", 5*time.Minute, "limit for one library's part of one workload")
	quick := flag.Bool("quick", false, "small sizes and one repetition, for a smoke run")
	out := flag.String("out", "", "also write the report to this file")
	noteText := flag.String("note", "", "a line to add under the report's header (for example what was measured)")
	jsonOut := flag.String("json", "", "also write every repetition's figures to this file, as JSON (values by \"label/metric\"), for peers.sh")
	flag.Parse()

	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	b := &bench{n: *n, chainLen: *chainLen, chainDefaultLen: *chainDefault, fanout: *fanout, memN: *memN,
		benchN: 200000, evalN: 100000, payloadSize: *payloadSize, timeout: *timeout,
		vals: map[string][]float64{}, costs: map[string][]cost{}, errs: map[string]string{}, skip: map[string]bool{},
		progress: os.Stderr}
	if *quick {
		quickSize := func(name string, p *int, v int) {
			if !set[name] {
				*p = v
			}
		}
		quickSize("n", &b.n, 2000)
		quickSize("chain", &b.chainLen, 200)
		quickSize("chain-default", &b.chainDefaultLen, 4)
		quickSize("fanout", &b.fanout, 500)
		quickSize("mem", &b.memN, 5000)
		quickSize("reps", reps, 1)
		b.benchN, b.evalN = 20000, 20000
		if !set["timeout"] {
			b.timeout = time.Minute
		}
	}
	if b.payloadSize < 8 {
		b.payloadSize = 8
	}
	if b.chainLen < 2 || b.chainDefaultLen < 2 || b.fanout < 1 || b.n < 1 || b.memN < 1 || *reps < 1 {
		fatalf("sizes must be positive and chains at least 2 long")
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

	if *addr == "" {
		srv, err := redistest.Start()
		if err != nil {
			fatalf("%v (install redis-server, or pass -redis host:port)", err)
		}
		defer srv.Close()
		b.addr = srv.Addr
		fmt.Fprintf(os.Stderr, "scratch redis-server on %s\n", b.addr)
	} else {
		b.addr = *addr
		fmt.Fprintf(os.Stderr, "WARNING: every workload runs FLUSHDB on %s\n", b.addr)
	}
	b.rc = redis.NewClient(&redis.Options{Addr: b.addr})
	defer b.rc.Close()
	if err := b.rc.Ping(ctx).Err(); err != nil {
		fatalf("redis at %s: %v", b.addr, err)
	}

	started := time.Now()
	for r := 1; r <= *reps && ctx.Err() == nil; r++ {
		fmt.Fprintf(os.Stderr, "repetition %d/%d\n", r, *reps)
		b.runRep(ctx, workloads)
	}
	_ = b.rc.FlushDB(context.Background()).Err()
	if ctx.Err() != nil {
		b.note("interrupted: the table holds what was measured before the interrupt")
	}

	report := b.report(workloads, *reps, time.Since(started), *noteText)
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

func (b *bench) runRep(ctx context.Context, w map[string]bool) {
	if w["ceiling"] {
		fmt.Fprintln(os.Stderr, " ceiling")
		for _, c := range []int{1, 10, 50} {
			b.try(ctx, "redis", fmt.Sprintf("evalsha c=%d", c), func() error { return evalshaCeiling(ctx, b, c) })
		}
		b.try(ctx, "redis", "redis-benchmark", func() error { return redisBenchmark(ctx, b) })
	}
	if w["throughput"] {
		fmt.Fprintln(os.Stderr, " throughput")
		for _, c := range []int{10, 50} {
			wl := fmt.Sprintf("throughput c=%d", c)
			b.try(ctx, "plait", wl, func() error { return plaitThroughput(ctx, b, c) })
			b.try(ctx, "asynq", wl, func() error { return asynqThroughput(ctx, b, c) })
		}
	}
	if w["chain"] {
		fmt.Fprintln(os.Stderr, " chain")
		b.try(ctx, "plait", "chain", func() error { return plaitChain(ctx, b) })
		b.try(ctx, asynqLabel(time.Millisecond), "chain", func() error { return asynqChain(ctx, b, time.Millisecond, b.chainLen) })
		b.try(ctx, asynqLabel(0), "chain", func() error { return asynqChain(ctx, b, 0, b.chainDefaultLen) })
	}
	if w["fanout"] {
		fmt.Fprintln(os.Stderr, " fanout")
		b.try(ctx, "plait", "fanout", func() error { return plaitFanout(ctx, b) })
		b.try(ctx, asynqLabel(time.Millisecond), "fanout", func() error { return asynqFanout(ctx, b, time.Millisecond) })
		b.try(ctx, asynqLabel(0), "fanout", func() error { return asynqFanout(ctx, b, 0) })
	}
	if w["memory"] {
		fmt.Fprintln(os.Stderr, " memory")
		b.try(ctx, "plait", "memory", func() error { return plaitMemory(ctx, b) })
		b.try(ctx, "asynq", "memory", func() error { return asynqMemory(ctx, b) })
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
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
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
