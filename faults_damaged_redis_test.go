package plait_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// logCapture keeps the records a scheduler logs.
type logCapture struct {
	mu   sync.Mutex
	recs []string
	wake chan struct{}
}

// waitFor waits for a record that contains every one of parts.
func (l *logCapture) waitFor(t *testing.T, parts ...string) string {
	t.Helper()
	deadline := time.After(failAfter)
	for {
		l.mu.Lock()
		for _, r := range l.recs {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(r, p)
			}
			if all {
				l.mu.Unlock()
				return r
			}
		}
		if l.wake == nil {
			l.wake = make(chan struct{})
		}
		ch := l.wake
		l.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no log record with %q", parts)
		}
	}
}

func (l *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCapture) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + r.Message)
	r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.Key + "=" + a.Value.String()); return true })
	l.mu.Lock()
	l.recs = append(l.recs, b.String())
	if l.wake != nil {
		close(l.wake)
		l.wake = nil
	}
	l.mu.Unlock()
	return nil
}
func (l *logCapture) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCapture) WithGroup(string) slog.Handler      { return l }

// claimCounter counts, per "<run> <task>", the claims that handed a task
// to the worker.
type claimCounter struct {
	store.Store
	mu     sync.Mutex
	claims map[string]int
	calls  int
}

func (c *claimCounter) TaskClaim(ctx context.Context, p *store.TaskClaimParams) (*store.TaskClaimResult, error) {
	res, err := c.Store.TaskClaim(ctx, p)
	c.count(res, err)
	return res, err
}

func (c *claimCounter) TaskFinishClaim(ctx context.Context, p *store.TaskFinishClaimParams) (*store.TaskFinishClaimResult, error) {
	res, err := c.Store.TaskFinishClaim(ctx, p)
	if res != nil && res.Claimed != nil {
		c.count(res.Claimed, err)
	}
	return res, err
}

func (c *claimCounter) count(res *store.TaskClaimResult, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if err != nil || res == nil {
		return
	}
	for _, ct := range res.Tasks {
		c.claims[ct.Lease.RunID+" "+ct.Lease.Task]++
	}
}

// TestDamagedRecords damages records by hand in Redis, without reading
// their format: garbage over a run's meta field m, garbage over a task's
// state field s:<task>, a task's definition d:<task> deleted, a run hash
// deleted under its queue entry, and garbage over the state of a task
// while it runs. Each damaged run is named by a typed error
// (redisstore.ErrCorrupt, or store.ErrNotFound for the run that is gone),
// is set aside (its entry dropped from the queue or the lease zset, its
// record left as it is), and is never handed to a handler again: the
// worker keeps claiming and completing every other run, each once.
//
// It fails if a claim or a sweep that meets a damaged record aborted the
// whole call (the other runs would stall behind it) or put the entry back
// (the damaged task would be claimed again and again: a crash loop).
func TestDamagedRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, err := sharedRedis()
	if err != nil {
		redistest.Skip(t, err)
	}
	prefix := "dmg" + strconv.FormatInt(prefixSeq.Add(1), 10)
	logs := &logCapture{}
	st := newRedisStoreAt(t, srv.Addr, redisstore.WithPrefix(prefix), redisstore.WithLogger(slog.New(logs)))
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = raw.Close() })
	runKey := func(id string) string { return prefix + ":{0}:r:" + id } // one shard: {0} (docs/redis-schema.md)

	submitter, err := plait.New(st, plait.WithRemoteHandlers())
	require.NoError(t, err)
	submit := func(wf *plait.Workflow) string {
		r, err := submitter.Submit(ctx, wf)
		require.NoError(t, err)
		return r.ID
	}
	var healthy []string
	for i := 0; i < 10; i++ {
		healthy = append(healthy, submit(plait.NewWorkflow("ok").Task("a", "step", nil).Task("b", "step", nil, plait.After("a"))))
	}
	garbage := "\xff\x00garbage\x01"
	victims := map[string]string{}
	damage := func(what string, fn func(id string)) {
		id := submit(plait.NewWorkflow("victim").Task("x", "step", nil))
		fn(id)
		victims[id] = what
	}
	damage("garbage over m", func(id string) { require.NoError(t, raw.HSet(ctx, runKey(id), "m", garbage).Err()) })
	damage("garbage over s:x", func(id string) { require.NoError(t, raw.HSet(ctx, runKey(id), "s:x", garbage).Err()) })
	damage("d:x deleted", func(id string) { require.NoError(t, raw.HDel(ctx, runKey(id), "d:x").Err()) })
	damage("run hash deleted", func(id string) { require.NoError(t, raw.Del(ctx, runKey(id)).Err()) })
	for i := 0; i < 10; i++ {
		healthy = append(healthy, submit(plait.NewWorkflow("ok").Task("a", "step", nil).Task("b", "step", nil, plait.After("a"))))
	}
	running := submit(plait.NewWorkflow("victim").Task("hold", "hold", nil))
	victims[running] = "garbage over s:hold while it runs"

	counted := &claimCounter{Store: st, claims: map[string]int{}}
	var mu sync.Mutex
	calls := map[string]int{}
	entered, release := make(chan struct{}, 1), make(chan struct{})
	w := newWorker(t, counted, "w", plait.WithLogger(slog.New(logs)), plait.WithLeaseDuration(time.Second),
		plait.WithSweepInterval(50*time.Millisecond), plait.WithIdleWait(20*time.Millisecond), plait.WithConcurrency(4))
	require.NoError(t, w.s.Handle("step", func(ctx context.Context, task *plait.Task) (any, error) {
		mu.Lock()
		calls[task.RunID+" "+task.Name]++
		mu.Unlock()
		return task.Name, nil
	}))
	require.NoError(t, w.s.Handle("hold", func(ctx context.Context, task *plait.Task) (any, error) {
		mu.Lock()
		calls[task.RunID+" "+task.Name]++
		mu.Unlock()
		entered <- struct{}{}
		<-release
		return "held", nil
	}))
	w.start(t)
	recv(t, entered)
	require.NoError(t, raw.HSet(ctx, runKey(running), "s:hold", garbage).Err())
	close(release)

	// The attempt under way is refused at its finish, naming the run, and
	// its lease entry is dropped by the sweep once the lease has run out.
	logs.waitFor(t, "outcome refused", running)
	logs.waitFor(t, "unreadable record in sweep", running)

	mu.Lock()
	defer mu.Unlock()
	for _, id := range healthy {
		run := waitRun(t, st, id)
		require.Equal(t, plait.RunCompleted, run.Status, "run %s", id)
		for _, ti := range run.Tasks {
			require.Equal(t, 1, calls[id+" "+ti.Name], "run %s task %s runs once", id, ti.Name)
		}
	}
	counted.mu.Lock()
	defer counted.mu.Unlock()
	var left []string
	for p := 0; p <= 3; p++ {
		q, err := raw.LRange(ctx, prefix+":{0}:q:default:"+strconv.Itoa(p), 0, -1).Result()
		require.NoError(t, err)
		left = append(left, q...)
	}
	leases, err := raw.ZRangeByScore(ctx, prefix+":{0}:active", &redis.ZRangeBy{Min: "-inf", Max: "(+inf"}).Result()
	require.NoError(t, err)
	left = append(left, leases...)
	damagedClaims := 0
	for id, what := range victims {
		_, err := st.RunGet(ctx, &store.RunGetParams{ID: id})
		require.Error(t, err, "%s: the damaged run is reported", what)
		require.Contains(t, err.Error(), id, "%s: the error names the run", what)
		if what == "run hash deleted" {
			require.ErrorIs(t, err, store.ErrNotFound, what)
		} else {
			require.ErrorIs(t, err, redisstore.ErrCorrupt, what)
		}
		for _, e := range left {
			require.False(t, strings.HasPrefix(e, id+" "), "%s: the damaged entry is set aside, not requeued: %q", what, e)
		}
		task := "x"
		if id == running {
			task = "hold"
		}
		want := 0
		if id == running {
			want = 1 // claimed before the damage, never again
		}
		require.Equal(t, want, counted.claims[id+" "+task], "%s: claims of the damaged entry", what)
		require.Equal(t, want, calls[id+" "+task], "%s: handler calls", what)
		damagedClaims += counted.claims[id+" "+task]
	}
	t.Logf("FIGURE damaged record: %d runs damaged (m garbage, s:<task> garbage, d:<task> missing, run hash gone, s:<task> garbage while running): each named by a typed error, set aside; claims of the damaged entries after the damage 0 (%d before it) over %d claim calls; %d other runs completed once each",
		len(victims), damagedClaims, counted.calls, len(healthy))
}
