package plait_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

// fleetReads is a memstore that counts the reads of the fleet: the paused
// queues and the live nodes.
type fleetReads struct {
	*memstore.Store
	paused, nodes atomic.Int64
}

func (f *fleetReads) QueueListPaused(ctx context.Context, p *store.QueueListPausedParams) (*store.QueueListPausedResult, error) {
	f.paused.Add(1)
	return f.Store.QueueListPaused(ctx, p)
}

func (f *fleetReads) NodeList(ctx context.Context, p *store.NodeListParams) (*store.NodeListResult, error) {
	f.nodes.Add(1)
	return f.Store.NodeList(ctx, p)
}

// fleetDown is a memstore whose live nodes cannot be read.
type fleetDown struct{ *memstore.Store }

func (fleetDown) NodeList(context.Context, *store.NodeListParams) (*store.NodeListResult, error) {
	return nil, errors.New("node registry unreachable")
}

// reads answers the fleet reads since the last call.
func (f *fleetReads) reads() (paused, nodes int64) { return f.paused.Swap(0), f.nodes.Swap(0) }

// waitingFor reads run id and answers each task's WaitingFor by name.
func waitingFor(t *testing.T, s *plait.Scheduler, id string) map[string]string {
	t.Helper()
	r, err := s.RunGet(context.Background(), id)
	require.NoError(t, err)
	out := map[string]string{}
	for _, ti := range r.Tasks {
		out[ti.Name] = ti.WaitingFor
	}
	return out
}

// TestWaitingForNamesWhatTheFleetHoldsBack: a ready task the store says
// nothing about is read with what the fleet holds it back by: its queue
// paused, its queue served by no live node (a typo), its handler on no
// live node serving its queue; computed when read, from the node records
// the heartbeats keep on the store's clock, so a node whose heartbeats
// stop stops counting once its record expires, and a fleet with no node
// record is not flagged. RunGet, RunGetMany, RunList and TaskList read the
// fleet at most once per call, and only when a ready task is unexplained.
func TestWaitingForNamesWhatTheFleetHoldsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fakeclock.New(epoch)
	st := &fleetReads{Store: newMemStore(t, memstore.WithClock(clk))}
	s, err := plait.New(st, plait.WithClock(clk), plait.WithRemoteHandlers(), plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	wf := plait.NewWorkflow("orders").
		Task("mail", "send", nil, plait.OnQueue("mail")).
		Task("typo", "send", nil, plait.OnQueue("emial")).
		Task("resize", "resize", nil).
		Task("fine", "send", nil).
		Task("later", "send", nil, plait.After("fine"))
	r, err := s.Submit(ctx, wf)
	require.NoError(t, err)
	st.reads()

	none := map[string]string{"mail": "", "typo": "", "resize": "", "fine": "", "later": ""}
	require.Equal(t, none, waitingFor(t, s, r.ID), "no node record: nothing is known of what is served")
	paused, nodes := st.reads()
	require.Equal(t, [2]int64{1, 1}, [2]int64{paused, nodes}, "the fleet is read once")

	require.NoError(t, s.QueuePause(ctx, "mail"))
	st.reads()
	require.Equal(t, "queue mail paused", waitingFor(t, s, r.ID)["mail"], "a paused queue is named with no node live")

	const ttl = 10 * time.Second
	beat := func(id string, queues, handlers []string) {
		t.Helper()
		_, err := st.NodeHeartbeat(ctx, &store.NodeHeartbeatParams{
			Node: store.NodeInfo{ID: id, Name: id, Queues: queues, Handlers: handlers}, TTL: ttl, HistoryLimit: 1})
		require.NoError(t, err)
	}
	beat("w1.00000001", []string{plait.DefaultQueue, "mail"}, []string{"send"})
	want := map[string]string{
		"mail":   store.WaitingForQueuePaused("mail"),
		"typo":   store.WaitingForQueueNotServed("emial"),
		"resize": store.WaitingForHandler("resize"),
		"fine":   "",
		"later":  "",
	}
	require.Equal(t, "queue emial not served", want["typo"])
	require.Equal(t, want, waitingFor(t, s, r.ID), "paused, not served, no handler; a served task and a pending one name nothing")

	tasks, err := s.TaskList(ctx, r.ID, plait.TaskReady)
	require.NoError(t, err)
	require.Len(t, tasks, 4)
	for _, ti := range tasks {
		require.Equal(t, want[ti.Name], ti.WaitingFor, "TaskList answers as RunGet")
	}
	other, err := s.Submit(ctx, wf)
	require.NoError(t, err)
	st.reads()
	runs, err := s.RunGetMany(ctx, r.ID, other.ID, "1-nosuchrun")
	require.NoError(t, err)
	require.Equal(t, want["typo"], runs[1].Task("typo").WaitingFor)
	paused, nodes = st.reads()
	require.Equal(t, [2]int64{1, 1}, [2]int64{paused, nodes}, "RunGetMany reads the fleet once for every run")
	page, err := s.RunList(ctx, plait.RunListParams{})
	require.NoError(t, err)
	require.Len(t, page.Runs, 2)
	for _, run := range page.Runs {
		require.Equal(t, want["resize"], run.Task("resize").WaitingFor, "RunList answers as RunGet")
	}
	paused, nodes = st.reads()
	require.Equal(t, [2]int64{1, 1}, [2]int64{paused, nodes}, "RunList reads the fleet once for its page")

	// A second node brings the handler; the first one's heartbeats stop.
	clk.Advance(ttl / 2)
	beat("w2.00000002", []string{plait.DefaultQueue}, []string{"resize"})
	require.Empty(t, waitingFor(t, s, r.ID)["resize"], "a live node serving the queue has the handler")
	clk.Advance(ttl/2 + time.Millisecond)
	got := waitingFor(t, s, r.ID)
	require.Equal(t, store.WaitingForQueueNotServed("emial"), got["typo"])
	require.Empty(t, got["resize"])
	require.Equal(t, store.WaitingForHandler("send"), got["fine"], "the node with the handler expired with its last heartbeat")

	// A draining node takes nothing new.
	require.NoError(t, s.NodeDrain(ctx, "w2.00000002"))
	require.Equal(t, store.WaitingForQueueNotServed(plait.DefaultQueue), waitingFor(t, s, r.ID)["resize"])

	// Once no record is live, only the paused queue is named again.
	clk.Advance(ttl)
	got = waitingFor(t, s, r.ID)
	require.Equal(t, "queue mail paused", got["mail"])
	require.Empty(t, got["typo"])
	require.Empty(t, got["fine"])

	// A run with nothing unexplained reads no fleet.
	require.NoError(t, s.QueueResume(ctx, "mail"))
	done, err := s.Submit(ctx, plait.NewWorkflow("later").Task("a", "send", nil, plait.After("b")).Task("b", "send", nil, plait.Delay(time.Hour)))
	require.NoError(t, err)
	st.reads()
	_, err = s.RunGet(ctx, done.ID)
	require.NoError(t, err)
	paused, nodes = st.reads()
	require.Zero(t, paused+nodes, "no ready task: the fleet is not read")
}

// TestWaitingForWithoutNodeStore: on a store without NodeStore, WaitingFor
// is the store's alone.
func TestWaitingForWithoutNodeStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := plait.New(coreOnly{newMemStore(t)}, plait.WithRemoteHandlers())
	require.NoError(t, err)
	r, err := s.Submit(ctx, plait.NewWorkflow("wf").Task("a", "send", nil, plait.OnQueue("emial")))
	require.NoError(t, err)
	got, err := s.RunGet(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, plait.TaskReady, got.Tasks[0].Status)
	require.Empty(t, got.Tasks[0].WaitingFor)
	require.Equal(t, "emial", got.Tasks[0].Queue)
}

// TestWaitingForWhenTheFleetCannotBeRead: a fleet that cannot be read
// leaves WaitingFor as the store answered it, and the run is answered.
func TestWaitingForWhenTheFleetCannotBeRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var logs strings.Builder
	s, err := plait.New(fleetDown{newMemStore(t)}, plait.WithRemoteHandlers(), plait.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	r, err := s.Submit(ctx, plait.NewWorkflow("wf").Task("a", "send", nil, plait.OnQueue("emial")))
	require.NoError(t, err)
	got, err := s.RunGet(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, plait.TaskReady, got.Tasks[0].Status)
	require.Empty(t, got.Tasks[0].WaitingFor)
	require.Contains(t, logs.String(), "node registry unreachable")
}
