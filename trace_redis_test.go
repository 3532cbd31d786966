package plait_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestTraceContextAcrossProcessesOnRedis submits a run with W3C trace
// context from one scheduler and runs it on another, each with its own
// client and store over one redis-server, as two processes would: the
// handler gets the trace context and the run's fields back.
func TestTraceContextAcrossProcessesOnRedis(t *testing.T) {
	t.Parallel()
	srv, err := sharedRedis()
	if err != nil {
		redistest.Skip(t, err)
	}
	ctx := context.Background()
	const prefix = "trace-xproc"
	newStore := func() store.Store {
		client := redis.NewClient(&redis.Options{Addr: srv.Addr})
		t.Cleanup(func() { _ = client.Close() })
		store, err := redisstore.New(ctx, client, redisstore.WithPrefix(prefix))
		require.NoError(t, err)
		return store
	}
	quiet := plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	submitter, err := plait.New(newStore(), plait.WithRemoteHandlers(), quiet)
	require.NoError(t, err)
	worker, err := plait.New(newStore(), quiet, plait.WithWorkerID("far-worker"))
	require.NoError(t, err)

	type seen struct {
		traceparent, tracestate string
		info                    plait.RunInfo
	}
	got := make(chan seen, 1)
	require.NoError(t, worker.Handle("traced", func(ctx context.Context, task *plait.Task) (any, error) {
		info := task.Run()
		tp, ts := info.TraceContext()
		got <- seen{tp, ts, info}
		return nil, nil
	}))
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- worker.Run(rctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, recv(t, done))
	})

	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const ts = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"
	run, err := submitter.Submit(ctx, plait.NewWorkflow("traced-wf").Task("x", "traced", nil),
		plait.ForTenant("acme"), plait.ForService("shop"), plait.WithTraceContext(tp, ts))
	require.NoError(t, err)
	s := recv(t, got)
	require.Equal(t, tp, s.traceparent)
	require.Equal(t, ts, s.tracestate)
	require.Equal(t, run.ID, s.info.ID)
	require.Equal(t, "traced-wf", s.info.Workflow)
	require.Equal(t, "acme", s.info.Tenant)
	require.Equal(t, "shop", s.info.Service)
	require.Equal(t, "far-worker", s.info.Attempt.Worker)

	wctx, wcancel := context.WithTimeout(ctx, failAfter)
	defer wcancel()
	final, err := submitter.RunWait(wctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, plait.RunCompleted, final.Status)
	require.Equal(t, tp, final.Metadata[plait.TraceParentKey], "the trace context is kept with the run")
}
