package plait_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// routedCalls is a callCounter that lets the Scheduler see that the store
// under it routes claims, claims by shares and keeps limits (callCounter
// alone hides every capability).
type routedCalls struct{ *callCounter }

func (routedCalls) RoutesClaims()   {}
func (routedCalls) ClaimsByShares() {}
func (routedCalls) KeepsLimits()    {}

// routedOn builds a scheduler named workerID on store and clk whose store
// calls are counted and routed, as one process of a deployment.
func routedOn(t *testing.T, clk *fakeclock.Clock, store store.Store, workerID string, opts ...plait.Option) *bundle {
	t.Helper()
	rec := &recorder{}
	base := []plait.Option{
		plait.WithClock(clk),
		plait.WithObserver(rec.add),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		plait.WithWorkerID(workerID),
	}
	calls := &callCounter{Store: store}
	s, err := plait.New(routedCalls{calls}, append(base, opts...)...)
	require.NoError(t, err)
	return &bundle{clock: clk, store: store, s: s, events: rec, calls: calls}
}

func ok(context.Context, *plait.Task) (any, error) { return "ok", nil }

// TestCapabilityRoutingRunsTasksOnlyWhereCapable runs a process without
// capabilities: it runs the task that requires nothing, finishing it with a
// claim that would have taken the gpu task had it been routed wrongly, and
// the gpu task waits, visibly, until a process with gpu starts and runs it.
func TestCapabilityRoutingRunsTasksOnlyWhereCapable(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		clk := fakeclock.New(epoch)
		store := f.new(t, clk)
		plain := routedOn(t, clk, store, "plain")
		plain.handle(t, "render", ok)
		plain.start(t)
		run := plain.submit(t, plait.NewWorkflow("routed").
			Task("cpu", "render", nil).
			Task("gpu", "render", nil, plait.Requires("gpu")).
			Task("both", "render", nil, plait.Requires("gpu", "ssd")))
		plain.events.waitFor(t, 1, is(plait.EventTaskSucceeded, "cpu"))
		plain.calls.waitIdle(t)
		got, err := plain.s.RunGet(context.Background(), run.ID)
		require.NoError(t, err)
		require.Equal(t, plait.TaskReady, got.Task("gpu").Status, "a process without gpu must not claim a task that requires it")
		require.Equal(t, "capability gpu", got.Task("gpu").WaitingFor)
		require.Equal(t, "capability gpu,ssd", got.Task("both").WaitingFor)
		require.Zero(t, plain.events.count(is(plait.EventTaskReleased, "")), "routing hands nothing back")

		gpu := routedOn(t, clk, store, "gpu-node", plait.WithCapabilities("gpu"))
		gpu.handle(t, "render", ok)
		gpu.start(t)
		gpu.events.waitFor(t, 1, is(plait.EventTaskSucceeded, "gpu"))
		gpu.calls.waitIdle(t)
		got, err = plain.s.RunGet(context.Background(), run.ID)
		require.NoError(t, err)
		require.Equal(t, "gpu-node", got.Task("gpu").Worker)
		require.Equal(t, plait.TaskReady, got.Task("both").Status, "gpu alone does not run a task that requires gpu and ssd")

		full := routedOn(t, clk, store, "full-node", plait.WithCapabilities("ssd", "gpu", "region-eu"))
		full.handle(t, "render", ok)
		full.start(t)
		final := full.wait(t, run.ID)
		require.Equal(t, plait.RunCompleted, final.Status)
		require.Equal(t, "full-node", final.Task("both").Worker)
		require.Equal(t, "plain", final.Task("cpu").Worker)
	})
}

// TestHandlerRoutingSetsTasksAside runs a process without a task's
// handler: its claim sets the task aside instead of handing it back, the
// task says which handler it waits for, and a process with the handler
// runs it once it starts.
func TestHandlerRoutingSetsTasksAside(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		clk := fakeclock.New(epoch)
		store := f.new(t, clk)
		old := routedOn(t, clk, store, "old", plait.WithRemoteHandlers())
		old.handle(t, "v1", ok)
		old.start(t)
		run := old.submit(t, plait.NewWorkflow("deploy").
			Task("first", "v1", nil).
			Task("x", "v2", nil).
			Task("last", "v1", nil, plait.After("first")))
		old.events.waitFor(t, 1, is(plait.EventTaskSucceeded, "last"))
		old.calls.waitIdle(t)
		got, err := old.s.RunGet(context.Background(), run.ID)
		require.NoError(t, err)
		x := got.Task("x")
		require.Equal(t, plait.TaskReady, x.Status)
		require.Equal(t, "handler v2", x.WaitingFor)
		require.Zero(t, x.Epoch, "a task set aside was never claimed")
		require.Zero(t, old.events.count(is(plait.EventTaskReleased, "")), "nothing is handed back")

		upgraded := routedOn(t, clk, store, "new")
		upgraded.handle(t, "v2", ok)
		upgraded.start(t)
		final := upgraded.wait(t, run.ID)
		require.Equal(t, plait.RunCompleted, final.Status)
		require.Equal(t, "new", final.Task("x").Worker)
		require.Len(t, final.Task("x").Attempts, 1)
		require.Empty(t, final.Task("x").WaitingFor)
	})
}

// TestRoutingRefusedWithoutClaimRouter: on a store that cannot route,
// Requires and WithCapabilities are refused, never silently ignored.
func TestRoutingRefusedWithoutClaimRouter(t *testing.T) {
	t.Parallel()
	_, err := plait.New(coreOnly{newMemStore(t)}, plait.WithCapabilities("gpu"))
	require.ErrorIs(t, err, plait.ErrUnsupported)
	require.Contains(t, err.Error(), "ClaimRouter")

	s, err := plait.New(coreOnly{newMemStore(t)}, plait.WithRemoteHandlers())
	require.NoError(t, err)
	_, err = s.Submit(context.Background(), plait.NewWorkflow("wf").Task("a", "h", nil, plait.Requires("gpu")))
	require.ErrorIs(t, err, plait.ErrUnsupported)
	_, err = s.Submit(context.Background(), plait.NewWorkflow("wf").Task("a", "h", nil))
	require.NoError(t, err, "a workflow without Requires needs no routing")

	_, err = plait.New(newMemStore(t), plait.WithCapabilities("a", "b", "c", "d", "e", "f"))
	require.ErrorIs(t, err, plait.ErrInvalidOption)
	_, err = plait.New(newMemStore(t), plait.WithCapabilities("gpu:1"))
	require.ErrorIs(t, err, plait.ErrInvalidOption)
	s, err = plait.New(newMemStore(t), plait.WithRemoteHandlers())
	require.NoError(t, err)
	_, err = s.Submit(context.Background(), plait.NewWorkflow("wf").Task("a", "h", nil, plait.Requires("a", "b", "c", "d", "e", "f")))
	require.ErrorIs(t, err, plait.ErrInvalidTaskOption)
}

func TestRoutedQueueNames(t *testing.T) {
	t.Parallel()
	require.Equal(t, "default", store.RoutedQueue("", nil))
	require.Equal(t, "q+gpu+ssd", store.RoutedQueue("q", []string{"ssd", "gpu", "ssd"}))
	q, caps, ok := store.SplitRoutedQueue("q+gpu+ssd")
	require.True(t, ok)
	require.Equal(t, "q", q)
	require.Equal(t, []string{"gpu", "ssd"}, caps)
	for _, bad := range []string{"q+ssd+gpu", "q+gpu+gpu", "q+", "+gpu", "q+a+b+c+d+e+f", "q:1"} {
		_, _, ok := store.SplitRoutedQueue(bad)
		require.False(t, ok, bad)
	}
	require.Equal(t, "capability gpu,ssd", store.WaitingForCapability("q+gpu+ssd"))
	require.Empty(t, store.WaitingForCapability("q"))
}

// TestHandlerSetAsideWakesAProcessThatHasIt: two idle processes whose
// waits never time out; the one without the task's handler may take the
// wake-up and set the task aside, and the one with it must still wake and
// run it.
func TestHandlerSetAsideWakesAProcessThatHasIt(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		clk := fakeclock.New(epoch)
		store := f.new(t, clk)
		a := routedOn(t, clk, store, "a", plait.WithRemoteHandlers(), plait.WithIdleWait(time.Hour))
		a.handle(t, "ha", ok)
		b := routedOn(t, clk, store, "b", plait.WithIdleWait(time.Hour))
		b.handle(t, "hb", ok)
		a.start(t)
		b.start(t)
		a.calls.waitIdle(t)
		b.calls.waitIdle(t)
		run := a.submit(t, plait.NewWorkflow("wake").Task("x", "hb", nil))
		final := b.wait(t, run.ID)
		require.Equal(t, "b", final.Task("x").Worker)
	})
}
