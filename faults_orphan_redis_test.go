package plait_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// auditCalls adds the task search to callCounter, counted the same way,
// so the janitor's lease audit runs.
type auditCalls struct {
	*callCounter
	ts store.TaskSearchStore
}

func (a auditCalls) TaskSearch(ctx context.Context, p *store.TaskSearchParams) (*store.TaskSearchResult, error) {
	a.enter()
	defer a.leave()
	return a.ts.TaskSearch(ctx, p)
}

// TestOrphanedLeaseIsRequeued deletes the lease entry of a running task
// whose holder never comes back (a worker that claimed it through the
// store and then vanished: no extension, no finish), so no sweep can find
// it. On the fake clock that drives the store and the scheduler, the
// janitor's lease audit finds the running task without an entry and
// attaches a lease again; the sweep requeues the task once that lease has
// run out, and a live worker runs it. The figure is the fake time from the
// deletion to the requeue, against the bound: janitor interval + lease +
// sweep interval.
//
// It fails without the audit (the task stays running: the sweep reads
// lease entries only), or if the audit re-attached the lease for longer
// than the lease duration (the bound is missed).
func TestOrphanedLeaseIsRequeued(t *testing.T) {
	t.Parallel()
	const (
		lease   = 9 * time.Second // keeper every 3 s
		sweep   = 2 * time.Second
		janitor = 5 * time.Second
		step    = 250 * time.Millisecond
		bound   = janitor + lease + sweep
	)
	srv, err := sharedRedis()
	if err != nil {
		redistest.Skip(t, err)
	}
	ctx := context.Background()
	clk := fakeclock.New(epoch)
	prefix := "orph" + strconv.FormatInt(prefixSeq.Add(1), 10)
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = raw.Close() })
	rs, err := redisstore.New(ctx, raw, redisstore.WithPrefix(prefix), redisstore.WithClock(clk),
		redisstore.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)

	calls := &callCounter{Store: rs}
	rec := &recorder{}
	s, err := plait.New(auditCalls{callCounter: calls, ts: rs},
		plait.WithClock(clk), plait.WithObserver(rec.add), plait.WithWorkerID("live"),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		plait.WithLeaseDuration(lease), plait.WithSweepInterval(sweep), plait.WithJanitorInterval(janitor))
	require.NoError(t, err)
	ran := make(chan time.Time, 1)
	require.NoError(t, s.Handle("work", func(ctx context.Context, task *plait.Task) (any, error) {
		ran <- clk.Now()
		return "live", nil
	}))
	run, err := s.Submit(ctx, plait.NewWorkflow("orphan").Task("x", "work", nil, plait.Retry(0)))
	require.NoError(t, err)

	// The holder claims, then vanishes; its lease entry is deleted.
	claimed, err := rs.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "gone", Limit: 1, LeaseDuration: lease})
	require.NoError(t, err)
	require.Len(t, claimed.Tasks, 1)
	entry := run.ID + " x"
	require.Equal(t, int64(1), raw.ZRem(ctx, prefix+":{0}:active", entry).Val(), "the lease entry is deleted")
	deleted := clk.Now()

	b := &bundle{clock: clk, store: rs, s: s, events: rec, calls: calls}
	b.start(t)
	// The clock moves a step at a time once the process's services
	// (sweep, janitor, lease keeper, idle worker) have all armed their
	// timers and no store call is in flight, so none of them is skipped
	// past its turn; it stops once the handler runs.
	var ranAt time.Time
	halt := make(chan struct{})
	var once sync.Once
	go func() { ranAt = <-ran; once.Do(func() { close(halt) }) }()
	tm := time.AfterFunc(failAfter, func() { once.Do(func() { close(halt) }) })
	defer tm.Stop()
	const services = 3
	for clk.WaitForTimers(services, halt) {
		require.Less(t, clk.Now().Sub(deleted), 3*bound, "the orphaned task was never requeued: %s", rec)
		calls.waitIdle(t)
		clk.Advance(step)
	}
	require.False(t, ranAt.IsZero(), "the services stopped arming timers: %s", rec)
	requeued := rec.waitFor(t, 1, func(e plait.Event) bool { return e.Type == plait.EventLeasesSwept && e.Count > 0 }).At
	final := b.wait(t, run.ID)
	took := requeued.Sub(deleted)
	t.Logf("FIGURE orphaned lease: lease entry deleted under a running task whose holder is gone: requeued %s later on the fake clock, run %s later (bound: janitor %s + lease %s + sweep %s = %s)",
		took, ranAt.Sub(deleted), janitor, lease, sweep, bound)
	require.Equal(t, plait.RunCompleted, final.Status)
	require.Equal(t, 1, final.Task("x").Crashes, "the lost holder is charged one crash")
	require.Equal(t, `"live"`, string(final.Task("x").Result))
	require.LessOrEqual(t, took, bound+step, "requeued within the bound")
}
