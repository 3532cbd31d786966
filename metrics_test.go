package plait_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

// hookLog records every metrics hook call as a line, and lets a test wait
// for one.
type hookLog struct {
	mu    sync.Mutex
	lines []string
	wake  chan struct{}
}

func (h *hookLog) add(format string, args ...any) {
	h.mu.Lock()
	h.lines = append(h.lines, fmt.Sprintf(format, args...))
	if h.wake != nil {
		close(h.wake)
		h.wake = nil
	}
	h.mu.Unlock()
}

func (h *hookLog) TaskStarted(l plait.TaskLabels) {
	h.add("started %s/%s/%s/%s", l.Workflow, l.Task, l.Handler, l.Queue)
}

func (h *hookLog) TaskFinished(l plait.TaskLabels, o plait.Outcome, d time.Duration) {
	h.add("finished %s/%s %s", l.Workflow, l.Task, o)
}

func (h *hookLog) TaskRetried(l plait.TaskLabels, delay time.Duration) {
	h.add("retried %s/%s in %s", l.Workflow, l.Task, delay)
}

func (h *hookLog) TaskDead(l plait.Lease) { h.add("dead %s", l.Task) }

func (h *hookLog) LeaseLost(l plait.TaskLabels) { h.add("lease lost %s/%s", l.Workflow, l.Task) }

func (h *hookLog) QueueDepth(q string, ready, delayed int) {
	h.add("depth %s ready=%d delayed=%d", q, ready, delayed)
}

// waitFor blocks until a line equal to want was recorded.
func (h *hookLog) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(failAfter)
	for {
		h.mu.Lock()
		for _, l := range h.lines {
			if l == want {
				h.mu.Unlock()
				return
			}
		}
		if h.wake == nil {
			h.wake = make(chan struct{})
		}
		ch := h.wake
		h.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("hook %q not called; have:\n%s", want, h.String())
		}
	}
}

func (h *hookLog) count(prefix string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, l := range h.lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

func (h *hookLog) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.lines, "\n")
}

// TestMetricsHooks runs a success, a permanent failure and a task that is
// retried once, and expects one hook call for each thing that happened,
// with the task's labels.
func TestMetricsHooks(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		hooks := &hookLog{}
		b := setup(t, f, plait.WithMetrics(hooks))
		b.handle(t, "ok", noop)
		b.handle(t, "bad", func(ctx context.Context, task *plait.Task) (any, error) {
			return nil, plait.Permanent(errors.New("no"))
		})
		b.handle(t, "flaky", func(ctx context.Context, task *plait.Task) (any, error) {
			if task.Attempt == 1 {
				return nil, errors.New("not yet")
			}
			return nil, nil
		})
		policy := plait.ConstantBackoff(time.Second)
		policy.Jitter = -1
		run := b.submit(t, plait.NewWorkflow("m").
			Task("a", "ok", nil).
			Task("b", "bad", nil).
			Task("c", "flaky", nil, plait.Retry(1), plait.Backoff(policy)))
		b.start(t)
		b.events.waitFor(t, 1, is(plait.EventTaskRetrying, "c"))
		b.advanceAfterArmed(t, time.Second)
		b.wait(t, run.ID)
		for _, want := range []string{
			"started m/a/ok/default", "finished m/a succeeded",
			"started m/b/bad/default", "finished m/b failed",
			"started m/c/flaky/default", "retried m/c in 1s", "finished m/c retry", "finished m/c succeeded",
		} {
			hooks.waitFor(t, want)
		}
		require.Equal(t, 4, hooks.count("started "), hooks.String())
		require.Equal(t, 4, hooks.count("finished "), hooks.String())
		require.Equal(t, 1, hooks.count("retried "), hooks.String())
	})
}

// TestMetricsLeaseLost: a handler whose run is cancelled under it loses its
// lease, and the hook says so.
func TestMetricsLeaseLost(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		hooks := &hookLog{}
		b := setup(t, f, plait.WithMetrics(hooks))
		entered, causes := make(chan struct{}, 1), make(chan error, 1)
		b.handle(t, "block", blockUntilCancelled(entered, causes))
		run := b.submit(t, plait.NewWorkflow("m").Task("x", "block", nil))
		b.start(t)
		recv(t, entered)
		_, err := b.s.RunCancel(context.Background(), run.ID)
		require.NoError(t, err)
		require.ErrorIs(t, recv(t, causes), plait.ErrRunCancelled)
		hooks.waitFor(t, "lease lost m/x")
		require.Zero(t, hooks.count("finished "), hooks.String())
	})
}

// TestMetricsDeadAndRunEnded: the sweep reports a task dead past the
// crash limit and, with run hooks, the end of the run it failed; a worker
// that is not the schedule leader samples no queue depth.
func TestMetricsDeadAndRunEnded(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		log := &hookLog{}
		hooks := runHooks{log}
		b := setup(t, f, plait.WithMetrics(hooks), plait.WithCrashLimit(0),
			plait.WithLeaseDuration(9*time.Second), plait.WithSweepInterval(2*time.Second))
		b.handle(t, "work", noop)
		b.submit(t, plait.NewWorkflow("crash").Task("x", "work", nil))
		// The run of "wide" goes on past its dead task: the sweep did not
		// end it, and tells no end.
		b.submit(t, plait.NewWorkflow("wide").Task("x", "work", nil).Task("y", "work", nil, plait.Delay(time.Hour)))
		// A worker that claims and then dies.
		claimed, err := b.store.TaskClaim(context.Background(), &store.TaskClaimParams{WorkerID: "dead", Limit: 2, LeaseDuration: 9 * time.Second})
		require.NoError(t, err)
		require.Len(t, claimed.Tasks, 2)
		b.submit(t, plait.NewWorkflow("later").Task("y", "work", nil, plait.Delay(time.Hour)))
		b.start(t)
		b.advanceAfterArmed(t, 2*time.Second)
		b.events.waitFor(t, 1, is(plait.EventLeasesSwept, ""))
		for swept := 2; b.clock.Now().Before(epoch.Add(10 * time.Second)); swept++ {
			b.advanceAfterArmed(t, 2*time.Second)
			b.events.waitFor(t, swept, is(plait.EventLeasesSwept, ""))
		}
		log.waitFor(t, "dead x")
		log.waitFor(t, "run ended crash/ failed")
		b.events.waitFor(t, 1, func(e plait.Event) bool { return e.Type == plait.EventLeasesSwept && e.Count == 2 })
		require.Equal(t, 2, log.count("dead x"), log.String())
		require.Equal(t, 1, log.count("run ended "), log.String())
		require.Zero(t, log.count("depth "), "only the schedule leader samples queue depth; this store has none:\n%s", log.String())
	})
}
