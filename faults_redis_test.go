package plait_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
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

// These tests put a fault proxy between a scheduler and a real
// redis-server and break the network under it. They run on real time, with
// short leases; every wait is on an event, and times are measured on the
// monotonic clock.

// netFault is one test's store seen two ways: through the fault proxy, for
// the scheduler under test, and straight, for submitting, inspecting and
// for healthy processes.
type netFault struct {
	proxy   *faultproxy.Proxy
	through store.Store
	direct  store.Store
	// refusing makes every new connection through the proxy fail at once;
	// with proxy.Cut it takes Redis away until it is cleared.
	refusing atomic.Bool
}

// newNetFault builds the stores on a shared redis-server under a fresh
// prefix. tune adjusts the client options of the proxied store; nil keeps
// go-redis's defaults, as a deployment would.
func newNetFault(t *testing.T, tune func(*netFault, *redis.Options)) *netFault {
	t.Helper()
	srv, err := sharedRedis()
	if err != nil {
		redistest.Skip(t, err)
	}
	proxy, err := faultproxy.Start(srv.Addr)
	require.NoError(t, err)
	nf := &netFault{proxy: proxy}
	opts := &redis.Options{Addr: proxy.Addr()}
	if tune != nil {
		tune(nf, opts)
	}
	client := redis.NewClient(opts)
	direct := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() {
		// The proxy first: it lets held bytes go and closes every link, so
		// client calls still waiting on them return.
		proxy.Resume()
		_ = proxy.Close()
		_ = client.Close()
		_ = direct.Close()
	})
	prefix := redisstore.WithPrefix("nf" + strconv.FormatInt(prefixSeq.Add(1), 10))
	nf.through, err = redisstore.New(context.Background(), client, prefix)
	require.NoError(t, err)
	nf.direct, err = redisstore.New(context.Background(), direct, prefix)
	require.NoError(t, err)
	return nf
}

// refusingDialer dials through the proxy unless the fault refuses: then the
// connection it returns fails at its first use, as a reset one does. (A
// dial error instead would trip go-redis's dial back-off, which recovers on
// its own schedule, not the network's.)
func (nf *netFault) refusingDialer(ctx context.Context, network, addr string) (net.Conn, error) {
	if nf.refusing.Load() {
		c, peer := net.Pipe()
		_ = peer.Close()
		return c, nil
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// down takes Redis away: open connections are cut, new ones fail.
func (nf *netFault) down() {
	nf.refusing.Store(true)
	nf.proxy.Cut()
}

func (nf *netFault) up() { nf.refusing.Store(false) }

// worker is one scheduler process of a test on real time.
type worker struct {
	s      *plait.Scheduler
	events *recorder
	cancel context.CancelFunc
	done   chan error
}

func newWorker(t *testing.T, store store.Store, id string, opts ...plait.Option) *worker {
	t.Helper()
	w := &worker{events: &recorder{}, done: make(chan error, 1)}
	base := []plait.Option{
		plait.WithWorkerID(id),
		plait.WithObserver(w.events.add),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		plait.WithRemoteHandlers(),
	}
	s, err := plait.New(store, append(base, opts...)...)
	require.NoError(t, err)
	w.s = s
	return w
}

func (w *worker) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() { w.done <- w.s.Run(ctx) }()
	t.Cleanup(func() { w.stop(t) })
}

// stop ends Run and waits for it; it reports how long Run took to return.
func (w *worker) stop(t *testing.T) time.Duration {
	t.Helper()
	if w.cancel == nil {
		return 0
	}
	begin := time.Now()
	w.cancel()
	w.cancel = nil
	select {
	case err := <-w.done:
		require.NoError(t, err)
	case <-time.After(failAfter):
		t.Fatal("Run did not return after its context was cancelled")
	}
	return time.Since(begin)
}

func waitRun(t *testing.T, st store.Store, runID string) *plait.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	run, err := st.RunWait(ctx, &store.RunWaitParams{ID: runID})
	require.NoError(t, err, "run %s did not finish", runID)
	return run
}

func submitTo(t *testing.T, store store.Store, wf *plait.Workflow) *plait.Run {
	t.Helper()
	s, err := plait.New(store, plait.WithRemoteHandlers())
	require.NoError(t, err)
	run, err := s.Submit(context.Background(), wf)
	require.NoError(t, err)
	return run
}

// TestCutOffWorkerStopsItsHandlerBeforeTheLeaseCanExpire hangs the
// connection of a worker running a handler. Its lease extension hangs
// with it (go-redis, as configured by default, waits seconds for a reply),
// yet the handler must be cancelled with ErrLeaseLost before the lease can
// expire in Redis, so before a healthy worker takes the task over.
func TestCutOffWorkerStopsItsHandlerBeforeTheLeaseCanExpire(t *testing.T) {
	t.Parallel()
	const lease = 1200 * time.Millisecond
	nf := newNetFault(t, nil)
	run := submitTo(t, nf.direct, plait.NewWorkflow("cutoff").Task("x", "work", nil, plait.Retry(0)))

	type stopped struct {
		at    time.Time
		cause error
	}
	entered, halted := make(chan struct{}, 1), make(chan stopped, 1)
	cut := newWorker(t, nf.through, "cut", plait.WithLeaseDuration(lease), plait.WithSweepInterval(50*time.Millisecond))
	require.NoError(t, cut.s.Handle("work", func(ctx context.Context, task *plait.Task) (any, error) {
		entered <- struct{}{}
		<-ctx.Done()
		halted <- stopped{at: time.Now(), cause: context.Cause(ctx)}
		return nil, ctx.Err()
	}))
	cut.start(t)
	recv(t, entered)

	nf.proxy.Stall()
	stallAt := time.Now()
	tookOver := make(chan time.Time, 1)
	healthy := newWorker(t, nf.direct, "healthy", plait.WithLeaseDuration(lease), plait.WithSweepInterval(50*time.Millisecond))
	require.NoError(t, healthy.s.Handle("work", func(ctx context.Context, task *plait.Task) (any, error) {
		tookOver <- time.Now()
		return "healthy", nil
	}))
	healthy.start(t)

	h := recv(t, halted)
	took := recv(t, tookOver)
	t.Logf("stalled worker's handler cancelled %s after the stall; healthy worker took over %s after it",
		h.at.Sub(stallAt).Round(time.Millisecond), took.Sub(stallAt).Round(time.Millisecond))
	require.ErrorIs(t, h.cause, plait.ErrLeaseLost, "the cut-off handler must learn its lease is lost")
	require.Less(t, h.at.Sub(stallAt), lease, "the handler must stop within the lease of the last extension that got through")
	require.True(t, h.at.Before(took), "the cut-off handler must stop before another worker can take the task over")

	nf.proxy.Resume()
	final := waitRun(t, nf.direct, run.ID)
	require.Equal(t, plait.RunCompleted, final.Status)
	require.Equal(t, `"healthy"`, string(final.Task("x").Result))
	require.Equal(t, 1, final.Task("x").Crashes)
}

// TestShutdownReturnsInTimeWhileRedisHangs stops a worker whose Redis
// hangs, with a handler to release and an outcome still to write: Run must
// return within the shutdown timeout and the short window of its last
// writes, leaving what it could not write to the lease and the sweep.
func TestShutdownReturnsInTimeWhileRedisHangs(t *testing.T) {
	t.Parallel()
	const shutdown, lease = 200 * time.Millisecond, time.Second
	// The window the engine gives its last writes past the shutdown
	// timeout, and slack for a loaded machine.
	const writeWindow, slack = plait.ShutdownWriteWindow, 300 * time.Millisecond
	nf := newNetFault(t, nil)
	run := submitTo(t, nf.direct, plait.NewWorkflow("stop").
		Task("slow", "slow", nil).
		Task("quick", "quick", nil))

	entered, finish := make(chan struct{}, 2), make(chan struct{})
	w := newWorker(t, nf.through, "stopping", plait.WithShutdownTimeout(shutdown), plait.WithLeaseDuration(lease), plait.WithConcurrency(2))
	require.NoError(t, w.s.Handle("slow", func(ctx context.Context, task *plait.Task) (any, error) {
		entered <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	require.NoError(t, w.s.Handle("quick", func(ctx context.Context, task *plait.Task) (any, error) {
		entered <- struct{}{}
		<-finish
		return "quick", nil
	}))
	w.start(t)
	recv(t, entered)
	recv(t, entered)

	nf.proxy.Stall()
	close(finish) // its outcome now has to be written to a hanging Redis
	w.events.waitFor(t, 1, is(plait.EventTaskStarted, "quick"))
	took := w.stop(t)
	t.Logf("Run returned %s after its context was cancelled (shutdown timeout %s)", took.Round(time.Millisecond), shutdown)
	require.Less(t, took, shutdown+writeWindow+slack, "Run must return within the shutdown timeout plus a small bound")

	// What the stopped worker could not write comes back through the
	// lease and the sweep, or through its writes arriving late.
	nf.proxy.Resume()
	healthy := newWorker(t, nf.direct, "healthy", plait.WithLeaseDuration(lease), plait.WithSweepInterval(50*time.Millisecond))
	require.NoError(t, healthy.s.Handle("slow", func(ctx context.Context, task *plait.Task) (any, error) { return "slow", nil }))
	require.NoError(t, healthy.s.Handle("quick", func(ctx context.Context, task *plait.Task) (any, error) { return "quick", nil }))
	healthy.start(t)
	final := waitRun(t, nf.direct, run.ID)
	require.Equal(t, plait.RunCompleted, final.Status)
}

// failCounter counts the finish calls that failed.
type failCounter struct {
	store.Store
	failed atomic.Int32
}

func (c *failCounter) TaskFinishClaim(ctx context.Context, p *store.TaskFinishClaimParams) (*store.TaskFinishClaimResult, error) {
	res, err := c.Store.TaskFinishClaim(ctx, p)
	if err != nil {
		c.failed.Add(1)
	}
	return res, err
}

// TestFinishRidesOutAnOutageShorterThanTheLease takes Redis away while
// handlers return, for longer than three tries of a finish call take but
// well within the lease: once Redis is back every outcome is recorded,
// each task having run exactly once, and the run completes soon after.
func TestFinishRidesOutAnOutageShorterThanTheLease(t *testing.T) {
	t.Parallel()
	// Leases are extended every third of the lease and vouched for until a
	// sixth before their deadline, so any outage shorter than half the
	// lease leaves every lease vouched for.
	const lease, outage = 2 * time.Second, 700 * time.Millisecond
	nf := newNetFault(t, func(nf *netFault, o *redis.Options) {
		// One network try per call: the retries under test are the
		// scheduler's, not the client's.
		o.MaxRetries = -1
		o.Dialer = nf.refusingDialer
	})
	roots := []string{"t1", "t2", "t3", "t4"}
	wf := plait.NewWorkflow("outage")
	for _, r := range roots {
		wf.Task(r, "step", nil, plait.Retry(0))
	}
	wf.Task("z", "step", nil, plait.After(roots...), plait.Retry(0))
	run := submitTo(t, nf.direct, wf)

	var mu sync.Mutex
	calls := map[string]int{}
	entered, gate := make(chan struct{}, len(roots)), make(chan struct{})
	counted := &failCounter{Store: nf.through}
	w := newWorker(t, counted, "rider",
		plait.WithLeaseDuration(lease), plait.WithSweepInterval(100*time.Millisecond),
		plait.WithIdleWait(50*time.Millisecond), plait.WithConcurrency(8))
	require.NoError(t, w.s.Handle("step", func(ctx context.Context, task *plait.Task) (any, error) {
		mu.Lock()
		calls[task.Name]++
		mu.Unlock()
		if task.Name != "z" {
			entered <- struct{}{}
			<-gate
		}
		return task.Name, nil
	}))
	w.start(t)
	for range roots {
		recv(t, entered)
	}

	nf.down()
	close(gate) // the handlers return while Redis is away
	time.Sleep(outage)
	failed := counted.failed.Load()
	nf.up()
	recovered := time.Now()
	final := waitRun(t, nf.direct, run.ID)
	after := time.Since(recovered)
	t.Logf("finish calls failed %d times during a %s outage; the run completed %s after Redis came back", failed, outage, after.Round(time.Millisecond))
	require.Greater(t, failed, int32(3), "the outage must outlast three tries of a finish call")
	require.Equal(t, plait.RunCompleted, final.Status)
	require.Less(t, after, lease, "the run must complete soon after Redis is back, not after a lease and a sweep")
	mu.Lock()
	defer mu.Unlock()
	for _, ti := range final.Tasks {
		require.Equal(t, 1, calls[ti.Name], "task %s must run exactly once", ti.Name)
		require.Zero(t, ti.Crashes, "task %s must not lose its lease", ti.Name)
		require.Len(t, ti.Attempts, 1, "task %s must have one attempt", ti.Name)
		require.Equal(t, "succeeded", ti.Attempts[0].Outcome)
	}
	require.Zero(t, w.events.count(is(plait.EventTaskLeaseLost, "")))
}
