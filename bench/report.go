package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"
)

// row is one line of the main table: a plait figure next to an asynq one.
type row struct {
	workload, metric string
	unit             string // "/s", "ms", "s", "B", "keys"
	higherBetter     bool
	key              string // metric name shared by both libraries
	asynq            string // label of the asynq configuration
	ceiling          string // redis/<metric> for the Redis ceiling column
}

func (b *bench) rows() []row {
	tp := fmt.Sprintf("throughput, n=%d, %d B", b.n, b.payloadSize)
	ch := fmt.Sprintf("chain, L=%d, c=10", b.chainLen)
	chd := fmt.Sprintf("chain, c=10 (asynq L=%d)", b.chainDefaultLen)
	fo := fmt.Sprintf("fan-out/fan-in, F=%d, c=10", b.fanout)
	mem := fmt.Sprintf("memory, %d tasks", b.memN)
	t1, t0 := asynqLabel(time.Millisecond), asynqLabel(0)
	return []row{
		{tp, "enqueue tasks/s, 1 goroutine", "/s", true, "tp.enq", "asynq", "redis/evalsha.c1"},
		{tp, "enqueue tasks/s, 1 goroutine, SubmitMany of 1000 (asynq has no bulk enqueue)", "/s", true, "tp.enqmany", "asynq", ""},
		{tp, "process tasks/s, c=10", "/s", true, "tp.proc.c10", "asynq", "redis/evalsha.c10"},
		{tp, "process tasks/s, c=50", "/s", true, "tp.proc.c50", "asynq", "redis/evalsha.c50"},
		{ch, "hop p50 ms (asynq task check 1 ms)", "ms", false, "chain.p50", t1, ""},
		{ch, "hop p99 ms (asynq task check 1 ms)", "ms", false, "chain.p99", t1, ""},
		{ch, "hop mean ms (asynq task check 1 ms)", "ms", false, "chain.mean", t1, ""},
		{chd, "hop p50 ms (asynq default task check)", "ms", false, "chain.p50", t0, ""},
		{chd, "hop p99 ms (asynq default task check)", "ms", false, "chain.p99", t0, ""},
		{fo, "total s (asynq task check 1 ms)", "s", false, "fan.total", t1, ""},
		{fo, "tasks/s (asynq task check 1 ms)", "/s", true, "fan.tps", t1, ""},
		{fo, "join pickup ms (asynq task check 1 ms)", "ms", false, "fan.join", t1, ""},
		{fo, "total s (asynq default task check)", "s", false, "fan.total", t0, ""},
		{fo, "tasks/s (asynq default task check)", "/s", true, "fan.tps", t0, ""},
		{mem, "used_memory B per pending task", "B", false, "mem.pending", "asynq", ""},
		{mem, "used_memory B per finished task, kept 1 h", "B", false, "mem.done", "asynq", ""},
		{mem, "keys per pending task", "keys", false, "mem.pending.keys", "asynq", ""},
		{mem, "keys per finished task", "keys", false, "mem.done.keys", "asynq", ""},
	}
}

func workloadOf(key string) string {
	switch {
	case strings.HasPrefix(key, "tp."):
		return "throughput"
	case strings.HasPrefix(key, "chain."):
		return "chain"
	case strings.HasPrefix(key, "fan."):
		return "fanout"
	case strings.HasPrefix(key, "mem."):
		return "memory"
	}
	return "ceiling"
}

func fmtNum(v float64, unit string) string {
	switch unit {
	case "/s", "B":
		return commas(int64(math.Round(v)))
	case "ms", "s":
		if v >= 100 {
			return fmt.Sprintf("%.0f", v)
		}
		if v >= 10 {
			return fmt.Sprintf("%.1f", v)
		}
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func fmtRatio(r float64) string {
	if r >= 0.1 {
		return fmt.Sprintf("%.2f", r)
	}
	return strconv.FormatFloat(r, 'g', 2, 64)
}

func commas(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []string
	for len(s) > 3 {
		out = append([]string{s[len(s)-3:]}, out...)
		s = s[:len(s)-3]
	}
	out = append([]string{s}, out...)
	r := strings.Join(out, ",")
	if neg {
		r = "-" + r
	}
	return r
}

func fmtSummary(s summary, unit string) string {
	if s.n == 1 || fmtNum(s.lo, unit) == fmtNum(s.hi, unit) {
		return fmtNum(s.med, unit)
	}
	return fmt.Sprintf("%s [%s-%s]", fmtNum(s.med, unit), fmtNum(s.lo, unit), fmtNum(s.hi, unit))
}

// cell renders one library's figure, or its error.
func (b *bench) cell(label, key, unit string) (string, summary, bool) {
	if s, ok := summarize(b.vals[label+"/"+key]); ok {
		return fmtSummary(s, unit), s, true
	}
	for k, e := range b.errs {
		if strings.HasPrefix(k, label+"/") && strings.HasPrefix(strings.TrimPrefix(k, label+"/"), workloadOf(key)) {
			return "failed: " + shorten(e, 80), summary{}, false
		}
	}
	return "–", summary{}, false
}

func shorten(s string, n int) string {
	s = strings.ReplaceAll(s, "|", "/")
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (b *bench) report(w map[string]bool, reps int, took time.Duration, note string) string {
	var sb strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&sb, format, args...) }
	p("# plait vs asynq on Redis\n\n")
	p("%s, `%s`, %d repetition(s), %s.\n\n", time.Now().Format("2006-01-02 15:04 MST"), commandLine(), reps, took.Round(time.Second))
	p("%s\n\n", machineLine())
	if note != "" {
		p("%s\n\n", note)
	}
	p("Figures are median [min-max] over the repetitions. plait/asynq is the ratio of the medians: ")
	p("above 1 means plait is higher (better for rates, worse for latencies, times and bytes).\n\n")

	p("| workload | metric | plait | asynq | plait/asynq | Redis ceiling |\n|---|---|---|---|---|---|\n")
	for _, r := range b.rows() {
		if !w[workloadOf(r.key)] {
			continue
		}
		pv, ps, pok := b.cell("plait", r.key, r.unit)
		av, as, aok := b.cell(r.asynq, r.key, r.unit)
		ratio := ""
		if pok && aok && as.med != 0 {
			ratio = fmtRatio(ps.med / as.med)
		}
		ceil := ""
		if r.ceiling != "" {
			if s, ok := summarize(b.vals[r.ceiling]); ok {
				ceil = fmtSummary(s, "/s") + " (no-op EVALSHA, c=" + strings.TrimPrefix(r.ceiling, "redis/evalsha.c") + ")"
			}
		}
		p("| %s | %s | %s | %s | %s | %s |\n", r.workload, r.metric, pv, av, ratio, ceil)
	}
	p("\n")

	if w["ceiling"] {
		p("## Raw Redis ceiling\n\n")
		p("`redis-benchmark -q -n %d -t set,lpush,rpop,zadd -c 50 [-P 16]`, requests/s; and a no-op Lua script (`return 1`) by EVALSHA from Go, %d calls, one round trip each.\n\n", b.benchN, b.evalN)
		p("| op | -c 50 | -c 50 -P 16 |\n|---|---|---|\n")
		for _, op := range benchOps {
			a, _, _ := b.cell("redis", "rb."+op+".P1", "/s")
			c, _, _ := b.cell("redis", "rb."+op+".P16", "/s")
			p("| %s | %s | %s |\n", op, a, c)
		}
		p("\n| no-op EVALSHA from Go | calls/s |\n|---|---|\n")
		for _, c := range []string{"1", "10", "50"} {
			v, _, _ := b.cell("redis", "evalsha.c"+c, "/s")
			p("| %s goroutine(s) | %s |\n", c, v)
		}
		p("\n")
	}

	if len(b.costOrder) > 0 {
		p("## Where the time goes (per task, from INFO cpu, INFO commandstats and getrusage)\n\n")
		p("Redis CPU: server user+sys CPU. Client CPU: this whole process (library, go-redis, and for asynq its server too). ")
		p("Script calls: EVAL/EVALSHA/FCALL; their µs include the commands they run. Other commands also count the commands run inside scripts. ")
		p("Busiest commands (calls/task and µs/task) are from the last repetition.\n\n")
		p("| phase | library | Redis CPU µs | client CPU µs | script calls | µs in scripts | other commands | busiest commands |\n|---|---|---|---|---|---|---|---|\n")
		keys := append([]string(nil), b.costOrder...)
		sort.SliceStable(keys, func(i, j int) bool {
			return strings.SplitN(keys[i], "|", 2)[0] < strings.SplitN(keys[j], "|", 2)[0]
		})
		for _, k := range keys {
			cs := b.costs[k]
			phase, label, _ := strings.Cut(k, "|")
			med := func(f func(cost) float64) string {
				v := make([]float64, len(cs))
				for i, c := range cs {
					v[i] = f(c)
				}
				s, _ := summarize(v)
				return fmt.Sprintf("%.1f", s.med)
			}
			p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", phase, label,
				med(func(c cost) float64 { return c.redisCPU }), med(func(c cost) float64 { return c.clientCPU }),
				med(func(c cost) float64 { return c.scriptCalls }), med(func(c cost) float64 { return c.scriptUsec }),
				med(func(c cost) float64 { return c.otherCalls }), cs[len(cs)-1].top)
		}
		p("\n")
	}

	var extra []string
	for _, k := range []struct{ key, text, unit string }{
		{"plait/chain.submit", "plait chain: Submit of the whole chain, ms", "ms"},
		{"plait/fan.submit", "plait fan-out: Submit of the whole DAG, ms", "ms"},
		{asynqLabel(0) + "/chain.mean", "asynq default task check: chain hop mean, ms", "ms"},
		{asynqLabel(0) + "/fan.join", "asynq default task check: fan-out join pickup, ms", "ms"},
	} {
		if s, ok := summarize(b.vals[k.key]); ok {
			extra = append(extra, fmt.Sprintf("- %s: %s", k.text, fmtSummary(s, k.unit)))
		}
	}
	if len(extra) > 0 {
		p("## Other figures\n\n%s\n\n", strings.Join(extra, "\n"))
	}

	var errs []string
	for k, e := range b.errs {
		errs = append(errs, fmt.Sprintf("- %s: %s", k, shorten(e, 400)))
	}
	sort.Strings(errs)
	notes := append([]string(nil), b.notes...)
	if len(errs) > 0 || len(notes) > 0 {
		p("## Failures and notes\n\n")
		for _, e := range errs {
			p("%s\n", e)
		}
		for _, n := range notes {
			p("- %s\n", n)
		}
		p("\n")
	}
	return sb.String()
}

// machineLine describes the machine, the Redis server and the toolchain.
func machineLine() string {
	cpu := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	rv := "redis-server version unknown"
	if out, err := exec.Command("redis-server", "--version").Output(); err == nil {
		rv = strings.TrimSpace(string(out))
	}
	deps := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		var parts []string
		for _, d := range bi.Deps {
			switch d.Path {
			case "github.com/hibiken/asynq", "github.com/redis/go-redis/v9":
				parts = append(parts, d.Path+" "+d.Version)
			}
		}
		deps = strings.Join(parts, ", ")
	}
	commit := ""
	if out, err := exec.Command("git", "log", "-1", "--format=%h %s").Output(); err == nil {
		commit = "; plait at `" + strings.TrimSpace(string(out)) + "`"
		if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
			commit += " (working tree has uncommitted changes)"
		}
	}
	return fmt.Sprintf("Machine: nproc %d, %s; %s; %s; %s%s. Redis and this process share the cores.",
		runtime.NumCPU(), cpu, rv, runtime.Version(), deps, commit)
}

// commandLine is how the command was started, without the -note text,
// which the report prints on its own.
func commandLine() string {
	args := []string{"bench"}
	skip := false
	for _, a := range os.Args[1:] {
		switch {
		case skip:
			skip = false
		case a == "-note" || a == "--note":
			skip = true
		case strings.HasPrefix(a, "-note=") || strings.HasPrefix(a, "--note="):
		default:
			args = append(args, a)
		}
	}
	return strings.Join(args, " ")
}
