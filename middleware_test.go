package plait_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

// trail records the order middleware and handlers run in.
type trail struct {
	mu    sync.Mutex
	steps []string
}

func (tr *trail) add(s string) {
	tr.mu.Lock()
	tr.steps = append(tr.steps, s)
	tr.mu.Unlock()
}

func (tr *trail) get() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.steps...)
}

// mark is a middleware that records its entry and its return.
func (tr *trail) mark(name string) plait.Middleware {
	return func(next plait.HandlerFunc) plait.HandlerFunc {
		return func(ctx context.Context, t *plait.Task) (any, error) {
			tr.add(name + ">")
			defer tr.add("<" + name)
			return next(ctx, t)
		}
	}
}

// TestMiddlewareOrder pins the chain: base middleware outermost, then the
// scheduler's in the order given over two options, then the handler's own
// in order, then the handler; each returns in the reverse order.
func TestMiddlewareOrder(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		tr := &trail{}
		b := setup(t, f,
			plait.WithMiddleware(tr.mark("s1"), tr.mark("s2")),
			plait.WithBaseMiddleware(tr.mark("base"), plait.Recover(), plait.EnforceTimeout()),
			plait.WithMiddleware(tr.mark("s3")))
		require.NoError(t, b.s.HandleWith("h", func(ctx context.Context, task *plait.Task) (any, error) {
			tr.add("handler")
			return nil, nil
		}, tr.mark("h1"), tr.mark("h2")))
		b.handle(t, "plain", func(ctx context.Context, task *plait.Task) (any, error) {
			tr.add("plain")
			return nil, nil
		})
		b.start(t)
		b.wait(t, b.submit(t, plait.NewWorkflow("mw").Task("x", "h", nil)).ID)
		require.Equal(t, []string{"base>", "s1>", "s2>", "s3>", "h1>", "h2>", "handler", "<h2", "<h1", "<s3", "<s2", "<s1", "<base"}, tr.get())

		tr.mu.Lock()
		tr.steps = nil
		tr.mu.Unlock()
		b.wait(t, b.submit(t, plait.NewWorkflow("plain").Task("x", "plain", nil)).ID)
		require.Equal(t, []string{"base>", "s1>", "s2>", "s3>", "plain", "<s3", "<s2", "<s1", "<base"}, tr.get(),
			"a handler registered with Handle gets the scheduler's chain")
	})
}

// TestChainOrder pins Chain on its own: the first middleware is outermost.
func TestChainOrder(t *testing.T) {
	t.Parallel()
	tr := &trail{}
	h := plait.Chain(tr.mark("a"), nil, tr.mark("b"))(func(ctx context.Context, task *plait.Task) (any, error) {
		tr.add("h")
		return nil, nil
	})
	_, err := h(context.Background(), &plait.Task{Name: "x"})
	require.NoError(t, err)
	require.Equal(t, []string{"a>", "b>", "h", "<b", "<a"}, tr.get())
}

// TestRecoveryIsReplaceable swaps the built-in recovery for one that fails
// the task for good, and then drops the base middleware altogether: the
// worker still turns a panic into a *PanicError.
func TestRecoveryIsReplaceable(t *testing.T) {
	t.Parallel()
	errRecovered := errors.New("recovered")
	ownRecover := func(next plait.HandlerFunc) plait.HandlerFunc {
		return func(ctx context.Context, task *plait.Task) (res any, err error) {
			defer func() {
				if r := recover(); r != nil {
					res, err = nil, plait.Permanent(fmt.Errorf("%w: %v", errRecovered, r))
				}
			}()
			return next(ctx, task)
		}
	}
	boom := func(ctx context.Context, task *plait.Task) (any, error) { panic("boom") }
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f, plait.WithBaseMiddleware(ownRecover, plait.EnforceTimeout()))
		b.handle(t, "boom", boom)
		b.start(t)
		run := b.wait(t, b.submit(t, plait.NewWorkflow("boom").Task("x", "boom", nil, plait.Retry(3))).ID)
		ti := run.Task("x")
		require.Equal(t, plait.TaskFailed, ti.Status)
		require.Equal(t, 1, ti.Attempt, "the replacement made the panic permanent: no retry")
		require.Contains(t, ti.Error, "recovered: boom")

		b2 := setup(t, f, plait.WithBaseMiddleware())
		b2.handle(t, "boom", boom)
		b2.start(t)
		run = b2.wait(t, b2.submit(t, plait.NewWorkflow("boom").Task("x", "boom", nil, plait.Retry(0))).ID)
		require.Equal(t, plait.TaskFailed, run.Task("x").Status)
		require.Contains(t, run.Task("x").Error, "handler panicked: boom", "without Recover the worker still records the panic")
		ev := b2.events.waitFor(t, 1, is(plait.EventTaskFailed, "x"))
		require.ErrorContains(t, ev.Err, "boom")
	})
}

// TestEnforceTimeoutOnAHandBuiltTask: outside a scheduler the timeout
// middleware cancels the context on the system clock with ErrTimeout; a
// task without a Timeout is left alone.
func TestEnforceTimeoutOnAHandBuiltTask(t *testing.T) {
	t.Parallel()
	h := plait.EnforceTimeout()(func(ctx context.Context, task *plait.Task) (any, error) {
		_, has := ctx.Deadline()
		return has, nil
	})
	has, err := h(context.Background(), &plait.Task{Name: "x"})
	require.NoError(t, err)
	require.Equal(t, false, has, "a task built by hand has no Timeout")
	require.Zero(t, (&plait.Task{}).Timeout())
}

// TestTimeoutMiddlewareCanBeDropped: without EnforceTimeout a handler runs
// past its task's Timeout undisturbed.
func TestTimeoutMiddlewareCanBeDropped(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f, plait.WithBaseMiddleware(plait.Recover()))
		b.handle(t, "sees", func(ctx context.Context, task *plait.Task) (any, error) {
			if task.Timeout() != time.Second {
				return nil, plait.Permanent(fmt.Errorf("timeout %s", task.Timeout()))
			}
			if ctx.Err() != nil {
				return nil, plait.Permanent(ctx.Err())
			}
			return "ok", nil
		})
		b.start(t)
		run := b.wait(t, b.submit(t, plait.NewWorkflow("t").Task("x", "sees", nil, plait.Timeout(time.Second))).ID)
		require.Equal(t, plait.RunCompleted, run.Status, "tasks: %+v", run.Tasks)
	})
}

type ctxKey struct{}

// TestHandlersInheritBaseContextValues: handler contexts carry the values
// of Run's context by default, and those of WithBaseContext when given,
// but not their cancellation.
func TestHandlersInheritBaseContextValues(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		for _, tc := range []struct {
			name string
			opts []plait.Option
			want string
		}{
			{"run context", nil, "from-run"},
			{"base context", []plait.Option{plait.WithBaseContext(func() context.Context {
				return context.WithValue(context.Background(), ctxKey{}, "from-base")
			})}, "from-base"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				b := setup(t, f, tc.opts...)
				seen := make(chan any, 1)
				b.handle(t, "v", func(ctx context.Context, task *plait.Task) (any, error) {
					seen <- ctx.Value(ctxKey{})
					return nil, nil
				})
				ctx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "from-run"))
				done := make(chan error, 1)
				go func() { done <- b.s.Run(ctx) }()
				t.Cleanup(func() {
					cancel()
					require.NoError(t, recv(t, done))
				})
				b.wait(t, b.submit(t, plait.NewWorkflow("v").Task("x", "v", nil)).ID)
				require.Equal(t, tc.want, recv(t, seen))
			})
		}
	})
}

// TestTaskRunInfo: the handler sees its run's id, workflow, tenant,
// service, metadata and trace context, and its attempt, through Task.Run.
func TestTaskRunInfo(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		infos := make(chan plait.RunInfo, 2)
		b.handle(t, "info", func(ctx context.Context, task *plait.Task) (any, error) {
			info := task.Run()
			info.Metadata["changed"] = "by the handler" // a copy: the next call is unchanged
			infos <- task.Run()
			return nil, nil
		})
		b.start(t)
		wf := plait.NewWorkflow("info-wf").Task("a", "info", nil).Task("b", "info", nil, plait.After("a"))
		run := b.submit(t, wf, plait.ForTenant("acme"), plait.ForService("billing"),
			plait.WithMetadata(map[string]string{"who": "alice"}), plait.WithTraceContext(tp, "congo=t61rcWkgMzE"))
		b.wait(t, run.ID)
		for i := 0; i < 2; i++ {
			info := recv(t, infos)
			require.Equal(t, run.ID, info.ID)
			require.Equal(t, "info-wf", info.Workflow)
			require.Equal(t, "acme", info.Tenant)
			require.Equal(t, "billing", info.Service)
			require.Equal(t, map[string]string{"who": "alice", plait.TraceParentKey: tp, plait.TraceStateKey: "congo=t61rcWkgMzE"}, info.Metadata)
			gotTP, gotTS := info.TraceContext()
			require.Equal(t, tp, gotTP)
			require.Equal(t, "congo=t61rcWkgMzE", gotTS)
			require.Equal(t, "info", info.Handler)
			require.Equal(t, plait.DefaultQueue, info.Queue)
			require.Equal(t, 1, info.Attempt.Attempt)
			require.Equal(t, int64(1), info.Attempt.Epoch)
			require.Equal(t, "w1", info.Attempt.Worker)
			require.False(t, info.Attempt.StartedAt.IsZero())
			require.False(t, info.LeaseUntil.IsZero())
		}
	})
}

// TestWithTraceContextDropsMalformed: a traceparent that is not W3C well
// formed is not carried.
func TestWithTraceContextDropsMalformed(t *testing.T) {
	t.Parallel()
	for _, tp := range []string{
		"",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",       // no flags
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",    // upper case
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",    // zero trace id
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",    // zero parent id
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // forbidden version
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",  // version 00 with more
		"0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // not hex
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // separator
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01xyz", // later version, no dash
	} {
		p := &store.RunCreateParams{Metadata: map[string]string{"k": "v"}}
		plait.ApplySubmit(plait.WithTraceContext(tp, "a=b"), p)
		require.Equal(t, map[string]string{"k": "v"}, p.Metadata, "traceparent %q", tp)
	}
	p := &store.RunCreateParams{}
	plait.ApplySubmit(plait.WithTraceContext("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later", ""), p)
	require.Equal(t, map[string]string{plait.TraceParentKey: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later"}, p.Metadata,
		"a later version may carry more fields")
	info := plait.RunInfo{Metadata: map[string]string{plait.TraceParentKey: "junk", plait.TraceStateKey: "a=b"}}
	tp, ts := info.TraceContext()
	require.Empty(t, tp)
	require.Empty(t, ts)
}
