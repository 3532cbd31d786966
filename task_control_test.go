package plait_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// controlSetup builds a scheduler straight on a fresh store (the bundle's
// call counter passes only the capabilities it knows through) and starts
// it; Run is stopped, and waited for, when the test ends or stop is called.
func controlSetup(t *testing.T, f storeFactory, handlers map[string]plait.HandlerFunc) (s *plait.Scheduler, clk *fakeclock.Clock, stop func()) {
	t.Helper()
	clk = fakeclock.New(epoch)
	s, err := plait.New(f.new(t, clk), plait.WithClock(clk), plait.WithWorkerID("w1"),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	for name, h := range handlers {
		require.NoError(t, s.Handle(name, h))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(t, recv(t, done))
		})
	}
	t.Cleanup(stop)
	return s, clk, stop
}

func waitControlled(t *testing.T, s *plait.Scheduler, id string) *plait.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	run, err := s.RunWait(ctx, id)
	require.NoError(t, err)
	return run
}

func TestTaskControlsAreUnsupportedWithoutTheCapability(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := plait.New(coreOnly{newMemStore(t)})
	require.NoError(t, err)
	capabilityOf := func(err error) string {
		t.Helper()
		require.ErrorIs(t, err, plait.ErrUnsupported)
		var ue *plait.UnsupportedError
		require.True(t, errors.As(err, &ue))
		return ue.Capability
	}
	for _, call := range []func(context.Context, string, string, string) (*plait.Run, error){s.TaskRunNow, s.TaskSkip, s.TaskCancel} {
		_, err := call(ctx, "1", "a", "")
		require.Equal(t, "TaskControlStore", capabilityOf(err))
	}
	require.Equal(t, "RunNoteStore", capabilityOf(s.RunNote(ctx, "1", "x")))
	_, err = s.RunDeleteMany(ctx, "1")
	require.Equal(t, "RunDeleteManyStore", capabilityOf(err))
}

// A task delayed by an hour runs at once when run now, with no clock moved.
func TestTaskRunNowRunsADelayedTask(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		ran := make(chan string, 1)
		s, _, _ := controlSetup(t, f, map[string]plait.HandlerFunc{"h": func(ctx context.Context, task *plait.Task) (any, error) {
			ran <- task.Name
			return nil, nil
		}})
		ctx := context.Background()
		run, err := s.Submit(ctx, plait.NewWorkflow("wf").Task("a", "h", nil, plait.Delay(time.Hour)))
		require.NoError(t, err)
		got, err := s.TaskRunNow(ctx, run.ID, "a", "customer waiting")
		require.NoError(t, err)
		require.Equal(t, plait.TaskReady, got.Task("a").Status)
		require.Equal(t, "a", recv(t, ran))
		end := waitControlled(t, s, run.ID)
		require.Equal(t, plait.RunCompleted, end.Status)

		_, err = s.TaskRunNow(ctx, run.ID, "a", "")
		var ce *plait.TaskControlError
		require.ErrorAs(t, err, &ce, "a finished task is not run again")
		require.Equal(t, plait.TaskSucceeded, ce.Status)
		require.ErrorIs(t, err, plait.ErrInvalidArgument)
		_, err = s.TaskSkip(ctx, run.ID, "zz", "")
		require.ErrorIs(t, err, plait.ErrNotFound)
		_, err = s.TaskCancel(ctx, "", "a", "")
		require.ErrorIs(t, err, plait.ErrInvalidArgument)
	})
}

// A skipped task releases its children by their conditions; a cancelled
// running task's attempt is fenced: what its handler returns afterwards
// changes nothing.
func TestTaskSkipAndTaskCancel(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		entered := make(chan struct{}, 1)
		release := make(chan struct{})
		s, _, stop := controlSetup(t, f, map[string]plait.HandlerFunc{
			"slow": func(ctx context.Context, task *plait.Task) (any, error) {
				entered <- struct{}{}
				<-release
				return "late", nil
			},
			"h": noop,
		})
		ctx := context.Background()

		// skip: b waits on a, which is delayed; c runs after a whatever it became
		skipped, err := s.Submit(ctx, plait.NewWorkflow("skip").
			Task("a", "h", nil, plait.Delay(time.Hour)).
			Task("b", "h", nil, plait.After("a")).
			Task("c", "h", nil, plait.AfterCompletion("a")))
		require.NoError(t, err)
		got, err := s.TaskSkip(ctx, skipped.ID, "a", "not needed today")
		require.NoError(t, err)
		require.Equal(t, plait.TaskSkipped, got.Task("a").Status)
		require.Equal(t, "not needed today", got.Task("a").Error)
		require.Equal(t, plait.TaskSkipped, got.Task("b").Status)
		end := waitControlled(t, s, skipped.ID)
		require.Equal(t, plait.RunCompleted, end.Status)
		require.Equal(t, plait.TaskSucceeded, end.Task("c").Status)

		// cancel: a is running
		cancelled, err := s.Submit(ctx, plait.NewWorkflow("cancel").
			Task("a", "slow", nil).
			Task("b", "h", nil, plait.After("a")))
		require.NoError(t, err)
		recv(t, entered)
		got, err = s.TaskCancel(ctx, cancelled.ID, "a", "wrong input")
		require.NoError(t, err)
		require.Equal(t, plait.TaskCancelled, got.Task("a").Status)
		require.Equal(t, plait.TaskSkipped, got.Task("b").Status)
		require.Equal(t, plait.RunCompleted, got.Status)
		close(release)
		stop() // Run returns once the handler's outcome was sent
		after, err := s.RunGet(ctx, cancelled.ID)
		require.NoError(t, err)
		require.Equal(t, plait.TaskCancelled, after.Task("a").Status, "the fenced attempt's success changes nothing")
		require.Equal(t, "wrong input", after.Task("a").Error)
		require.Equal(t, 1, after.Cancelled)
	})
}

// A note is one run_note event of the run, read back through Subscribe.
func TestRunNoteIsInTheRunsHistory(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		s, _, _ := controlSetup(t, f, map[string]plait.HandlerFunc{"h": noop})
		ctx, cancel := context.WithTimeout(context.Background(), failAfter)
		defer cancel()
		run, err := s.Submit(ctx, plait.NewWorkflow("wf").Task("a", "h", nil))
		require.NoError(t, err)
		waitControlled(t, s, run.ID)
		require.NoError(t, s.RunNote(ctx, run.ID, "replayed by ops: disk was full"))
		sub, err := s.Subscribe(ctx, &plait.SubscribeFilter{RunID: run.ID, Types: []plait.StoreEventType{plait.EventRunNote}})
		require.NoError(t, err)
		ev, err := sub.Next(ctx)
		require.NoError(t, err)
		require.Equal(t, plait.EventRunNote, ev.Type)
		require.Equal(t, "replayed by ops: disk was full", ev.Note)
		require.Equal(t, run.ID, ev.RunID)

		require.ErrorIs(t, s.RunNote(ctx, "999999", "x"), plait.ErrNotFound)
		require.ErrorIs(t, s.RunNote(ctx, run.ID, ""), plait.ErrInvalidArgument)
		require.ErrorIs(t, s.RunNote(ctx, run.ID, string(make([]byte, store.RunNoteTextMax+1))), plait.ErrInvalidArgument)
	})
}

// RunDeleteMany answers one error per id, in order.
func TestRunDeleteManyAnswersPerID(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		s, _, _ := controlSetup(t, f, map[string]plait.HandlerFunc{"h": noop})
		ctx := context.Background()
		var done []string
		for range 3 {
			run, err := s.Submit(ctx, plait.NewWorkflow("wf").Task("a", "h", nil), plait.ForTenant("acme"))
			require.NoError(t, err)
			waitControlled(t, s, run.ID)
			done = append(done, run.ID)
		}
		active, err := s.Submit(ctx, plait.NewWorkflow("wf").Task("a", "h", nil, plait.Delay(time.Hour)))
		require.NoError(t, err)

		errs, err := s.RunDeleteMany(ctx, done[0], active.ID, "no-such-run", done[1], done[2])
		require.NoError(t, err)
		require.Len(t, errs, 5)
		require.NoError(t, errs[0])
		require.ErrorIs(t, errs[1], plait.ErrRunActive)
		require.ErrorIs(t, errs[2], plait.ErrNotFound)
		require.NoError(t, errs[3])
		require.NoError(t, errs[4])
		for _, id := range done {
			_, err := s.RunGet(ctx, id)
			require.ErrorIs(t, err, plait.ErrNotFound)
		}
		_, err = s.RunGet(ctx, active.ID)
		require.NoError(t, err)

		errs, err = s.RunDeleteMany(ctx)
		require.NoError(t, err)
		require.Empty(t, errs)
		_, err = s.RunDeleteMany(ctx, make([]string, store.GetManyMax+1)...)
		require.ErrorIs(t, err, plait.ErrInvalidArgument)
	})
}
