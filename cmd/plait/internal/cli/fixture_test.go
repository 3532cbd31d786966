package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/memstore"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// fixture is a memory store with a worker running and three runs in it:
// done (completed, four tasks in three layers), failed (its charge task
// failed for good: a dead letter) and live (its hold task running until
// release is called), and a schedule "heartbeat".
type fixture struct {
	st      *memstore.Store
	worker  *plait.Scheduler
	done    string
	failed  string
	live    string
	held    chan struct{} // closed when hold starts
	gate    chan struct{}
	release func()
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := memstore.New(memstore.WithStats(0))
	if err != nil {
		t.Fatal(err)
	}
	// registered closes once the store has answered the worker's first
	// node heartbeat: from then on the node is listed.
	registered := make(chan struct{})
	var beat sync.Once
	w, err := plait.New(st, plait.WithLogger(quiet), plait.WithConcurrency(4), plait.WithIdleWait(5*time.Millisecond),
		plait.WithObserver(func(e plait.Event) {
			if e.Type == plait.EventNodeHeartbeat {
				beat.Do(func() { close(registered) })
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, worker: w, held: make(chan struct{}), gate: make(chan struct{})}
	var once sync.Once
	f.release = func() { once.Do(func() { close(f.gate) }) }
	must(t, w.Handle("step", func(ctx context.Context, _ *plait.Task) (any, error) { return "ok", nil }))
	must(t, w.Handle("charge", func(ctx context.Context, _ *plait.Task) (any, error) {
		return nil, plait.Permanent(errors.New("payment gateway: card declined"))
	}))
	var heldOnce sync.Once
	must(t, w.Handle("hold", func(ctx context.Context, _ *plait.Task) (any, error) {
		heldOnce.Do(func() { close(f.held) })
		select {
		case <-f.gate:
			return "released", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}))
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	t.Cleanup(func() {
		f.release()
		cancel()
		if err := <-ran; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("worker: %v", err)
		}
	})
	etl := plait.NewWorkflow("etl").
		Task("extract", "step", nil).
		Task("shard-a", "step", nil, plait.After("extract")).
		Task("shard-b", "step", nil, plait.After("extract")).
		Task("load", "step", nil, plait.After("shard-a", "shard-b"))
	f.done = f.finish(t, ctx, etl, plait.RunCompleted)
	billing := plait.NewWorkflow("billing").Task("charge", "charge", 42).Task("receipt", "step", nil, plait.After("charge"))
	f.failed = f.finish(t, ctx, billing, plait.RunFailed)
	live := plait.NewWorkflow("live").
		Task("extract", "step", nil).
		Task("hold", "hold", nil, plait.After("extract")).
		Task("load", "step", nil, plait.After("hold"))
	run, err := w.Submit(ctx, live)
	if err != nil {
		t.Fatal(err)
	}
	f.live = run.ID
	select {
	case <-f.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the live run's hold task did not start")
	}
	select {
	case <-registered:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker's node was never registered")
	}
	_, err = w.ScheduleSave(ctx, &plait.Schedule{Name: "heartbeat", Spec: "@every 1h",
		Workflow: plait.NewWorkflow("heartbeat").Task("ping", "step", nil)})
	must(t, err)
	return f
}

func (f *fixture) finish(t *testing.T, ctx context.Context, wf *plait.Workflow, want plait.RunStatus) string {
	t.Helper()
	run, err := f.worker.Submit(ctx, wf)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	end, err := f.worker.RunWait(wctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if end.Status != want {
		t.Fatalf("run of %s ended %s, want %s", wf.Name(), end.Status, want)
	}
	return run.ID
}

// open is the Opener of the tests: a client Scheduler over the fixture's
// store, as the binary opens one over Redis.
func (f *fixture) open(ctx context.Context, _ Conn) (*plait.Scheduler, error) {
	return plait.New(f.st, plait.WithLogger(quiet))
}

// syncBuffer is a buffer a command writes while the test reads it.
type syncBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{} // signalled (coalesced) on every write, when made
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{wrote: make(chan struct{}, 1)} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wrote != nil {
		select {
		case b.wrote <- struct{}{}:
		default:
		}
	}
	return b.buf.Write(p)
}

// waitFor waits until the buffer holds want, on the writes' signal.
func (b *syncBuffer) waitFor(t *testing.T, want string) {
	t.Helper()
	limit := time.After(10 * time.Second)
	for !strings.Contains(b.String(), want) {
		select {
		case <-b.wrote:
		case <-limit:
			t.Fatalf("no %q in:\n%s", want, b.String())
		}
	}
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// plaitCmd runs the command line args in process and answers its output
// and exit code.
func (f *fixture) plaitCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb syncBuffer
	code = Main(context.Background(), args, &out, &errb, f.open)
	return out.String(), errb.String(), code
}

// ok runs args, wants exit 0 and answers stdout.
func (f *fixture) ok(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := f.plaitCmd(t, args...)
	if code != ExitOK {
		t.Fatalf("plait %s: exit %d, want 0\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// exit runs args and wants exit code want; answers stdout and stderr.
func (f *fixture) exit(t *testing.T, want int, args ...string) (string, string) {
	t.Helper()
	out, errs, code := f.plaitCmd(t, args...)
	if code != want {
		t.Fatalf("plait %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, errs)
	}
	return out, errs
}

// decode parses -o json output into v.
func decode(t *testing.T, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitLetters waits until the store lists n dead letters, on the store's
// events (a task's end is one).
func (f *fixture) waitLetters(t *testing.T, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub, err := f.worker.Subscribe(ctx, &plait.SubscribeFilter{})
	must(t, err)
	for {
		res, err := f.worker.DeadLetterList(ctx, plait.DeadLetterListParams{Limit: 10})
		must(t, err)
		if len(res.Letters) == n {
			return
		}
		if _, err := sub.Next(ctx); err != nil {
			t.Fatalf("waiting for %d dead letters: %v", n, err)
		}
	}
}
