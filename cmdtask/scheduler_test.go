package cmdtask_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/cmdtask"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store/memstore"
)

// records keeps every log record a scheduler writes.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) stderrLines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lines []string
	for _, rec := range r.recs {
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key == "stream" && a.Value.String() == "stderr" {
				lines = append(lines, rec.Message)
			}
			return true
		})
	}
	return lines
}

func TestCommandsInAWorkflowPipeStdoutAndLogStderr(t *testing.T) {
	t.Parallel()
	logs := &records{}
	st, err := memstore.New()
	require.NoError(t, err)
	s, err := plait.New(st, plait.WithLogger(slog.New(logs)))
	require.NoError(t, err)
	h := handler(t, cmdtask.Allow("sh", "tr"))
	require.NoError(t, s.Handle(cmdtask.HandlerName, h))

	wf := plait.NewWorkflow("pipe").
		Task("say", cmdtask.HandlerName, cmdtask.Spec{Argv: []string{"sh", "-c", "echo working >&2; echo hello world"}}).
		Task("shout", cmdtask.HandlerName, cmdtask.Spec{Argv: []string{"tr", "a-z", "A-Z"}, StdinFrom: "say"}, plait.After("say")).
		Task("silent", cmdtask.HandlerName, cmdtask.Spec{Argv: []string{"sh", "-c", "true"}}).
		Task("measure", cmdtask.HandlerName, cmdtask.Spec{Argv: []string{"sh", "-c", "wc -c | tr -d ' '"}, StdinFrom: "silent"}, plait.After("silent"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := s.Submit(ctx, wf)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	final, err := s.RunWait(ctx, run.ID)
	require.NoError(t, err)
	cancel()
	require.NoError(t, <-done)

	require.Equal(t, plait.RunCompleted, final.Status)
	require.Equal(t, "HELLO WORLD\n", string(final.Task("shout").Result), "stdin must come from the parent's stored result")
	require.Contains(t, logs.stderrLines(), "working", "stderr lines must reach the task's log")
	require.Equal(t, "0\n", string(final.Task("measure").Result), "a parent that wrote nothing must give empty stdin, not a failure")
}

// TestTaskTimeoutKillsTheCommandsProcessGroup runs a command under the
// task's Timeout on the scheduler's clock: when it passes, the attempt
// fails with ErrTimeout and the grandchild the command started is gone.
func TestTaskTimeoutKillsTheCommandsProcessGroup(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st, err := memstore.New(memstore.WithClock(clk))
	require.NoError(t, err)
	s, err := plait.New(st, plait.WithClock(clk),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	require.NoError(t, s.Handle(cmdtask.HandlerName, handler(t, cmdtask.Allow("sh"))))
	pidFile := filepath.Join(t.TempDir(), "pid")
	wf := plait.NewWorkflow("slow").Task("slow", cmdtask.HandlerName,
		cmdtask.Spec{Argv: []string{"sh", "-c", `sleep 300 & echo $! > "$1"; wait`, "sh", pidFile}},
		plait.Timeout(time.Second), plait.Retry(0))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := s.Submit(ctx, wf)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	pid := readPID(t, pidFile)
	armed := make(chan struct{})
	tm := time.AfterFunc(failAfter, func() { close(armed) })
	defer tm.Stop()
	require.True(t, clk.WaitForDeadline(clk.Now().Add(time.Second), armed), "the task's timeout must be armed")
	// Within the lease, so the only thing that ends the attempt is its timeout.
	clk.Advance(time.Second)
	final, err := s.RunWait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, plait.TaskFailed, final.Task("slow").Status)
	require.Contains(t, final.Task("slow").Error, plait.ErrTimeout.Error())
	require.Eventually(t, func() bool { return gone(pid) }, failAfter, time.Millisecond, "the timeout must kill the grandchild %d", pid)
}
