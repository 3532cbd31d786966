package inspector

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// Environment of TestMeasure: MeasureEnv=1 runs it, MeasureRunsEnv sets
// how many runs the runs page is measured over (1,000,000 by default).
const (
	MeasureEnv     = "PLAIT_INSPECTOR_MEASURE"
	MeasureRunsEnv = "PLAIT_INSPECTOR_RUNS"
)

// roundTrips counts the client's round trips to Redis (a pipeline is one).
type roundTrips struct{ n atomic.Int64 }

func (c *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.n.Add(1); return next(ctx, cmd) }
}
func (c *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.n.Add(1); return next(ctx, cmds) }
}

// commandCalls answers the commands the server ran, by INFO commandstats
// (the commands scripts run included), less the INFO calls themselves.
func commandCalls(t *testing.T, admin *redis.Client) int64 {
	t.Helper()
	info, err := admin.Info(context.Background(), "commandstats").Result()
	must(t, err)
	var n int64
	for line := range strings.SplitSeq(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok || name == "cmdstat_info" {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		v, err := strconv.ParseInt(calls, 10, 64)
		must(t, err)
		n += v
	}
	return n
}

// measured is one request as measured.
type measured struct {
	what                 string
	status, bytes, wire  int
	median, max          time.Duration
	commands, roundTrips int64
}

// rawSize answers the size of an answer before its content encoding.
func rawSize(t *testing.T, rec *httptest.ResponseRecorder) int {
	if rec.Header().Get("Content-Encoding") != "gzip" {
		return rec.Body.Len()
	}
	zr, err := gzip.NewReader(bytes.NewReader(rec.Body.Bytes()))
	must(t, err)
	n, err := io.Copy(io.Discard, zr)
	must(t, err)
	return int(n)
}

// measure serves GET target, as a browser asks it (gzip accepted), five
// times after one warm-up call, and answers the median and slowest server
// time (compression included), the answer's size before and after
// compression, and the Redis commands and round trips of one call (the
// first timed one).
func measure(t *testing.T, h *handler, admin *redis.Client, rt *roundTrips, what, target string) measured {
	t.Helper()
	do(h, "GET", target, nil, "Accept-Encoding", "gzip")
	m := measured{what: what}
	var times []time.Duration
	for i := range 5 {
		before, trips := commandCalls(t, admin), rt.n.Load()
		start := time.Now()
		rec := do(h, "GET", target, nil, "Accept-Encoding", "gzip")
		times = append(times, time.Since(start))
		if i == 0 {
			m.commands, m.roundTrips = commandCalls(t, admin)-before, rt.n.Load()-trips
			m.status, m.bytes, m.wire = rec.Code, rawSize(t, rec), rec.Body.Len()
		}
	}
	slices.Sort(times)
	m.median, m.max = times[len(times)/2], times[len(times)-1]
	return m
}

func report(t *testing.T, title string, ms []measured) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n| request | status | bytes | sent (gzip) | median | max | Redis commands | round trips |\n|---|---|---|---|---|---|---|---|\n", title)
	for _, m := range ms {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %s | %d | %d |\n", m.what, m.status, m.bytes, m.wire,
			m.median.Round(10*time.Microsecond), m.max.Round(10*time.Microsecond), m.commands, m.roundTrips)
	}
	t.Log(b.String())
}

// measureStore starts a redis-server and answers a store on it, a handler
// over it, an admin client for INFO and the round-trip counter.
func measureStore(t *testing.T) (store.Store, *handler, *redis.Client, *roundTrips) {
	srv, err := redistest.Start()
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { srv.Close() })
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 8})
	rt := &roundTrips{}
	client.AddHook(rt)
	admin := srv.Client()
	t.Cleanup(func() { client.Close(); admin.Close() })
	st, err := redisstore.New(context.Background(), client)
	must(t, err)
	s, err := plait.New(st, plait.WithLogger(quiet()), plait.WithRunCountCache(0, 1))
	must(t, err)
	return st, newHandler(t, s), admin, rt
}

// TestMeasure measures, on a real redis-server, the run page of 10,000-task
// runs and the runs page over a million runs: answer sizes, server time,
// Redis commands and round trips per request. It is a measurement, not a
// check: run it with PLAIT_INSPECTOR_MEASURE=1 and read its log.
//
//	PLAIT_INSPECTOR_MEASURE=1 go test -run TestMeasure -v -timeout 30m ./inspector
func TestMeasure(t *testing.T) {
	if os.Getenv(MeasureEnv) != "1" {
		t.Skipf("a measurement: set %s=1 to run it", MeasureEnv)
	}
	st, h, admin, rt := measureStore(t)
	ctx := context.Background()

	var ms []measured
	for _, shape := range bigRuns() {
		outs, err := st.RunCreateMany(ctx, []*store.RunCreateParams{{Workflow: shape.spec}})
		must(t, err)
		must(t, outs[0].Err)
		id := outs[0].Result.Run.ID
		p := "/api/v1/runs/" + id
		ms = append(ms,
			measure(t, h, admin, rt, shape.name+": page", "/runs/"+id),
			measure(t, h, admin, rt, shape.name+": run JSON", p),
			measure(t, h, admin, rt, shape.name+": dag.svg", p+"/dag.svg"),
			measure(t, h, admin, rt, shape.name+": task JSON", p+"/tasks/"+shape.spec.Tasks[1].Name))
	}
	report(t, "Run page of 10,000-task runs (Redis)", ms)

	want := 1_000_000
	if v := os.Getenv(MeasureRunsEnv); v != "" {
		n, err := strconv.Atoi(v)
		must(t, err)
		want = n
	}
	start := time.Now()
	created := fillRuns(t, st, want, 10*time.Minute)
	t.Logf("created %d runs in %s; Redis used %s", created, time.Since(start).Round(time.Second), usedMemory(t, admin))

	ms = ms[:0]
	var page struct{ NextCursor string }
	first := measure(t, h, admin, rt, "runs, no filter, 50", "/api/v1/runs")
	rec := do(h, "GET", "/api/v1/runs", nil)
	decode(t, rec, &page)
	ms = append(ms, first,
		measure(t, h, admin, rt, "runs, next page", "/api/v1/runs?cursor="+page.NextCursor),
		measure(t, h, admin, rt, "runs, status=pending", "/api/v1/runs?status=pending"),
		measure(t, h, admin, rt, "runs, service and tenant", "/api/v1/runs?service=svc7&tenant=t3"),
		measure(t, h, admin, rt, "runs, workflow and tenant", "/api/v1/runs?workflow=report&tenant=t3"),
		measure(t, h, admin, rt, "runs, error prefix (no match)", "/api/v1/runs?error=nothing"),
		measure(t, h, admin, rt, "count, no filter", "/api/v1/runs/count"),
		measure(t, h, admin, rt, "count, status=pending", "/api/v1/runs/count?status=pending"),
		measure(t, h, admin, rt, "count, workflow and tenant", "/api/v1/runs/count?workflow=report&tenant=t3"),
		measure(t, h, admin, rt, "overview", "/api/v1/overview"),
		measure(t, h, admin, rt, "config", "/api/v1/config"),
	)
	report(t, fmt.Sprintf("Runs page over %d runs (Redis)", created), ms)
}

// bigRun is a 10,000-task workflow of one shape.
type bigRun struct {
	name string
	spec *plait.WorkflowSpec
}

// bigRuns answers three shapes of about 10,000 tasks: a fan-out between a
// root and a join (grouped into one box), 100 parallel pipelines of 98
// steps (grouped stage by stage, the chain's middle folded), and a mesh of
// 100 layers of 100 tasks, task j after tasks j and j+1 of the layer
// above (each layer one group, since every member's parents and children
// fall in the groups of the layers around it).
func bigRuns() []bigRun {
	task := func(name string, deps ...string) plait.TaskSpec {
		ts := plait.TaskSpec{Name: name, Handler: "noop", Payload: []byte(`{"n":1}`)}
		for _, d := range deps {
			ts.Deps = append(ts.Deps, store.Dep{Task: d, On: store.OnSuccess})
		}
		return ts
	}
	fan := &plait.WorkflowSpec{Name: "fanout", Tasks: []plait.TaskSpec{task("root")}}
	var mids []string
	for i := range 9998 {
		n := "item-" + strconv.Itoa(i)
		mids = append(mids, n)
		fan.Tasks = append(fan.Tasks, task(n, "root"))
	}
	fan.Tasks = append(fan.Tasks, task("join", mids...))

	pipes := &plait.WorkflowSpec{Name: "pipelines", Tasks: []plait.TaskSpec{task("root")}}
	var ends []string
	for p := range 100 {
		prev := "root"
		for s := range 98 {
			n := "p" + strconv.Itoa(p) + "-s" + strconv.Itoa(s)
			pipes.Tasks = append(pipes.Tasks, task(n, prev))
			prev = n
		}
		ends = append(ends, prev)
	}
	pipes.Tasks = append(pipes.Tasks, task("end", ends...))

	mesh := &plait.WorkflowSpec{Name: "mesh"}
	for l := range 100 {
		for j := range 100 {
			n := "l" + strconv.Itoa(l) + "-" + strconv.Itoa(j)
			if l == 0 {
				mesh.Tasks = append(mesh.Tasks, task(n))
				continue
			}
			up := "l" + strconv.Itoa(l-1) + "-"
			deps := []string{up + strconv.Itoa(j)}
			if j+1 < 100 {
				deps = append(deps, up+strconv.Itoa(j+1))
			}
			mesh.Tasks = append(mesh.Tasks, task(n, deps...))
		}
	}
	return []bigRun{{"fan-out 10,000", fan}, {"pipelines 9,802", pipes}, {"mesh 10,000", mesh}}
}

// fillRuns creates up to want one-task runs (two workflows, 100 services,
// 10 tenants) in batches of 1000 from two writers, for at most budget, and
// answers how many it created.
func fillRuns(t *testing.T, st store.Store, want int, budget time.Duration) int {
	ctx := context.Background()
	deadline := time.Now().Add(budget)
	specs := []*plait.WorkflowSpec{
		{Name: "report", Tasks: []plait.TaskSpec{{Name: "t", Handler: "noop", Payload: make([]byte, 100)}}},
		{Name: "etl", Tasks: []plait.TaskSpec{{Name: "t", Handler: "noop", Payload: make([]byte, 100)}}},
	}
	const batch = 1000
	var next, created atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				i := int(next.Add(batch)) - batch
				if i >= want {
					return
				}
				params := make([]*store.RunCreateParams, min(batch, want-i))
				for j := range params {
					n := i + j
					params[j] = &store.RunCreateParams{Workflow: specs[n%2], Service: "svc" + strconv.Itoa(n%100), Tenant: "t" + strconv.Itoa(n/100%10)}
				}
				outs, err := st.RunCreateMany(ctx, params)
				if err != nil {
					errs <- err
					return
				}
				for _, o := range outs {
					if o.Err != nil {
						errs <- o.Err
						return
					}
				}
				created.Add(int64(len(params)))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return int(created.Load())
}

func usedMemory(t *testing.T, admin *redis.Client) string {
	info, err := admin.Info(context.Background(), "memory").Result()
	must(t, err)
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory_human:"); ok {
			return v
		}
	}
	return "?"
}
