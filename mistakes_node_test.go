package plait_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

// TestNodeNotFoundNamesTheNodesThatLookAlike: NodeDrain and NodeGet of an
// id no live node has still match ErrNotFound, and name the live nodes
// whose id looks like it (the worker id alone, another case, a part of
// the id, the id of the same worker's earlier life), or say how node ids
// are made when none does. On every backend.
func TestNodeNotFoundNamesTheNodesThatLookAlike(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		ctx := context.Background()
		b := setupNodes(t, f)
		err := b.other.NodeDrain(ctx, "w1")
		require.ErrorIs(t, err, plait.ErrNotFound)
		require.True(t, strings.HasSuffix(err.Error(), `: not found; no node is live`), err.Error())

		b.run(t)
		b.events.waitFor(t, 1, is(plait.EventNodeHeartbeat, ""))
		id := b.s.NodeID()
		random := id[len("w1."):]
		for _, asked := range []string{"w1", "W1", random[:5], strings.ToUpper(id), "w1.00000000", "w1.0000000"} {
			for call, err := range map[string]error{
				"NodeDrain": b.other.NodeDrain(ctx, asked),
				"NodeGet":   func() error { _, err := b.other.NodeGet(ctx, asked); return err }(),
			} {
				require.ErrorIs(t, err, plait.ErrNotFound, "%s(%q)", call, asked)
				require.True(t, strings.HasSuffix(err.Error(), fmt.Sprintf(": not found; live nodes like it: %q", id)),
					"%s(%q): %v", call, asked, err)
			}
		}
		err = b.other.NodeDrain(ctx, "nobody")
		require.ErrorIs(t, err, plait.ErrNotFound)
		require.True(t, strings.HasSuffix(err.Error(), fmt.Sprintf(`: not found; no live node looks like it: a node id is a worker id and a random part, as in %q`, id)), err.Error())
		_, err = b.other.NodeGet(ctx, id)
		require.NoError(t, err, "the node's own id finds it")
	})
}

// syncLog is a log sink the tests read while the scheduler writes.
type syncLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestQueuePauseOfAQueueNoNodeServes: pausing a queue no live node serves
// is accepted (its workers may not be deployed yet), and logged once as a
// warning that names the queues the live nodes serve. On every backend.
func TestQueuePauseOfAQueueNoNodeServes(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		ctx := context.Background()
		b := setupNodes(t, f, plait.WithQueues(plait.DefaultQueue, "mail"))
		logs := &syncLog{}
		admin, err := plait.New(b.store, plait.WithClock(b.clock), plait.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
		require.NoError(t, err)
		require.NoError(t, admin.QueuePause(ctx, "early"), "a queue is paused before any node runs")
		require.Contains(t, logs.String(), `queue="\"early\"" served="none: no node is live"`)

		b.run(t)
		b.events.waitFor(t, 1, is(plait.EventNodeHeartbeat, ""))
		require.NoError(t, admin.QueuePause(ctx, "emial"), "a queue no node serves is paused all the same")
		require.NoError(t, admin.QueuePause(ctx, "emial"))
		require.NoError(t, admin.QueuePause(ctx, "mail"))
		require.NoError(t, admin.QueueResume(ctx, "ghost"))
		paused, err := admin.QueueListPaused(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"early", "emial", "mail"}, paused)
		out := logs.String()
		require.Equal(t, 1, strings.Count(out, `queue="\"emial\""`), "warned once: %s", out)
		require.Contains(t, out, `level=WARN msg="plait: QueuePause: no live node serves this queue (a typo?); it is paused all the same" queue="\"emial\"" served="\"default\", \"mail\""`)
		require.NotContains(t, out, `"\"mail\"" served`, "a queue a node serves is paused in silence")
		require.NotContains(t, out, "ghost", "a resume is not warned about")
	})
}
