package plait_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/faultproxy"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// fleet is a few scheduler processes, each with a client and store of its
// own reaching one redis-server through one fault proxy, and a store
// reaching the server straight, for submitting and inspecting.
type fleet struct {
	proxy   *faultproxy.Proxy
	direct  store.Store
	workers []*worker
	// calls counts the handler calls per "<run> <task>".
	mu    sync.Mutex
	calls map[string]int
}

// newFleet starts nothing yet: it builds n workers under a fresh prefix,
// each running handler "step", which works for work and returns its name.
func newFleet(t *testing.T, n int, work time.Duration, opts ...plait.Option) *fleet {
	t.Helper()
	srv, err := sharedRedis()
	if err != nil {
		redistest.Skip(t, err)
	}
	proxy, err := faultproxy.Start(srv.Addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	prefix := redisstore.WithPrefix("lat" + strconv.FormatInt(prefixSeq.Add(1), 10))
	f := &fleet{proxy: proxy, calls: map[string]int{}}
	f.direct = newRedisStoreAt(t, srv.Addr, prefix)
	for i := 0; i < n; i++ {
		st := newRedisStoreAt(t, proxy.Addr(), prefix)
		w := newWorker(t, st, "node"+strconv.Itoa(i), opts...)
		require.NoError(t, w.s.Handle("step", func(ctx context.Context, task *plait.Task) (any, error) {
			f.mu.Lock()
			f.calls[task.RunID+" "+task.Name]++
			f.mu.Unlock()
			// The handler's work: a duration, not a wait for a condition.
			tm := time.NewTimer(work)
			defer tm.Stop()
			select {
			case <-tm.C:
				return task.Name, nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}))
		f.workers = append(f.workers, w)
	}
	return f
}

// newRedisStoreAt is a store of its own client on addr.
func newRedisStoreAt(t *testing.T, addr string, opts ...redisstore.Option) store.Store {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = c.Close() })
	st, err := redisstore.New(context.Background(), c, opts...)
	require.NoError(t, err)
	return st
}

func (f *fleet) start(t *testing.T) {
	for _, w := range f.workers {
		w.start(t)
	}
}

// submitChains submits runs chains of two steps, a then b, straight to
// Redis, and returns their ids.
func (f *fleet) submitChains(t *testing.T, runs int) []string {
	t.Helper()
	s, err := plait.New(f.direct, plait.WithRemoteHandlers())
	require.NoError(t, err)
	subs := make([]plait.Submission, runs)
	for i := range subs {
		subs[i] = plait.Submission{Workflow: plait.NewWorkflow("chain").
			Task("a", "step", nil, plait.Retry(0)).
			Task("b", "step", nil, plait.After("a"), plait.Retry(0))}
	}
	out, err := s.SubmitMany(context.Background(), subs)
	require.NoError(t, err)
	ids := make([]string, len(out))
	for i, r := range out {
		ids[i] = r.ID
	}
	return ids
}

// drain waits for every run and answers the tasks per second from begin.
func (f *fleet) drain(t *testing.T, ids []string, tasks int, begin time.Time) float64 {
	t.Helper()
	for _, id := range ids {
		waitRun(t, f.direct, id)
	}
	return float64(tasks) / time.Since(begin).Seconds()
}

// audit checks that every run completed, each task ran once, in one
// attempt that succeeded, and no lease was lost.
func (f *fleet) audit(t *testing.T, ids []string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range ids {
		run := waitRun(t, f.direct, id)
		require.Equal(t, plait.RunCompleted, run.Status, "run %s", id)
		for _, ti := range run.Tasks {
			require.Equal(t, 1, f.calls[id+" "+ti.Name], "run %s task %s runs once", id, ti.Name)
			require.Zero(t, ti.Crashes, "run %s task %s loses no lease", id, ti.Name)
			require.Len(t, ti.Attempts, 1, "run %s task %s has one attempt", id, ti.Name)
			require.Equal(t, "succeeded", ti.Attempts[0].Outcome, "run %s task %s", id, ti.Name)
		}
	}
	for _, w := range f.workers {
		require.Zero(t, w.events.count(is(plait.EventTaskLeaseLost, "")), "no lease is lost")
	}
}

// TestLatencySlowsTheFleetWithoutLosingALease runs a fleet of two
// schedulers through a proxy that holds back every request and every
// reply 25 to 100 ms, so each call takes 50 to 200 ms more, with handlers
// that work 1.2 s of a 2 s lease for some tasks: the lease keeper's
// extensions, slowed too, must keep every lease. The same fleet drains a
// workload first without latency, then with it: throughput drops, but
// stays above the floor its concurrency allows (each task needs a few
// calls at 200 ms at worst); no attempt crashes, every task runs once.
//
// It fails if the lease keeper extends too late for a slow network (say,
// at the lease's last sixth instead of every third: an extension then
// lands after the deadline and the sweep requeues the task), or if a slow
// reply makes the engine give a task up (a crash, a second call).
func TestLatencySlowsTheFleetWithoutLosingALease(t *testing.T) {
	t.Parallel()
	const (
		nodes, concurrency = 2, 4
		runs               = 24 // two tasks each
		work               = 50 * time.Millisecond
		lease              = 2 * time.Second
		slowWork           = 1200 * time.Millisecond
		least, most        = 25 * time.Millisecond, 100 * time.Millisecond
	)
	f := newFleet(t, nodes, work, plait.WithLeaseDuration(lease), plait.WithConcurrency(concurrency),
		plait.WithSweepInterval(100*time.Millisecond), plait.WithIdleWait(50*time.Millisecond))
	// Handlers that hold a task for most of its lease, so its lease must
	// be extended through the slow network.
	for _, w := range f.workers {
		require.NoError(t, w.s.Handle("slow", func(ctx context.Context, task *plait.Task) (any, error) {
			f.mu.Lock()
			f.calls[task.RunID+" "+task.Name]++
			f.mu.Unlock()
			tm := time.NewTimer(slowWork)
			defer tm.Stop()
			select {
			case <-tm.C:
				return "slow", nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}))
	}
	f.start(t)

	begin := time.Now()
	fast := f.submitChains(t, runs)
	fastRate := f.drain(t, fast, 2*runs, begin)

	f.proxy.Delay(least, most, 34)
	s, err := plait.New(f.direct, plait.WithRemoteHandlers())
	require.NoError(t, err)
	var held []string
	for i := 0; i < nodes; i++ {
		r, err := s.Submit(context.Background(), plait.NewWorkflow("held").Task("x", "slow", nil, plait.Retry(0)))
		require.NoError(t, err)
		held = append(held, r.ID)
	}
	begin = time.Now()
	slow := f.submitChains(t, runs)
	slowRate := f.drain(t, slow, 2*runs, begin)
	for _, id := range held {
		waitRun(t, f.direct, id)
	}

	// A task needs at worst a claim, a finish and an extension, each a
	// round trip of up to 2*most, plus its work; the fleet runs
	// nodes*concurrency at once, less the slots the held tasks take.
	floor := float64(nodes*concurrency-len(held)) / (work + 3*2*most).Seconds()
	t.Logf("FIGURE latency: %d nodes x %d slots, %d tasks of %s, calls held back %s-%s each way: %.0f tasks/s without latency, %.0f tasks/s with it (floor %.0f); leases lost 0 of %d tasks held %s of a %s lease",
		nodes, concurrency, 2*runs, work, least, most, fastRate, slowRate, floor, len(held), slowWork, lease)
	require.Less(t, slowRate, fastRate, "latency slows the fleet")
	require.Greater(t, slowRate, floor, "latency must not collapse throughput")
	f.audit(t, append(append(fast, slow...), held...))
}
