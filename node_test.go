package plait_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// nodeCounter is a callCounter that passes the NodeStore and ClaimRouter
// capabilities through, counted like every other call, and can cut the heartbeats off
// as a process that lost its store would see them.
type nodeCounter struct {
	*callCounter
	ns  store.NodeStore
	cut atomic.Bool
}

// RoutesClaims passes ClaimRouter through: every shipped store routes.
func (c *nodeCounter) RoutesClaims() {}

// ClaimsByShares passes FairClaimer through: every shipped store has it.
func (c *nodeCounter) ClaimsByShares() {}

var errCutOff = &plait.UnsupportedError{Capability: "a store cut off by the test"}

func (c *nodeCounter) NodeHeartbeat(ctx context.Context, p *store.NodeHeartbeatParams) (*store.NodeHeartbeatResult, error) {
	c.enter()
	defer c.leave()
	if c.cut.Load() {
		return nil, errCutOff
	}
	return c.ns.NodeHeartbeat(ctx, p)
}

func (c *nodeCounter) NodeRemove(ctx context.Context, p *store.NodeRemoveParams) error {
	c.enter()
	defer c.leave()
	return c.ns.NodeRemove(ctx, p)
}

func (c *nodeCounter) NodeGet(ctx context.Context, p *store.NodeGetParams) (*plait.NodeRecord, error) {
	c.enter()
	defer c.leave()
	return c.ns.NodeGet(ctx, p)
}

func (c *nodeCounter) NodeList(ctx context.Context, p *store.NodeListParams) (*store.NodeListResult, error) {
	c.enter()
	defer c.leave()
	return c.ns.NodeList(ctx, p)
}

func (c *nodeCounter) NodeDrain(ctx context.Context, p *store.NodeDrainParams) error {
	c.enter()
	defer c.leave()
	return c.ns.NodeDrain(ctx, p)
}

func (c *nodeCounter) QueuePause(ctx context.Context, p *store.QueuePauseParams) (*store.QueuePauseResult, error) {
	c.enter()
	defer c.leave()
	return c.ns.QueuePause(ctx, p)
}

func (c *nodeCounter) QueueListPaused(ctx context.Context, p *store.QueueListPausedParams) (*store.QueueListPausedResult, error) {
	c.enter()
	defer c.leave()
	return c.ns.QueueListPaused(ctx, p)
}

// testBeat is the heartbeat interval of these tests: no other timer of
// the scheduler is due at a multiple of it, so advancing the clock once a
// timer due a heartbeat from now is armed advances exactly the heartbeat.
const testBeat = 1700 * time.Millisecond

// nodeBundle is a bundle whose scheduler sees the store's NodeStore, with
// a second scheduler on the same store and clock standing for another
// process that only calls the store.
type nodeBundle struct {
	*bundle
	nodes *nodeCounter
	other *plait.Scheduler
	done  chan error
	stop  context.CancelFunc
}

func setupNodes(t *testing.T, f storeFactory, opts ...plait.Option) *nodeBundle {
	t.Helper()
	clk := fakeclock.New(epoch)
	st := f.new(t, clk)
	ns, ok := st.(store.NodeStore)
	require.True(t, ok, "%s keeps nodes", f.name)
	rec := &recorder{}
	quiet := plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	calls := &nodeCounter{callCounter: &callCounter{Store: st}, ns: ns}
	base := []plait.Option{plait.WithClock(clk), plait.WithObserver(rec.add), quiet, plait.WithWorkerID("w1"), plait.WithNodeHeartbeat(testBeat)}
	s, err := plait.New(calls, append(base, opts...)...)
	require.NoError(t, err)
	other, err := plait.New(st, plait.WithClock(clk), quiet, plait.WithWorkerID("admin"))
	require.NoError(t, err)
	return &nodeBundle{bundle: &bundle{clock: clk, store: st, s: s, events: rec, calls: calls.callCounter}, nodes: calls, other: other}
}

// run starts Run; the test's cleanup stops it and checks it returned nil.
func (b *nodeBundle) run(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b.done, b.stop = make(chan error, 1), cancel
	go func() { b.done <- b.s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err, ok := <-b.done:
			if ok {
				require.NoError(t, err)
			}
		case <-time.After(failAfter):
			t.Fatal("Run did not return after its context was cancelled")
		}
	})
}

// returned waits for Run to return by itself.
func (b *nodeBundle) returned(t *testing.T) error {
	t.Helper()
	err := recv(t, b.done)
	close(b.done)
	return err
}

// beats advances the clock one heartbeat and waits for the n-th.
func (b *nodeBundle) beat(t *testing.T, n int) {
	t.Helper()
	b.advanceAfterArmed(t, testBeat)
	b.events.waitFor(t, n, is(plait.EventNodeHeartbeat, ""))
}

func TestNodeRegistersReportsAndLeaves(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		ctx := context.Background()
		b := setupNodes(t, f, plait.WithCapabilities("region-eu", "gpu"), plait.WithConcurrency(2))
		b.handle(t, "work", noop)
		b.run(t)
		b.events.waitFor(t, 1, is(plait.EventNodeHeartbeat, ""))

		nodes, err := b.other.NodeList(ctx)
		require.NoError(t, err)
		require.Len(t, nodes, 1, "a running scheduler registers one node")
		n := nodes[0]
		require.Equal(t, b.s.NodeID(), n.ID)
		require.Equal(t, "w1", n.Name)
		require.Equal(t, os.Getpid(), n.PID)
		require.NotEmpty(t, n.Version)
		require.Equal(t, []string{"gpu", "region-eu"}, n.Capabilities)
		require.Equal(t, []string{plait.DefaultQueue}, n.Queues)
		require.Equal(t, []string{"work"}, n.Handlers)
		require.Equal(t, 2, n.Capacity)
		require.True(t, n.StartedAt.Equal(epoch), "started on the store's clock")
		require.True(t, n.ExpiresAt.Equal(epoch.Add(plait.NodeTTLHeartbeats*testBeat)), "expires %d heartbeats later", plait.NodeTTLHeartbeats)
		gpu, err := b.other.NodeListByCapability(ctx, "gpu")
		require.NoError(t, err)
		require.Len(t, gpu, 1)
		tpu, err := b.other.NodeListByCapability(ctx, "tpu")
		require.NoError(t, err)
		require.Empty(t, tpu)

		run := b.submit(t, plait.NewWorkflow("wf").Task("a", "work", nil))
		b.wait(t, run.ID)
		b.events.waitFor(t, 1, is(plait.EventRunFinished, ""))
		b.beat(t, 2)
		n, err = b.other.NodeGet(ctx, b.s.NodeID())
		require.NoError(t, err)
		require.EqualValues(t, 1, n.Completed)
		require.Zero(t, n.Load)
		require.Len(t, n.History, 1)
		require.Equal(t, run.ID, n.History[0].RunID)
		require.Equal(t, "a", n.History[0].Task)
		require.Equal(t, plait.OutcomeSucceeded, n.History[0].Outcome)
		require.True(t, n.HeartbeatAt.Equal(epoch.Add(testBeat)))

		b.stop()
		require.NoError(t, b.returned(t))
		nodes, err = b.other.NodeList(ctx)
		require.NoError(t, err)
		require.Empty(t, nodes, "a graceful stop removes the node")
	})
}

func TestNodeExpiresWhenHeartbeatsStop(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		ctx := context.Background()
		b := setupNodes(t, f)
		b.run(t)
		b.events.waitFor(t, 1, is(plait.EventNodeHeartbeat, ""))
		b.nodes.cut.Store(true)
		for i := 0; i < plait.NodeTTLHeartbeats-1; i++ {
			b.advanceAfterArmed(t, testBeat)
		}
		nodes, err := b.other.NodeList(ctx)
		require.NoError(t, err)
		require.Len(t, nodes, 1, "a node lives its TTL past its last heartbeat")
		b.advanceAfterArmed(t, testBeat)
		nodes, err = b.other.NodeList(ctx)
		require.NoError(t, err)
		require.Empty(t, nodes, "a node whose heartbeats stopped expires after its TTL")

		// The heartbeat due now fails before the next is armed.
		b.waitArmed(t, b.clock.Now().Add(testBeat))
		b.nodes.cut.Store(false)
		b.beat(t, 2)
		n, err := b.other.NodeGet(ctx, b.s.NodeID())
		require.NoError(t, err, "the next heartbeat that gets through registers the node again")
		require.Equal(t, epoch.Add(4*testBeat), n.StartedAt, "as a new life")
	})
}

func TestNodeDrainFromAnotherProcess(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		ctx := context.Background()
		b := setupNodes(t, f, plait.WithConcurrency(1), plait.WithPrefetch(0))
		entered, release := make(chan struct{}, 1), make(chan struct{})
		b.handle(t, "hold", func(ctx context.Context, _ *plait.Task) (any, error) {
			entered <- struct{}{}
			<-release
			return "done", nil
		})
		b.handle(t, "later", noop)
		b.run(t)
		b.events.waitFor(t, 1, is(plait.EventNodeHeartbeat, ""))
		held := b.submit(t, plait.NewWorkflow("held").Task("hold", "hold", nil))
		recv(t, entered)

		require.ErrorIs(t, b.other.NodeDrain(ctx, "nobody"), plait.ErrNotFound)
		require.NoError(t, b.other.NodeDrain(ctx, b.s.NodeID()))
		b.beat(t, 2)
		b.events.waitFor(t, 1, is(plait.EventNodeDraining, ""))
		later := b.submit(t, plait.NewWorkflow("later").Task("later", "later", nil))

		close(release)
		require.NoError(t, b.returned(t), "a drained node leaves Run with nil")
		got, err := b.s.RunGet(ctx, held.ID)
		require.NoError(t, err)
		require.Equal(t, plait.RunCompleted, got.Status, "a draining node finishes what it holds")
		got, err = b.s.RunGet(ctx, later.ID)
		require.NoError(t, err)
		require.Equal(t, plait.TaskReady, got.Tasks[0].Status, "a draining node takes no new work")
		nodes, err := b.other.NodeList(ctx)
		require.NoError(t, err)
		require.Empty(t, nodes, "a drained node removes its record")
	})
}

func TestQueuePauseAndResumeReachEveryNode(t *testing.T) {
	t.Parallel()
	queuePauseAndResume(t)
}

// TestQueuePauseInWeightedMode: the weighted mode, which turns the queues
// of each claim, asks only for those not paused.
func TestQueuePauseInWeightedMode(t *testing.T) {
	t.Parallel()
	queuePauseAndResume(t, plait.WithWeightedPriorities(plait.PriorityWeightsDefault))
}

func queuePauseAndResume(t *testing.T, opts ...plait.Option) {
	forEachStore(t, func(t *testing.T, f storeFactory) {
		ctx := context.Background()
		b := setupNodes(t, f, append([]plait.Option{plait.WithQueues(plait.DefaultQueue, "mail"), plait.WithCapabilities("gpu")}, opts...)...)
		b.handle(t, "work", noop)
		b.run(t)
		b.events.waitFor(t, 1, is(plait.EventNodeHeartbeat, ""))
		require.NoError(t, b.other.QueuePause(ctx, "mail"))
		require.NoError(t, b.other.QueuePause(ctx, "mail"), "pausing a paused queue changes nothing")
		paused, err := b.other.QueueListPaused(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"mail"}, paused)
		b.beat(t, 2)

		// A claim built before the heartbeat paused the queue may still be
		// on its way: a run of another queue first lets it land.
		b.wait(t, b.submit(t, plait.NewWorkflow("first").Task("d", "work", nil)).ID)
		mail := b.submit(t, plait.NewWorkflow("mail").Task("m", "work", nil, plait.OnQueue("mail")).
			Task("g", "work", nil, plait.OnQueue("mail"), plait.Requires("gpu")))
		other := b.submit(t, plait.NewWorkflow("other").Task("d", "work", nil))
		b.wait(t, other.ID)
		b.beat(t, 3)
		got, err := b.s.RunGet(ctx, mail.ID)
		require.NoError(t, err)
		for _, task := range got.Tasks {
			require.Equal(t, plait.TaskReady, task.Status, "a paused queue (task %s; its routed tasks too) is not claimed from, while the others are", task.Name)
		}

		require.NoError(t, b.other.QueueResume(ctx, "mail"))
		b.beat(t, 4)
		b.wait(t, mail.ID)
		paused, err = b.other.QueueListPaused(ctx)
		require.NoError(t, err)
		require.Empty(t, paused)
		require.ErrorIs(t, b.other.QueuePause(ctx, "bad:queue"), plait.ErrInvalidID)
	})
}

func TestNodeOptions(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string][]plait.Option{
		"heartbeat zero":       {plait.WithNodeHeartbeat(0)},
		"ttl zero":             {plait.WithNodeTTL(0)},
		"ttl within heartbeat": {plait.WithNodeHeartbeat(time.Second), plait.WithNodeTTL(time.Second)},
		"history zero":         {plait.WithNodeHistory(0)},
		"history too long":     {plait.WithNodeHistory(plait.NodeHistoryMax + 1)},
	} {
		_, err := plait.New(coreOnly{}, opts...)
		require.ErrorIs(t, err, plait.ErrInvalidOption, name)
	}
	_, err := plait.New(coreOnly{}, plait.WithNodeTTL(30*time.Millisecond))
	require.NoError(t, err, "a short TTL alone shortens the heartbeat to a third of it")
}

func TestNodeMethodsNeedTheCapability(t *testing.T) {
	t.Parallel()
	s, err := plait.New(coreOnly{})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = s.NodeList(ctx)
	require.ErrorIs(t, err, plait.ErrUnsupported)
	require.ErrorIs(t, s.NodeDrain(ctx, "n"), plait.ErrUnsupported)
	require.ErrorIs(t, s.QueuePause(ctx, "q"), plait.ErrUnsupported)
	require.ErrorIs(t, s.QueueResume(ctx, "q"), plait.ErrUnsupported)
	_, err = s.QueueListPaused(ctx)
	require.ErrorIs(t, err, plait.ErrUnsupported)
}

func TestSplitWorker(t *testing.T) {
	for in, want := range map[string][2]string{
		"host-7.0123abcd":     {"host-7", "host-7.0123abcd"},
		"a.b.c.ffffffff":      {"a.b.c", "a.b.c.ffffffff"},
		"w1":                  {"w1", ""},
		".0123abcd":           {".0123abcd", ""},
		"host-7.0123abcD":     {"host-7.0123abcD", ""},
		"host-7.0123abc":      {"host-7.0123abc", ""},
		"host-7x0123abcd":     {"host-7x0123abcd", ""},
		"":                    {"", ""},
		"name.with.dots.here": {"name.with.dots.here", ""},
	} {
		w, n := plait.SplitWorker(in)
		require.Equal(t, want, [2]string{w, n}, in)
	}
}

// A Scheduler's attempts name its worker id and its node id, on every
// backend.
func TestAttemptsNameTheWorkerAndTheNode(t *testing.T) {
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		b.handle(t, "work", noop)
		run := b.submit(t, plait.NewWorkflow("one").Task("a", "work", nil))
		b.start(t)
		final := b.wait(t, run.ID)
		a := final.Task("a")
		require.Equal(t, "w1", a.Worker)
		require.Equal(t, b.s.NodeID(), a.Node)
		require.True(t, strings.HasPrefix(a.Node, "w1."), a.Node)
		require.Len(t, a.Attempts, 1)
		require.Equal(t, [2]string{"w1", b.s.NodeID()}, [2]string{a.Attempts[0].Worker, a.Attempts[0].Node})
	})
}

// TestNodeHistoryKeepsTheLastAttempts: attempts ended between two
// heartbeats beyond WithNodeHistory(n) are dropped oldest first, whatever
// the buffer did with them meanwhile, and the record lists the last n in
// the order they ended, newest first.
func TestNodeHistoryKeepsTheLastAttempts(t *testing.T) {
	forEachStore(t, func(t *testing.T, f storeFactory) {
		ctx := context.Background()
		b := setupNodes(t, f, plait.WithNodeHistory(3), plait.WithConcurrency(1))
		b.handle(t, "work", noop)
		b.run(t)
		b.events.waitFor(t, 1, is(plait.EventNodeHeartbeat, ""))
		var tasks []string
		for i := 0; i < 8; i++ { // more than twice the cap, in one interval
			name := fmt.Sprintf("t%d", i)
			run := b.submit(t, plait.NewWorkflow("wf").Task(name, "work", nil))
			b.wait(t, run.ID)
			tasks = append(tasks, name)
		}
		b.beat(t, 2)
		n, err := b.other.NodeGet(ctx, b.s.NodeID())
		require.NoError(t, err)
		require.EqualValues(t, 8, n.Completed)
		var got []string
		for _, h := range n.History {
			got = append(got, h.Task)
		}
		require.Equal(t, []string{tasks[7], tasks[6], tasks[5]}, got, "the last three, newest first")
		b.stop()
		require.NoError(t, b.returned(t))
	})
}
