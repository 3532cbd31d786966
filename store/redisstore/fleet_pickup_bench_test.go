package redisstore_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// BenchmarkFleetPickup measures how long one run takes through an idle
// fleet on a three-master Redis Cluster: two worker processes (this test
// binary run again, fleet_worker_test.go), each a plait.Scheduler with its
// own cluster client, wait in ReadyWait; per iteration a third client
// submits a one-task run and waits for it with RunWait, and the time from
// Submit's call to RunWait's return is recorded. It reports the p50, p90,
// p99 and max of that latency, with 1 and 16 shards, and logs where the
// time went, from the workers' own timestamps (fleetStages), in two
// fleets:
//
//   - idle: before each iteration both workers are in ReadyWait and every
//     connection they block on is blocked on its server (CLIENT LIST);
//   - after-burst: the fleet first ran a burst of runs submitted at once,
//     which leaves wake-up tokens in the queues' wake lists, as a fleet
//     that has been busy has; before each iteration both workers are in
//     ReadyWait.
//
// Without redis-server it is skipped (it fails under PLAIT_REQUIRE_REDIS=1).
//
//	go test -run '^$' -bench FleetPickup -benchtime 400x ./store/redisstore
func BenchmarkFleetPickup(b *testing.B) {
	if server.addr == "" {
		redistest.Skip(b, errString(server.missing))
	}
	cluster, err := redistest.StartCluster(3)
	if err != nil {
		redistest.Skip(b, err)
	}
	b.Cleanup(cluster.Close)
	for _, burst := range []int{0, fleetBurst} {
		for _, shards := range []int{1, 16} {
			name := "idle"
			if burst > 0 {
				name = "after-burst"
			}
			b.Run("cluster/"+name+"/shards="+strconv.Itoa(shards), func(b *testing.B) {
				measureFleet(b, cluster, shards, burst)
			})
		}
	}
}

// fleetBurst is how many runs the after-burst fleet runs first.
const fleetBurst = 1000

// fleetEvent is one line of a worker (see fleetTracer).
type fleetEvent struct {
	worker     int
	kind       string
	start, end time.Time
	n          int
}

// fleet is the benchmark's view of its two workers.
type fleet struct {
	b       *testing.B
	names   []string
	masters []*redis.Client
	events  chan fleetEvent
	// waiting reports, per worker, that it entered ReadyWait and has not
	// left it since.
	waiting []bool
	// blocked is, per worker, how many connections it keeps blocked on the
	// servers while idle, learnt once at the start; nil: idle is only
	// both workers in ReadyWait.
	blocked []int
	// done ends the readers' sends: the benchmark reads no more.
	done chan struct{}
	// seen holds the events read since the last iteration.
	seen []fleetEvent
}

func measureFleet(b *testing.B, cluster *redistest.Cluster, shards, burst int) {
	ctx := context.Background()
	prefix := "fleet" + strconv.FormatInt(prefixes.Add(1), 10)
	c := cluster.Client()
	b.Cleanup(func() { _ = c.Close() })
	rs, err := redisstore.New(ctx, c, redisstore.WithShards(shards), redisstore.WithPrefix(prefix), redisstore.WithLogger(quietLogger()))
	require.NoError(b, err)
	p, err := plait.New(rs, plait.WithRemoteHandlers(), plait.WithLogger(quietLogger()))
	require.NoError(b, err)
	f := &fleet{b: b, events: make(chan fleetEvent, 1024), waiting: make([]bool, 2), done: make(chan struct{})}
	b.Cleanup(func() { close(f.done) })
	for _, addr := range cluster.Addrs {
		m := redis.NewClient(&redis.Options{Addr: addr})
		b.Cleanup(func() { _ = m.Close() })
		f.masters = append(f.masters, m)
	}
	for i := range 2 {
		f.start(b, cluster, prefix, shards, i)
	}
	f.learnIdle(ctx)
	wf := plait.NewWorkflow("one").Task("a", fleetHandler, nil)
	if burst > 0 {
		f.burst(ctx, p, wf, burst)
		f.blocked = nil
		tokens := int64(0)
		for sh := range shards {
			tokens += c.LLen(ctx, prefix+":{"+strconv.Itoa(sh)+"}:n:"+store.DefaultQueue).Val()
		}
		b.Logf("after the burst: %d wake-up tokens", tokens)
	}
	lat := make([]time.Duration, 0, b.N)
	var stages fleetStages
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.waitIdle(ctx)
		f.seen = f.seen[:0]
		t0 := time.Now()
		run, err := p.Submit(ctx, wf)
		require.NoError(b, err)
		t1 := time.Now()
		_, err = p.RunWait(ctx, run.ID)
		require.NoError(b, err)
		t2 := time.Now()
		lat = append(lat, t2.Sub(t0))
		f.waitRan(t0)
		stages.add(f.seen, t0, t1, t2)
	}
	b.StopTimer()
	reportQuantiles(b, lat)
	if b.N > 1 {
		stages.log(b)
	}
}

// burst submits n runs at once and waits for them all, reading the
// workers' lines meanwhile.
func (f *fleet) burst(ctx context.Context, p *plait.Scheduler, wf *plait.Workflow, n int) {
	done := make(chan error, 1)
	go func() {
		ids := make([]string, 0, n)
		for range n {
			run, err := p.Submit(ctx, wf)
			if err != nil {
				done <- err
				return
			}
			ids = append(ids, run.ID)
		}
		for _, id := range ids {
			if _, err := p.RunWait(ctx, id); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for {
		select {
		case e := <-f.events:
			f.take(e)
			f.seen = f.seen[:0]
		case err := <-done:
			require.NoError(f.b, err)
			return
		}
	}
}

// start runs worker i as a subprocess, stopped at the benchmark's cleanup.
func (f *fleet) start(b *testing.B, cluster *redistest.Cluster, prefix string, shards, i int) {
	name := prefix + "-w" + strconv.Itoa(i)
	f.names = append(f.names, name)
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(),
		fleetEnvAddrs+"="+strings.Join(cluster.Addrs, ","),
		fleetEnvPrefix+"="+prefix,
		fleetEnvShards+"="+strconv.Itoa(shards),
		fleetEnvName+"="+name,
	)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(b, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	read := make(chan struct{})
	go func() {
		defer close(read)
		f.read(i, stdout)
	}()
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = stdin.Close()
		<-read
		_ = cmd.Wait()
	})
}

// read passes worker i's lines to f.events until its stdout closes.
func (f *fleet) read(i int, r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var kind string
		var start, end int64
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "%s %d %d %d", &kind, &start, &end, &n); err != nil {
			continue // not a trace line
		}
		select {
		case f.events <- fleetEvent{worker: i, kind: kind, start: time.Unix(0, start), end: time.Unix(0, end), n: n}:
		case <-f.done:
		}
	}
}

// take records one event.
func (f *fleet) take(e fleetEvent) {
	switch e.kind {
	case "waiting":
		f.waiting[e.worker] = true
	case "wait":
		f.waiting[e.worker] = false
	}
	f.seen = append(f.seen, e)
}

// drain records the events already read, waiting up to d for the first.
func (f *fleet) drain(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case e := <-f.events:
		f.take(e)
	case <-t.C:
		return
	}
	for {
		select {
		case e := <-f.events:
			f.take(e)
		default:
			return
		}
	}
}

// blockedNow counts, per worker, its connections blocked on the masters.
func (f *fleet) blockedNow(ctx context.Context) []int {
	out := make([]int, len(f.names))
	for _, m := range f.masters {
		list, err := m.ClientList(ctx).Result()
		require.NoError(f.b, err)
		for _, line := range strings.Split(list, "\n") {
			var name, flags string
			for _, field := range strings.Fields(line) {
				if v, ok := strings.CutPrefix(field, "name="); ok {
					name = v
				} else if v, ok := strings.CutPrefix(field, "flags="); ok {
					flags = v
				}
			}
			for i, n := range f.names {
				if name == n && strings.Contains(flags, "b") {
					out[i]++
				}
			}
		}
	}
	return out
}

// waitRan waits until a worker reports that it ran a task since t0 and
// then finished it, so the iteration's lines are read.
func (f *fleet) waitRan(t0 time.Time) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		runner, ran := -1, time.Time{}
		for _, e := range f.seen {
			switch {
			case e.kind == "run" && !e.start.Before(t0):
				runner, ran = e.worker, e.start
			case e.kind == "finish" && e.worker == runner && !e.start.Before(ran):
				return
			}
		}
		f.drain(50 * time.Millisecond)
	}
	f.b.Fatal("no worker ran the task")
}

func (f *fleet) bothWaiting() bool { return f.waiting[0] && f.waiting[1] }

// learnIdle waits until both workers are in ReadyWait and the number of
// their blocked connections has held still for 200 ms, and keeps that
// number as what idle looks like.
func (f *fleet) learnIdle(ctx context.Context) {
	deadline := time.Now().Add(time.Minute)
	var last []int
	since := time.Now()
	for time.Now().Before(deadline) {
		f.drain(time.Millisecond)
		if !f.bothWaiting() {
			last = nil
			continue
		}
		now := f.blockedNow(ctx)
		if last == nil || now[0] != last[0] || now[1] != last[1] || now[0] == 0 || now[1] == 0 {
			last, since = now, time.Now()
			continue
		}
		if time.Since(since) >= 200*time.Millisecond {
			f.blocked = last
			f.b.Logf("idle worker: %d blocked connections", last[0])
			return
		}
	}
	f.b.Fatal("the fleet did not go idle")
}

// waitIdle waits until both workers are in ReadyWait and, unless f.blocked
// is nil, every blocking connection of theirs is blocked. The servers are
// other processes: there is no event to wait on but the workers' own
// lines, so CLIENT LIST is read again until it agrees.
func (f *fleet) waitIdle(ctx context.Context) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		f.drain(0)
		if !f.bothWaiting() {
			f.drain(50 * time.Millisecond)
			continue
		}
		if f.blocked == nil {
			return
		}
		now := f.blockedNow(ctx)
		if now[0] >= f.blocked[0] && now[1] >= f.blocked[1] {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
	f.b.Fatal("the fleet did not go idle again")
}

// reportQuantiles reports the p50, p90, p99 and max of lat in ms.
func reportQuantiles(b *testing.B, lat []time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.9), "p90-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(q(1), "max-ms")
}
