package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

var benchOps = []string{"SET", "LPUSH", "RPOP", "ZADD"}

var benchLine = regexp.MustCompile(`^([A-Z]+)[^:]*: ([0-9.]+) requests per second`)

// redisBenchmark runs redis-benchmark against the server, unpipelined and
// with 16 commands per pipeline.
func redisBenchmark(ctx context.Context, b *bench) error {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		b.note("redis-benchmark not found: raw command rates not measured")
		return nil
	}
	host, port, err := net.SplitHostPort(b.addr)
	if err != nil {
		return err
	}
	for _, pipe := range []int{1, 16} {
		args := []string{"-h", host, "-p", port, "-q", "-n", strconv.Itoa(b.benchN), "-t", "set,lpush,rpop,zadd", "-c", "50"}
		if pipe > 1 {
			args = append(args, "-P", strconv.Itoa(pipe))
		}
		out, err := exec.CommandContext(ctx, bin, args...).Output()
		if err != nil {
			return fmt.Errorf("redis-benchmark: %w", err)
		}
		for _, line := range strings.FieldsFunc(string(out), func(r rune) bool { return r == '\r' || r == '\n' }) {
			m := benchLine.FindStringSubmatch(strings.TrimSpace(line))
			if m == nil {
				continue
			}
			v, _ := strconv.ParseFloat(m[2], 64)
			b.record("redis", fmt.Sprintf("rb.%s.P%d", m[1], pipe), v)
		}
	}
	return b.rc.FlushDB(ctx).Err()
}

var noopScript = redis.NewScript("return 1")

// evalshaCeiling times a no-op script called from c goroutines, one call per
// round trip: the most script calls per second a client of this design can
// make at that concurrency.
func evalshaCeiling(ctx context.Context, b *bench, c int) error {
	client := redis.NewClient(&redis.Options{Addr: b.addr, PoolSize: c})
	defer client.Close()
	if err := noopScript.Load(ctx, client).Err(); err != nil {
		return err
	}
	n := b.evalN
	t0 := time.Now()
	if err := parallel(c, n, func(int) error {
		return noopScript.EvalSha(ctx, client, nil).Err()
	}); err != nil {
		return err
	}
	rate := float64(n) / time.Since(t0).Seconds()
	b.record("redis", "evalsha.c"+strconv.Itoa(c), rate)
	b.logf("no-op EVALSHA c=%d: %.0f calls/s", c, rate)
	return nil
}
