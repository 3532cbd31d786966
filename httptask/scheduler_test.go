package httptask_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/httptask"
	"github.com/plaitdag/plait/store/memstore"
)

// TestRetryAfterDelaysTheNextAttemptInARun runs an HTTP task whose server
// first answers 503 with Retry-After: 30: the task must wait exactly 30 s on
// the scheduler's clock, not its policy's hour, then succeed.
func TestRetryAfterDelaysTheNextAttemptInARun(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv, h := server(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("done"))
	})
	clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	retrying := make(chan plait.Event, 1)
	st, err := memstore.New(memstore.WithClock(clk))
	require.NoError(t, err)
	s, err := plait.New(st,
		plait.WithClock(clk),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		plait.WithObserver(func(e plait.Event) {
			if e.Type == plait.EventTaskRetrying {
				retrying <- e
			}
		}))
	require.NoError(t, err)
	require.NoError(t, s.Handle(httptask.HandlerName, h))
	policy := plait.ConstantBackoff(time.Hour)
	policy.Jitter = -1
	wf := plait.NewWorkflow("call").Task("call", httptask.HandlerName, httptask.Spec{URL: srv.URL}, plait.Retry(1), plait.Backoff(policy))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := s.Submit(ctx, wf)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	select {
	case e := <-retrying:
		require.Equal(t, 30*time.Second, e.RetryIn, "Retry-After must set the delay before the next attempt")
	case <-time.After(failAfter):
		t.Fatal("the first attempt did not fail with a retry")
	}
	armed := make(chan struct{})
	tm := time.AfterFunc(failAfter, func() { close(armed) })
	defer tm.Stop()
	require.True(t, clk.WaitForDeadline(clk.Now().Add(30*time.Second), armed), "the retry must be due 30 s later")
	clk.Advance(30 * time.Second)
	final, err := s.RunWait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, plait.RunCompleted, final.Status)
	require.Equal(t, "done", string(final.Task("call").Result))
}

// failAfter bounds every wait on a condition.
const failAfter = 10 * time.Second
