package plait_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

// appendSpy is a store whose task log appends are reported on a channel,
// for tests that wait for a flush.
type appendSpy struct {
	store.Store
	appended chan *store.TaskLogAppendResult
}

func (a *appendSpy) TaskLogAppend(ctx context.Context, p *store.TaskLogAppendParams) (*store.TaskLogAppendResult, error) {
	res, err := a.Store.(store.TaskLogStore).TaskLogAppend(ctx, p)
	a.appended <- res
	return res, err
}

func (a *appendSpy) TaskLogRead(ctx context.Context, p *store.TaskLogReadParams) (*plait.TaskLogReadResult, error) {
	return a.Store.(store.TaskLogStore).TaskLogRead(ctx, p)
}

func TestTaskLoggerStoresLinesWithTheAttempt(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		b.handle(t, "talk", func(ctx context.Context, task *plait.Task) (any, error) {
			log := task.Logger()
			log.Debug("not stored")
			log.Info("fetching", "url", "http://127.0.0.1/x")
			log.With("step", 2).WithGroup("db").Warn("slow", "ms", 250)
			if task.Attempt == 1 {
				return nil, errors.New("try again")
			}
			log.Error("second go")
			return nil, nil
		})
		policy := plait.ConstantBackoff(10 * time.Second)
		policy.Jitter = -1
		run := b.submit(t, plait.NewWorkflow("logs").Task("a", "talk", nil, plait.Retry(2), plait.Backoff(policy)))
		b.start(t)
		b.events.waitFor(t, 1, is(plait.EventTaskRetrying, "a"))
		b.advanceAfterArmed(t, 10*time.Second)
		b.wait(t, run.ID)

		all, err := b.s.TaskLogRead(context.Background(), run.ID, "a", 0)
		require.NoError(t, err)
		var got []string
		for _, l := range all.Lines {
			got = append(got, l.Level.String()+" "+l.Text)
		}
		require.Equal(t, []string{
			"INFO fetching url=http://127.0.0.1/x", "WARN slow step=2 db.ms=250",
			"INFO fetching url=http://127.0.0.1/x", "WARN slow step=2 db.ms=250", "ERROR second go",
		}, got)
		require.Equal(t, 1, all.Lines[0].Attempt)
		require.Equal(t, 2, all.Lines[4].Attempt)
		require.Greater(t, all.Lines[4].Epoch, all.Lines[0].Epoch)
		second, err := b.s.TaskLogRead(context.Background(), run.ID, "a", 2)
		require.NoError(t, err)
		require.Len(t, second.Lines, 3)
		require.Zero(t, second.Dropped)

		_, err = b.s.TaskLogRead(context.Background(), run.ID, "", 0)
		require.ErrorIs(t, err, plait.ErrInvalidArgument)
	})
}

func TestTaskLoggerFlushesPeriodically(t *testing.T) {
	t.Parallel()
	spy := &appendSpy{appended: make(chan *store.TaskLogAppendResult, 16)}
	f := storeFactory{name: "memstore", new: func(t *testing.T, clk *fakeclock.Clock) store.Store {
		spy.Store = newMemStore(t, memstore.WithClock(clk), memstore.WithTaskLogLimit(2, 1<<10))
		return spy
	}}
	b := setup(t, f, plait.WithTaskLogFlush(5*time.Second))
	logged, release := make(chan struct{}), make(chan struct{})
	b.handle(t, "talk", func(ctx context.Context, task *plait.Task) (any, error) {
		task.Logger().Info("one")
		task.Logger().Info("two")
		close(logged)
		<-release
		task.Logger().Info("three: over the cap")
		return nil, nil
	})
	run := b.submit(t, plait.NewWorkflow("logs").Task("a", "talk", nil))
	b.start(t)
	recv(t, logged)
	b.advanceAfterArmed(t, 5*time.Second)
	res := recv(t, spy.appended)
	require.Equal(t, store.TaskLogAppendResult{Stored: 2}, *res, "both lines go in one append, while the attempt runs")
	mid, err := b.s.TaskLogRead(context.Background(), run.ID, "a", 0)
	require.NoError(t, err)
	require.Len(t, mid.Lines, 2)
	close(release)
	res = recv(t, spy.appended)
	require.Equal(t, store.TaskLogAppendResult{Dropped: 1}, *res, "the attempt's end flushes the rest")
	b.wait(t, run.ID)
	end, err := b.s.TaskLogRead(context.Background(), run.ID, "a", 0)
	require.NoError(t, err)
	require.Len(t, end.Lines, 2)
	require.Equal(t, 1, end.Dropped, "the cap is reported, not silent")
}

func TestSchedulerAnswersUnsupportedTaskLogs(t *testing.T) {
	t.Parallel()
	s, err := plait.New(coreOnly{newMemStore(t)})
	require.NoError(t, err)
	_, err = s.TaskLogRead(context.Background(), "1-a", "x", 0)
	var ue *plait.UnsupportedError
	require.True(t, errors.As(err, &ue))
	require.Equal(t, "TaskLogStore", ue.Capability)
}

func TestTaskLoggerWithoutTheCapabilityOnlyLogs(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	b := setup(t, storeFactory{name: "core", new: func(t *testing.T, clk *fakeclock.Clock) store.Store {
		return coreOnly{newMemStore(t, memstore.WithClock(clk))}
	}}, plait.WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	b.handle(t, "talk", func(ctx context.Context, task *plait.Task) (any, error) {
		task.Logger().Info("to the scheduler's logger")
		return nil, nil
	})
	run := b.submit(t, plait.NewWorkflow("logs").Task("a", "talk", nil))
	b.start(t)
	b.wait(t, run.ID)
	out := buf.String()
	require.Contains(t, out, `msg="to the scheduler's logger"`)
	require.Contains(t, out, "task=a attempt=1 epoch=1")
	require.NotContains(t, out, "not stored", "a store without the capability loses nothing it was asked to keep")
}

// syncBuffer is a bytes.Buffer safe for the logger's writes and the
// test's read.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
