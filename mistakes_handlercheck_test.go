package plait_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

// fleetCounter passes a store and its node registry through, counting the
// node lists read and the runs created.
type fleetCounter struct {
	store.Store
	ns      store.NodeStore
	lists   atomic.Int32
	creates atomic.Int32
}

func (c *fleetCounter) NodeHeartbeat(ctx context.Context, p *store.NodeHeartbeatParams) (*store.NodeHeartbeatResult, error) {
	return c.ns.NodeHeartbeat(ctx, p)
}
func (c *fleetCounter) NodeRemove(ctx context.Context, p *store.NodeRemoveParams) error {
	return c.ns.NodeRemove(ctx, p)
}
func (c *fleetCounter) NodeGet(ctx context.Context, p *store.NodeGetParams) (*plait.NodeRecord, error) {
	return c.ns.NodeGet(ctx, p)
}
func (c *fleetCounter) NodeList(ctx context.Context, p *store.NodeListParams) (*store.NodeListResult, error) {
	c.lists.Add(1)
	return c.ns.NodeList(ctx, p)
}
func (c *fleetCounter) NodeDrain(ctx context.Context, p *store.NodeDrainParams) error {
	return c.ns.NodeDrain(ctx, p)
}
func (c *fleetCounter) QueuePause(ctx context.Context, p *store.QueuePauseParams) (*store.QueuePauseResult, error) {
	return c.ns.QueuePause(ctx, p)
}
func (c *fleetCounter) QueueListPaused(ctx context.Context, p *store.QueueListPausedParams) (*store.QueueListPausedResult, error) {
	return c.ns.QueueListPaused(ctx, p)
}
func (c *fleetCounter) RunCreate(ctx context.Context, p *store.RunCreateParams) (*store.RunCreateResult, error) {
	c.creates.Add(1)
	return c.Store.RunCreate(ctx, p)
}
func (c *fleetCounter) RunCreateMany(ctx context.Context, p []*store.RunCreateParams) ([]store.RunCreateOutcome, error) {
	c.creates.Add(1)
	return c.Store.RunCreateMany(ctx, p)
}

// TestHandlerCheckRefusesAHandlerNoLiveNodeRegisters: a client given
// WithHandlerCheck refuses, before writing, a task whose handler no live
// node registers, naming the nearest names they do register; it reads the
// fleet at most once a second, and again at once before refusing, so a
// node just started is seen. On every backend.
func TestHandlerCheckRefusesAHandlerNoLiveNodeRegisters(t *testing.T) {
	t.Parallel()
	_, err := plait.New(coreOnly{newMemStore(t)}, plait.WithHandlerCheck())
	require.ErrorIs(t, err, plait.ErrUnsupported, "the check needs the node registry")

	forEachStore(t, func(t *testing.T, f storeFactory) {
		ctx := context.Background()
		b := setupNodes(t, f)
		fleet := &fleetCounter{Store: b.store, ns: b.store.(store.NodeStore)}
		client, err := plait.New(fleet, plait.WithClock(b.clock), plait.WithHandlerCheck())
		require.NoError(t, err)
		typo := plait.NewWorkflow("pay").Task("c", "chrage", nil)
		_, err = client.Submit(ctx, typo)
		require.ErrorIs(t, err, plait.ErrUnknownHandler, "no node is live yet")
		require.ErrorContains(t, err, `unknown handler "chrage": no live node registers it, nor any handler`)

		for _, h := range []string{"charge", "change", "refund", "email"} {
			b.handle(t, h, noop)
		}
		b.run(t)
		b.events.waitFor(t, 1, is(plait.EventNodeHeartbeat, ""))
		fleet.lists.Store(0)
		_, err = client.Submit(ctx, typo)
		require.ErrorIs(t, err, plait.ErrUnknownHandler)
		require.ErrorIs(t, err, plait.ErrInvalidWorkflow)
		var ue *plait.UnknownHandlerError
		require.ErrorAs(t, err, &ue)
		require.Equal(t, plait.UnknownHandlerError{Workflow: "pay", Task: "c", Handler: "chrage", Near: []string{"charge", "change", "email"}, Fleet: true}, *ue)
		require.EqualError(t, err, `plait: workflow "pay" task "c": unknown handler "chrage": no live node registers it; nearest: "charge", "change", "email"`)
		require.Equal(t, int32(1), fleet.lists.Load(), "a miss right after a read reads no more")
		require.Zero(t, fleet.creates.Load(), "nothing is written")

		for i := 0; i < 50; i++ {
			_, err = client.Submit(ctx, plait.NewWorkflow("pay").Task("c", "charge", nil))
			require.NoError(t, err)
		}
		require.Equal(t, int32(1), fleet.lists.Load(), "the node list is kept, not read per Submit")
		b.beat(t, 2) // the clock moves past the refresh interval
		_, err = client.Submit(ctx, plait.NewWorkflow("pay").Task("c", "charge", nil))
		require.NoError(t, err)
		require.Equal(t, int32(2), fleet.lists.Load(), "a list older than a second is read again")

		// A node started since the last read is seen at once.
		later, err := plait.New(b.store, plait.WithClock(b.clock), plait.WithWorkerID("w2"), plait.WithNodeHeartbeat(testBeat),
			plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), plait.WithObserver(b.events.add))
		require.NoError(t, err)
		require.NoError(t, later.Handle("resize", noop))
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- later.Run(runCtx) }()
		t.Cleanup(func() {
			stop()
			select {
			case <-done:
			case <-time.After(failAfter):
				t.Error("the second node did not stop")
			}
		})
		b.events.waitFor(t, 3, is(plait.EventNodeHeartbeat, ""))
		_, err = client.Submit(ctx, plait.NewWorkflow("img").Task("r", "resize", nil))
		require.NoError(t, err, "a miss reads the fleet again before refusing")
		require.Equal(t, int32(3), fleet.lists.Load())

		creates := fleet.creates.Load()
		runs, err := client.SubmitMany(ctx, []plait.Submission{
			{Workflow: plait.NewWorkflow("ok").Task("a", "refund", nil)},
			{Workflow: plait.NewWorkflow("bad").Task("a", "refnud", nil).Task("b", "emial", nil)},
		})
		require.Nil(t, runs)
		require.ErrorIs(t, err, plait.ErrUnknownHandler)
		require.ErrorContains(t, err, `plait: submission 1: plait: workflow "bad" task "a": unknown handler "refnud": no live node registers it; nearest: "refund"`)
		require.ErrorContains(t, err, `plait: workflow "bad" task "b": unknown handler "emial": no live node registers it; nearest: "email"`)
		require.Equal(t, creates, fleet.creates.Load(), "SubmitMany writes nothing")
		require.Equal(t, int32(4), fleet.lists.Load(), "one read for the whole batch")
	})
}

// TestUnknownLocalHandlerNamesTheNearest: without WithRemoteHandlers or
// WithHandlerCheck, Submit names the nearest handlers this process has.
func TestUnknownLocalHandlerNamesTheNearest(t *testing.T) {
	t.Parallel()
	s, err := plait.New(newMemStore(t))
	require.NoError(t, err)
	require.NoError(t, s.Handle("charge", noop))
	_, err = s.Submit(context.Background(), plait.NewWorkflow("pay").Task("c", "chrage", nil))
	require.ErrorIs(t, err, plait.ErrUnknownHandler)
	require.EqualError(t, err, `plait: workflow "pay" task "c": unknown handler "chrage": this process has not registered it (see WithRemoteHandlers); nearest: "charge"`)
}
