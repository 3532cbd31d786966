package plait_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

// countingHandler counts the log records whose message contains a text.
type countingHandler struct {
	slog.Handler
	text string
	n    *atomic.Int32
}

func (h countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.text) {
		h.n.Add(1)
	}
	return nil
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }

// joinOn builds a second scheduler on the store and clock of b, as another
// process of the same deployment.
func joinOn(t *testing.T, b *bundle, workerID string, opts ...plait.Option) *bundle {
	t.Helper()
	rec := &recorder{}
	base := []plait.Option{
		plait.WithClock(b.clock),
		plait.WithObserver(rec.add),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		plait.WithWorkerID(workerID),
	}
	calls := &callCounter{Store: b.store}
	s, err := plait.New(calls, append(base, opts...)...)
	require.NoError(t, err)
	return &bundle{clock: b.clock, store: b.store, s: s, events: rec, calls: calls}
}

// TestRollingDeployHandsTaskToTheProcessWithItsHandler claims a task in a
// process that lacks its handler: the task goes back unstarted, and runs
// on a process started later that has it, without a failure or an attempt
// record from the first.
func TestRollingDeployHandsTaskToTheProcessWithItsHandler(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		old := setup(t, f, plait.WithRemoteHandlers(), plait.WithWorkerID("old"))
		old.handle(t, "noop", noop)
		old.start(t)
		run := old.submit(t, plait.NewWorkflow("deploy").Task("x", "v2", nil, plait.Retry(0)))
		ev := old.events.waitFor(t, 1, is(plait.EventTaskReleased, "x"))
		require.NoError(t, ev.Err, "a task handed back unstarted carries no error")
		got, err := old.s.RunGet(context.Background(), run.ID)
		require.NoError(t, err)
		x := got.Task("x")
		require.Equal(t, plait.TaskReady, x.Status, "a task without its handler here must go back to ready")
		require.Empty(t, x.Attempts, "a task handed back must leave no attempt record")
		require.Zero(t, x.Crashes)
		require.Zero(t, old.events.count(is(plait.EventTaskStarted, "x")), "no handler started")

		upgraded := joinOn(t, old, "new")
		upgraded.handle(t, "v2", func(ctx context.Context, task *plait.Task) (any, error) { return "v2", nil })
		upgraded.start(t)
		final := upgraded.wait(t, run.ID)
		x = final.Task("x")
		require.Equal(t, plait.RunCompleted, final.Status)
		require.Equal(t, plait.TaskSucceeded, x.Status)
		require.Len(t, x.Attempts, 1, "only the process with the handler records an attempt")
		require.Equal(t, "new", x.Attempts[0].Worker)
		require.Equal(t, 1, x.Attempt)
		require.Zero(t, x.Crashes)
		for _, b := range []*bundle{old, upgraded} {
			require.Zero(t, b.events.count(is(plait.EventTaskFailed, "")), "no process may fail the task")
		}
	})
}

// TestTaskNoProcessCanRunStaysReady runs only a process without the task's
// handler: it hands the task back each time it claims it, pausing between
// claims, logs that once, and the task waits as ready with no attempt.
func TestTaskNoProcessCanRunStaysReady(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		var logged atomic.Int32
		logger := slog.New(countingHandler{Handler: slog.NewTextHandler(io.Discard, nil), text: "no handler registered", n: &logged})
		b := setup(t, f, plait.WithRemoteHandlers(), plait.WithLogger(logger))
		b.start(t)
		run := b.submit(t, plait.NewWorkflow("orphan").Task("x", "v2", nil))
		const rounds = 5
		for i := 1; i <= rounds; i++ {
			b.events.waitFor(t, i, is(plait.EventTaskReleased, "x"))
			// The pause before the next claim is armed before the release
			// is written, so it is armed by now.
			b.advanceAfterArmed(t, plait.IdleWaitDefault)
		}
		b.events.waitFor(t, rounds+1, is(plait.EventTaskReleased, "x"))
		got, err := b.s.RunGet(context.Background(), run.ID)
		require.NoError(t, err)
		x := got.Task("x")
		// Ready, or for a moment held by a claim that crossed the pause and
		// is about to hand it back; never started, failed or charged.
		require.Contains(t, []plait.TaskStatus{plait.TaskReady, plait.TaskRunning}, x.Status, "a task no process can run must wait as ready")
		require.Empty(t, x.Attempts)
		require.Zero(t, x.Attempt)
		require.Zero(t, x.Crashes)
		require.Equal(t, plait.RunRunning, got.Status)
		// One claim per pause: a process has two drive loops, and a claim
		// the other loop sent before a pause began (the one that may hold
		// the task above) hands the task back once more in that pause. A
		// spin would claim without bound.
		released := b.events.count(is(plait.EventTaskReleased, "x"))
		require.GreaterOrEqual(t, released, rounds+1)
		require.LessOrEqual(t, released, 2*(rounds+1), "one claim per pause and drive loop, no spinning")
		require.Zero(t, b.events.count(is(plait.EventTaskStarted, "x")))
		require.Zero(t, b.events.count(is(plait.EventTaskFailed, "")))
		require.Equal(t, int32(1), logged.Load(), "the missing handler must be logged once")
	})
}
