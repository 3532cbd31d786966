package plait_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

// progressCalls adds the ProgressStore capability to callCounter, each
// call counted as the others are and its reports handed to the test, and
// EventStore, uncounted (a Subscription's read blocks), so a test can
// follow the events.
type progressCalls struct {
	*callCounter
	sent chan []store.ProgressReport
}

func (p *progressCalls) TaskProgress(ctx context.Context, params *store.TaskProgressParams) ([]store.TaskProgressResult, error) {
	p.enter()
	defer p.leave()
	res, err := p.Store.(store.ProgressStore).TaskProgress(ctx, params)
	p.sent <- append([]store.ProgressReport(nil), params.Reports...)
	return res, err
}

func (p *progressCalls) EventRead(ctx context.Context, params *store.EventReadParams) (*store.EventReadResult, error) {
	return p.Store.(store.EventStore).EventRead(ctx, params)
}

// setupProgress is setup on memstore with the store wrapped in
// progressCalls, and a lease of 30s: the lease keeper's round, every 10s,
// is a period no other service of the scheduler shares.
func setupProgress(t *testing.T) (*bundle, *progressCalls) {
	t.Helper()
	clk := fakeclock.New(epoch)
	mem := newMemStore(t, memstore.WithClock(clk))
	rec := &recorder{}
	calls := &callCounter{Store: mem}
	spy := &progressCalls{callCounter: calls, sent: make(chan []store.ProgressReport, 16)}
	s, err := plait.New(spy, plait.WithClock(clk), plait.WithObserver(rec.add), plait.WithWorkerID("w1"),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), plait.WithLeaseDuration(30*time.Second))
	require.NoError(t, err)
	return &bundle{clock: clk, store: mem, s: s, events: rec, calls: calls}, spy
}

func TestTaskProgressOneWritePerRound(t *testing.T) {
	t.Parallel()
	b, spy := setupProgress(t)
	reported, next, again, release := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	invalid := make(chan error, 2)
	b.handle(t, "long", func(ctx context.Context, task *plait.Task) (any, error) {
		for i := 1; i <= 100; i++ {
			require.NoError(t, task.Progress(float64(i)/100, fmt.Sprintf("step %d", i)))
		}
		invalid <- task.Progress(math.NaN(), "")
		invalid <- task.Progress(1, strings.Repeat("x", store.TaskProgressNoteMax+1))
		close(reported)
		<-next
		require.NoError(t, task.Progress(1.5, "more"))
		require.NoError(t, task.Progress(2, "nearly"))
		close(again)
		<-release
		require.NoError(t, task.Progress(3, "done"))
		return nil, nil
	})
	run := b.submit(t, plait.NewWorkflow("progress").Task("a", "long", nil))
	sub, err := b.s.Subscribe(context.Background(), &plait.SubscribeFilter{RunID: run.ID, Types: []plait.StoreEventType{plait.EventTaskProgress}})
	require.NoError(t, err)
	b.start(t)
	recv(t, reported)
	require.ErrorIs(t, recv(t, invalid), plait.ErrInvalidArgument, "a value that is not finite is refused")
	require.ErrorIs(t, recv(t, invalid), plait.ErrInvalidArgument, "a note too long is refused")
	select {
	case reps := <-spy.sent:
		t.Fatalf("a report was written before the lease keeper's round: %v", reps)
	default:
	}

	b.advanceAfterArmed(t, 10*time.Second)
	reps := recv(t, spy.sent)
	require.Len(t, reps, 1, "a hundred reports make one write of the latest")
	require.Equal(t, [...]any{0.99 + 0.01, "step 100"}, [...]any{reps[0].Value, reps[0].Note})
	b.calls.waitIdle(t)
	ti := taskNamed(t, b, run.ID, "a")
	require.NotNil(t, ti.Progress, "the report is readable while the task runs")
	require.Equal(t, [...]any{1.0, "step 100", 1}, [...]any{ti.Progress.Value, ti.Progress.Note, ti.Progress.Attempt})
	require.True(t, ti.Progress.At.Equal(b.clock.Now()), "the report is stored at the round")

	close(next)
	recv(t, again)
	b.advanceAfterArmed(t, 10*time.Second)
	reps = recv(t, spy.sent)
	require.Len(t, reps, 1)
	require.Equal(t, [...]any{2.0, "nearly"}, [...]any{reps[0].Value, reps[0].Note}, "the round writes only the latest of its reports")

	close(release)
	reps = recv(t, spy.sent)
	require.Equal(t, [...]any{3.0, "done"}, [...]any{reps[0].Value, reps[0].Note}, "the attempt's end writes its last report before its outcome")
	end := b.wait(t, run.ID)
	ta := end.Task("a")
	require.Equal(t, [...]any{3.0, "done"}, [...]any{ta.Progress.Value, ta.Progress.Note})
	require.Len(t, ta.Attempts, 1)
	require.Equal(t, "done", ta.Attempts[0].Progress.Note, "the attempt record keeps its last report")
	b.stop()
	select {
	case reps := <-spy.sent:
		t.Fatalf("three writes for three rounds with reports, and no more: got %v", reps)
	default:
	}

	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	var notes []string
	for len(notes) < 3 {
		ev, err := sub.Next(ctx)
		require.NoError(t, err)
		require.Equal(t, plait.EventTaskProgress, ev.Type)
		require.Equal(t, plait.TaskRunning, ev.TaskStatus)
		require.NotNil(t, ev.Progress)
		notes = append(notes, fmt.Sprintf("%s=%g", ev.Progress.Note, ev.Progress.Value))
	}
	require.Equal(t, []string{"step 100=1", "nearly=2", "done=3"}, notes, "one event per report stored")
}

// taskNamed reads one task through the Scheduler's TaskList.
func taskNamed(t *testing.T, b *bundle, runID, name string) plait.TaskInstance {
	t.Helper()
	tasks, err := b.s.TaskList(context.Background(), runID)
	require.NoError(t, err)
	for _, ti := range tasks {
		if ti.Name == name {
			return ti
		}
	}
	t.Fatalf("run %s has no task %s", runID, name)
	return plait.TaskInstance{}
}

func TestTaskProgressWithoutTheCapability(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	f := storeFactory{name: "core only", new: func(t *testing.T, clk *fakeclock.Clock) store.Store {
		return coreOnly{newMemStore(t, memstore.WithClock(clk))}
	}}
	b := setup(t, f, plait.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	b.handle(t, "long", func(ctx context.Context, task *plait.Task) (any, error) {
		for i := 0; i < 10; i++ {
			if err := task.Progress(float64(i), "step"); err != nil {
				return nil, err
			}
		}
		if err := task.Progress(math.Inf(-1), "still checked"); err != nil {
			return nil, plait.Permanent(err)
		}
		return nil, nil
	})
	run := b.submit(t, plait.NewWorkflow("progress").Task("a", "long", nil).Task("b", "long", nil))
	b.start(t)
	end := b.wait(t, run.ID)
	require.Equal(t, plait.RunFailed, end.Status, "an invalid value is an error even where reports are dropped")
	require.Contains(t, end.Task("a").Error, "not a finite number")
	require.Nil(t, end.Task("a").Progress)
	require.Equal(t, 1, strings.Count(logs.String(), "keeps no task progress"), "said once, at debug level")
}

func TestTaskProgressOnATaskBuiltByHand(t *testing.T) {
	t.Parallel()
	task := &plait.Task{Name: "a"}
	require.NoError(t, task.Progress(0.5, "half"))
	require.ErrorIs(t, task.Progress(math.NaN(), ""), plait.ErrInvalidArgument)
}
