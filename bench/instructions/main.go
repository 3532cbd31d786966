// Command instructions counts Redis's work on plait's hot paths in
// redis-server instructions (Ir), under valgrind's callgrind: unlike
// timings on a small shared machine, instruction counts repeat within a few
// percent from run to run, so they are the figures to compare across
// commits. Run it through bench/instructions.sh, which installs valgrind
// and redis-server when missing:
//
//	bench/instructions.sh                    # every phase, about a minute on 2 cores
//	bench/instructions.sh -n 0.2             # fewer operations, for a smoke run
//	bench/instructions.sh -only submit,chain -json /tmp/ir.json
//	bench/instructions.sh -only batch -dumps /tmp/cg   # then callgrind_annotate /tmp/cg/batch.callgrind
//
// It starts its own redis-server under callgrind, with instrumentation on
// only while a phase runs, and prints one markdown table of instructions
// per operation, then the bytes per pending and per finished run, measured
// on a second, plain redis-server. See README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() { os.Exit(run()) }

func run() int {
	redisServer := flag.String("redis-server", "redis-server", "the redis-server binary to measure")
	scale := flag.Float64("n", 1, "scale every phase's operation count (and the memory runs) by this factor")
	only := flag.String("only", "", "comma list of phases: "+strings.Join(phaseNames(), ","))
	jsonOut := flag.String("json", "", "also write the figures to this file, as JSON")
	keep := flag.String("dumps", "", "keep each phase's callgrind dump in this directory (PHASE.callgrind, for callgrind_annotate)")
	flag.Parse()
	if *scale <= 0 {
		return fail("-n must be positive")
	}
	bin, err := exec.LookPath(*redisServer)
	if err != nil {
		return fail("%v", err)
	}
	want, err := selected(*only)
	if err != nil {
		return fail("%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	started := time.Now()
	rep := report{Scale: *scale}
	if err := measureAll(ctx, bin, *scale, want, *keep, &rep); err != nil {
		fmt.Fprintf(os.Stderr, "instructions: %v\n", err)
		if len(rep.Phases) == 0 && rep.Bytes == nil {
			return 1
		}
		rep.Failed = err.Error()
	}
	rep.Seconds = time.Since(started).Seconds()
	fmt.Print(rep.markdown())
	if *jsonOut != "" {
		raw, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(*jsonOut, append(raw, '\n'), 0o644)
		}
		if err != nil {
			return fail("write %s: %v", *jsonOut, err)
		}
	}
	if rep.Failed != "" {
		return 1
	}
	return 0
}

// measureAll runs the wanted phases on one redis-server under callgrind,
// stopped at the end whatever happened, then the memory measurement.
func measureAll(ctx context.Context, bin string, scale float64, want map[string]bool, keep string, rep *report) error {
	rep.Redis = serverVersion(bin)
	counted := false
	for _, ph := range phases {
		counted = counted || want[ph.name]
	}
	if counted {
		if err := measurePhases(ctx, bin, scale, want, keep, rep); err != nil {
			return err
		}
	}
	if want["memory"] {
		n := scaled(memoryRuns, scale)
		fmt.Fprintf(os.Stderr, "memory: %d one-task runs on a plain redis-server\n", n)
		b, err := measureBytes(ctx, bin, n)
		if err != nil {
			return fmt.Errorf("memory: %w", err)
		}
		rep.Bytes = &b
	}
	return nil
}

// measurePhases runs the wanted phases on one redis-server under
// callgrind, which it stops at the end whatever happened. Its directory is
// removed, unless something failed: then it holds the server's and
// valgrind's logs.
func measurePhases(ctx context.Context, bin string, scale float64, want map[string]bool, keep string, rep *report) (err error) {
	if keep != "" {
		if err := os.MkdirAll(keep, 0o755); err != nil {
			return err
		}
	}
	dir, err := tempDir("callgrind")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "starting redis-server under callgrind in %s\n", dir)
	cg, err := startCallgrind(bin, dir)
	if err != nil {
		return err
	}
	cg.keep = keep
	rep.Valgrind = valgrindVersion()
	defer func() {
		if serr := cg.stop(time.Minute); serr != nil && err == nil {
			err = serr
		}
		if err == nil || errors.Is(err, context.Canceled) {
			os.RemoveAll(dir)
		} else {
			fmt.Fprintf(os.Stderr, "logs kept in %s\n", dir)
		}
	}()
	e := newEnv(cg)
	defer e.admin.Close()
	for _, ph := range phases {
		if !want[ph.name] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		ops := scaled(ph.ops, scale)
		fmt.Fprintf(os.Stderr, "%s: %d %ss\n", ph.name, ops, ph.unit)
		r, err := ph.run(ctx, e, ph, ops)
		if err != nil {
			return fmt.Errorf("%s: %w", ph.name, err)
		}
		fmt.Fprintf(os.Stderr, "  %.0f Ir/%s, %.3f FCALL/%s, %.1fs (serverCron's %.1fM Ir left out)\n",
			r.IrPerOp, ph.unit, r.FcallPerOp, ph.unit, r.Seconds, r.CronIr/1e6)
		rep.Phases = append(rep.Phases, r)
	}
	return nil
}

// report is everything one run measured; it is also the JSON written by
// -json.
type report struct {
	Redis    string       `json:"redis_server"`
	Valgrind string       `json:"valgrind,omitempty"`
	Scale    float64      `json:"scale"`
	Phases   []result     `json:"phases"`
	Bytes    *bytesResult `json:"bytes,omitempty"`
	Seconds  float64      `json:"seconds"`
	Failed   string       `json:"failed,omitempty"`
}

func (r *report) markdown() string {
	var b strings.Builder
	if len(r.Phases) > 0 {
		fmt.Fprintf(&b, "redis-server %s under callgrind (%s); Ir = redis-server instructions per operation, serverCron left out.\n\n", r.Redis, r.Valgrind)
		b.WriteString("| phase | operations | Ir/op | ops/FCALL |\n|---|--:|--:|--:|\n")
		for _, p := range r.Phases {
			perCall := "-"
			if p.FcallPerOp > 0 {
				perCall = fmt.Sprintf("%.2f", 1/p.FcallPerOp)
			}
			fmt.Fprintf(&b, "| %s | %s %ss | %s | %s |\n", titleOf(p.Phase), thousands(float64(p.Ops)), p.Unit, thousands(p.IrPerOp), perCall)
		}
		b.WriteString("\n")
	}
	if m := r.Bytes; m != nil {
		fmt.Fprintf(&b, "Bytes per run (used_memory, %s one-task runs, plain redis-server %s): pending %s B, finished %s B.\n\n",
			thousands(float64(m.Runs)), r.Redis, thousands(m.Pending), thousands(m.Finished))
		if m.PendingParts != nil {
			fmt.Fprintf(&b, "By kind of key (MEMORY USAGE per run; rest: the keyspace's tables and the allocator): pending: %s; finished: %s.\n\n",
				formatParts(m.PendingParts, m.Pending), formatParts(m.FinishedParts, m.Finished))
		}
	}
	if r.Failed != "" {
		fmt.Fprintf(&b, "FAILED: %s\n\n", r.Failed)
	}
	fmt.Fprintf(&b, "Took %.0fs.\n", r.Seconds)
	return b.String()
}

func titleOf(name string) string {
	for _, ph := range phases {
		if ph.name == name {
			return ph.title
		}
	}
	return name
}

// thousands formats v rounded to a whole number, with commas.
func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", math.Round(v))
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

func phaseNames() []string {
	var names []string
	for _, ph := range phases {
		names = append(names, ph.name)
	}
	return append(names, "memory")
}

// selected parses -only; empty selects every phase.
func selected(only string) (map[string]bool, error) {
	names := phaseNames()
	want := map[string]bool{}
	if strings.TrimSpace(only) == "" {
		for _, n := range names {
			want[n] = true
		}
		return want, nil
	}
	for _, n := range strings.Split(only, ",") {
		n = strings.TrimSpace(n)
		known := false
		for _, m := range names {
			known = known || m == n
		}
		if !known {
			return nil, fmt.Errorf("unknown phase %q (want %s)", n, strings.Join(names, ","))
		}
		want[n] = true
	}
	return want, nil
}

func scaled(ops int, scale float64) int {
	return max(1, int(math.Round(float64(ops)*scale)))
}

func serverVersion(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "?"
	}
	for _, f := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(f, "v="); ok {
			return v
		}
	}
	return strings.TrimSpace(string(out))
}

func valgrindVersion() string {
	out, err := exec.Command("valgrind", "--version").Output()
	if err != nil {
		return "valgrind ?"
	}
	return strings.TrimSpace(string(out))
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "instructions: "+format+"\n", args...)
	return 2
}
