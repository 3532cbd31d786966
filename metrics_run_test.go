package plait_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store/memstore"
)

// runHooks is a hookLog that also takes the run hooks and the queue depth
// clear; hookLog alone stands for a Metrics written before them.
type runHooks struct{ *hookLog }

func (h runHooks) RunSubmitted(l plait.RunLabels, err error, d time.Duration) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	h.add("submitted %s/%s %s in %s", l.Workflow, l.Tenant, outcome, d)
}

func (h runHooks) RunEnded(l plait.RunLabels, st plait.RunStatus) {
	h.add("run ended %s/%s %s", l.Workflow, l.Tenant, st)
}

func (h runHooks) QueueDepthClear() { h.add("depth cleared") }

var (
	_ plait.RunMetrics        = runHooks{}
	_ plait.QueueDepthClearer = runHooks{}
)

// TestRunMetricsSubmitted: each submit that created a run, or failed, is
// reported once with its workflow and tenant; a keyed submit answered with
// the run already there is not; a SubmitMany refused as a whole reports
// every submission as failed.
func TestRunMetricsSubmitted(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		log := &hookLog{}
		b := setup(t, f, plait.WithMetrics(runHooks{log}))
		b.handle(t, "ok", noop)
		ctx := context.Background()
		wf := plait.NewWorkflow("order").Task("a", "ok", nil)
		b.submit(t, wf, plait.ForTenant("acme"))
		b.submit(t, wf, plait.WithRunKey("k1"))
		b.submit(t, wf, plait.WithRunKey("k1"))
		_, err := b.s.Submit(ctx, plait.NewWorkflow("bad").Task("a", "missing", nil), plait.ForTenant("acme"))
		require.Error(t, err)
		_, err = b.s.SubmitMany(ctx, []plait.Submission{
			{Workflow: wf, Options: []plait.SubmitOption{plait.ForTenant("t1")}},
			{Workflow: plait.NewWorkflow("other").Task("a", "ok", nil)},
		})
		require.NoError(t, err)
		_, err = b.s.SubmitMany(ctx, []plait.Submission{
			{Workflow: wf},
			{Workflow: plait.NewWorkflow("bad").Task("a", "missing", nil)},
		})
		require.Error(t, err)
		want := []string{
			"submitted order/acme ok in 0s",
			"submitted order/ ok in 0s",
			"submitted bad/acme error in 0s",
			"submitted order/t1 ok in 0s",
			"submitted other/ ok in 0s",
			"submitted order/ error in 0s",
			"submitted bad/ error in 0s",
		}
		require.Equal(t, want, log.lines, "one hook per submission, in order, the keyed resubmit left out")
	})
}

// TestRunMetricsEnded: a run's end is reported once, by the worker whose
// finish ended it or by the RunCancel that cancelled it; cancelling a run
// already ended reports nothing more.
func TestRunMetricsEnded(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		log := &hookLog{}
		b := setup(t, f, plait.WithMetrics(runHooks{log}))
		b.handle(t, "ok", noop)
		b.handle(t, "bad", func(ctx context.Context, task *plait.Task) (any, error) {
			return nil, plait.Permanent(errors.New("no"))
		})
		entered, causes := make(chan struct{}, 1), make(chan error, 1)
		b.handle(t, "block", blockUntilCancelled(entered, causes))
		ok := b.submit(t, plait.NewWorkflow("good").Task("a", "ok", nil).Task("b", "ok", nil, plait.After("a")), plait.ForTenant("acme"))
		bad := b.submit(t, plait.NewWorkflow("broken").Task("a", "bad", nil))
		held := b.submit(t, plait.NewWorkflow("held").Task("a", "block", nil), plait.ForTenant("t2"))
		b.start(t)
		b.wait(t, ok.ID)
		b.wait(t, bad.ID)
		recv(t, entered)
		ctx := context.Background()
		_, err := b.s.RunCancel(ctx, held.ID)
		require.NoError(t, err)
		require.ErrorIs(t, recv(t, causes), plait.ErrRunCancelled)
		log.waitFor(t, "lease lost held/a")
		_, err = b.s.RunCancel(ctx, held.ID)
		require.NoError(t, err)
		_, err = b.s.RunCancel(ctx, ok.ID)
		require.NoError(t, err)
		for _, want := range []string{"run ended good/acme completed", "run ended broken/ failed", "run ended held/t2 cancelled"} {
			log.waitFor(t, want)
		}
		b.stop()
		require.Equal(t, 3, log.count("run ended "), "each end once:\n%s", log.String())
	})
}

// TestQueueDepthLeaderOnly: of two processes on one store, only the one
// holding the schedule leader lease samples queue depth, for its own
// queues and those of every live node; when it stops it clears its
// samples, and the process that takes the lease over samples in its place.
func TestQueueDepthLeaderOnly(t *testing.T) {
	t.Parallel()
	// Each process has a tick of its own, a period no other timer has, so
	// the test knows whose loop it moves the clock for.
	const tickA, tickB = 700 * time.Millisecond, 900 * time.Millisecond
	clk := fakeclock.New(epoch)
	st := newMemStore(t, memstore.WithClock(clk))
	leaderEvents := make(chan plait.Event, 16)
	heartbeats := make(chan plait.Event, 64)
	newProcess := func(log *hookLog, tick time.Duration, opts ...plait.Option) *plait.Scheduler {
		s, err := plait.New(st, append([]plait.Option{plait.WithClock(clk), quietLogger(),
			plait.WithMetrics(runHooks{log}), plait.WithScheduleTick(tick), plait.WithSweepInterval(300 * time.Millisecond),
			plait.WithObserver(func(e plait.Event) {
				switch e.Type {
				case plait.EventLeaderAcquired, plait.EventLeaderLost:
					leaderEvents <- e
				case plait.EventNodeHeartbeat:
					select {
					case heartbeats <- e:
					default:
					}
				}
			})}, opts...)...)
		require.NoError(t, err)
		require.NoError(t, s.Handle("work", noop))
		return s
	}
	run := func(s *plait.Scheduler) (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		var once sync.Once
		return func() {
			once.Do(func() {
				cancel()
				select {
				case err := <-done:
					require.NoError(t, err)
				case <-time.After(failAfter):
					t.Fatal("Run did not return")
				}
			})
		}
	}
	logA, logB := &hookLog{}, &hookLog{}
	a := newProcess(logA, tickA)
	b := newProcess(logB, tickB, plait.WithQueues("default", "other"))
	_, err := a.Submit(context.Background(), plait.NewWorkflow("later").Task("x", "work", nil, plait.Delay(time.Hour)))
	require.NoError(t, err)

	stopA := run(a)
	defer stopA()
	require.Equal(t, plait.EventLeaderAcquired, recv(t, leaderEvents).Type)
	logA.waitFor(t, "depth default ready=0 delayed=1")
	stopB := run(b)
	defer stopB()
	// b tries the lease at once, is refused, and arms its next try a tick
	// later: waiting for that timer here keeps it at epoch+tickB, before
	// the clock moves for a's tick.
	armed(t, clk, epoch.Add(tickB))
	recv(t, heartbeats)
	recv(t, heartbeats)
	// At a's next tick it samples again, now with the queue only b serves;
	// b, refused the lease, samples nothing.
	armed(t, clk, clk.Now().Add(tickA))
	clk.Advance(tickA)
	logA.waitFor(t, "depth other ready=0 delayed=0")
	require.Zero(t, logB.count("depth"), "a process without the lease samples nothing:\n%s", logB.String())

	stopA()
	require.Equal(t, plait.EventLeaderLost, recv(t, leaderEvents).Type)
	logA.waitFor(t, "depth cleared")
	armed(t, clk, epoch.Add(tickB))
	clk.Set(epoch.Add(tickB))
	require.Equal(t, plait.EventLeaderAcquired, recv(t, leaderEvents).Type)
	logB.waitFor(t, "depth default ready=0 delayed=1")
	logB.waitFor(t, "depth other ready=0 delayed=0")
}

// armed waits until a timer of clk is due at at.
func armed(t *testing.T, clk *fakeclock.Clock, at time.Time) {
	t.Helper()
	done := make(chan struct{})
	tm := time.AfterFunc(failAfter, func() { close(done) })
	defer tm.Stop()
	require.True(t, clk.WaitForDeadline(at, done), "no timer armed for %s", at)
}
