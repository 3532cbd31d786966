package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// info returns the numeric fields of one INFO section.
func info(ctx context.Context, rc *redis.Client, section string) (map[string]string, error) {
	txt, err := rc.Info(ctx, section).Result()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(txt, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok {
			out[k] = v
		}
	}
	return out, nil
}

func infoFloat(m map[string]string, k string) float64 {
	f, _ := strconv.ParseFloat(m[k], 64)
	return f
}

// redisCPU returns the server's used CPU seconds (user + system).
func redisCPU(ctx context.Context, rc *redis.Client) float64 {
	m, err := info(ctx, rc, "cpu")
	if err != nil {
		return 0
	}
	return infoFloat(m, "used_cpu_user") + infoFloat(m, "used_cpu_sys")
}

// usedMemory waits briefly for the server to settle and returns used_memory
// and used_memory_dataset.
func usedMemory(ctx context.Context, rc *redis.Client) (total, dataset float64, err error) {
	time.Sleep(500 * time.Millisecond)
	m, err := info(ctx, rc, "memory")
	if err != nil {
		return 0, 0, err
	}
	return infoFloat(m, "used_memory"), infoFloat(m, "used_memory_dataset"), nil
}

// cmdStat is one INFO commandstats line.
type cmdStat struct {
	name  string
	calls float64
	usec  float64
}

func commandStats(ctx context.Context, rc *redis.Client) ([]cmdStat, error) {
	m, err := info(ctx, rc, "commandstats")
	if err != nil {
		return nil, err
	}
	var out []cmdStat
	for k, v := range m {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok || strings.HasPrefix(name, "config") || name == "info" {
			continue
		}
		s := cmdStat{name: name}
		for _, kv := range strings.Split(v, ",") {
			f, val, _ := strings.Cut(kv, "=")
			x, _ := strconv.ParseFloat(val, 64)
			switch f {
			case "calls":
				s.calls = x
			case "usec":
				s.usec = x
			}
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].usec > out[j].usec })
	return out, nil
}

// phaseStats measures the Redis and client cost of one phase of a workload.
type phaseStats struct {
	rc        *redis.Client
	redisCPU0 float64
	selfCPU0  float64
}

func startPhase(ctx context.Context, rc *redis.Client) (*phaseStats, error) {
	if err := rc.ConfigResetStat(ctx).Err(); err != nil {
		return nil, err
	}
	return &phaseStats{rc: rc, redisCPU0: redisCPU(ctx, rc), selfCPU0: selfCPU()}, nil
}

// cost is what one phase cost, per task.
type cost struct {
	redisCPU    float64 // µs of server CPU per task
	clientCPU   float64 // µs of this process's CPU per task
	scriptCalls float64 // EVAL/EVALSHA/FCALL calls per task
	scriptUsec  float64 // µs inside scripts per task (includes their commands)
	otherCalls  float64 // other commands per task, including those run by scripts
	top         string  // the busiest commands
}

func (p *phaseStats) end(ctx context.Context, tasks int) (cost, error) {
	var c cost
	if tasks <= 0 {
		return c, errors.New("no tasks")
	}
	n := float64(tasks)
	c.redisCPU = (redisCPU(ctx, p.rc) - p.redisCPU0) * 1e6 / n
	c.clientCPU = (selfCPU() - p.selfCPU0) * 1e6 / n
	stats, err := commandStats(ctx, p.rc)
	if err != nil {
		return c, err
	}
	var parts []string
	for _, s := range stats {
		switch {
		case strings.HasPrefix(s.name, "eval") || strings.HasPrefix(s.name, "fcall"):
			c.scriptCalls += s.calls / n
			c.scriptUsec += s.usec / n
		default:
			c.otherCalls += s.calls / n
		}
		if len(parts) < 6 && s.calls/n >= 0.01 {
			parts = append(parts, fmt.Sprintf("%s %.2f×/%.1fµs", s.name, s.calls/n, s.usec/n))
		}
	}
	c.top = strings.Join(parts, ", ")
	return c, nil
}

// selfCPU returns this process's user + system CPU seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// recordMemory reads used_memory after the tasks finished and records the
// memory workload's figures for lib: m0/d0 before enqueueing, m1/d1 and
// keys1 with the tasks pending.
func (b *bench) recordMemory(ctx context.Context, lib string, N int, m0, d0, m1, d1 float64, keys1 int64) error {
	m2, d2, err := usedMemory(ctx, b.rc)
	if err != nil {
		return err
	}
	keys2, _ := b.rc.DBSize(ctx).Result()
	n := float64(N)
	b.record(lib, "mem.pending", (m1-m0)/n)
	b.record(lib, "mem.done", (m2-m0)/n)
	b.record(lib, "mem.pending.keys", float64(keys1)/n)
	b.record(lib, "mem.done.keys", float64(keys2)/n)
	b.logf("%s memory N=%d: pending %.0f B/task (dataset %.0f, %d keys), finished %.0f B/task (dataset %.0f, %d keys)",
		lib, N, (m1-m0)/n, (d1-d0)/n, keys1, (m2-m0)/n, (d2-d0)/n, keys2)
	return nil
}
