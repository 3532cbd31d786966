package plait_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

// failAfter bounds every wait in these tests. It is a deadline for a test
// that is already broken, never a stand-in for a condition.
const failAfter = 20 * time.Second

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// storeFactory builds a fresh store driven by clk.
type storeFactory struct {
	name string
	new  func(t *testing.T, clk *fakeclock.Clock) store.Store
}

// storeFactories lists the backends the scheduler-level tests run on.
func storeFactories() []storeFactory {
	return append([]storeFactory{{
		name: "memstore",
		new: func(t *testing.T, clk *fakeclock.Clock) store.Store {
			return newMemStore(t, memstore.WithClock(clk))
		},
	}}, extraStoreFactories...)
}

// newMemStore is memstore.New for the tests, which give valid options only.
func newMemStore(t testing.TB, opts ...memstore.Option) *memstore.Store {
	t.Helper()
	st, err := memstore.New(opts...)
	require.NoError(t, err)
	return st
}

// extraStoreFactories is filled by other test files (the Redis backends).
var extraStoreFactories []storeFactory

// bundle is one test's scheduler, store, clock and event recorder.
type bundle struct {
	clock  *fakeclock.Clock
	store  store.Store
	s      *plait.Scheduler
	events *recorder
	stop   func() // stops Run and waits for it to return
	// calls counts the scheduler's store calls in flight; the clock moves
	// only between them.
	calls *callCounter
}

// forEachStore runs fn as a parallel subtest per backend.
func forEachStore(t *testing.T, fn func(t *testing.T, f storeFactory)) {
	for _, f := range storeFactories() {
		f := f
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			fn(t, f)
		})
	}
}

// setup builds a scheduler on a fresh store without starting it.
func setup(t *testing.T, f storeFactory, opts ...plait.Option) *bundle {
	t.Helper()
	clk := fakeclock.New(epoch)
	store := f.new(t, clk)
	rec := &recorder{}
	base := []plait.Option{
		plait.WithClock(clk),
		plait.WithObserver(rec.add),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		plait.WithWorkerID("w1"),
	}
	calls := &callCounter{Store: store}
	s, err := plait.New(calls, append(base, opts...)...)
	require.NoError(t, err, "New must accept valid options")
	return &bundle{clock: clk, store: store, s: s, events: rec, calls: calls}
}

// start runs the scheduler until the test ends.
func (b *bundle) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.s.Run(ctx) }()
	var once sync.Once
	b.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(failAfter):
				t.Fatal("Run did not return after its context was cancelled")
			}
		})
	}
	t.Cleanup(b.stop)
}

func (b *bundle) handle(t *testing.T, name string, fn plait.HandlerFunc) {
	t.Helper()
	require.NoError(t, b.s.Handle(name, fn))
}

func (b *bundle) submit(t *testing.T, wf *plait.Workflow, opts ...plait.SubmitOption) *plait.Run {
	t.Helper()
	run, err := b.s.Submit(context.Background(), wf, opts...)
	require.NoError(t, err)
	return run
}

func (b *bundle) wait(t *testing.T, runID string) *plait.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	run, err := b.s.RunWait(ctx, runID)
	if err != nil {
		now, _ := b.s.RunGet(context.Background(), runID)
		state := ""
		if now != nil {
			for _, ti := range now.Tasks {
				state += fmt.Sprintf("%s=%s/a%d/e%d/c%d ", ti.Name, ti.Status, ti.Attempt, ti.Epoch, ti.Crashes)
			}
		}
		require.NoError(t, err, "run %s did not finish; tasks: %s; events: %s", runID, state, b.events)
	}
	return run
}

// waitArmed blocks until a timer due exactly at at has been armed.
func (b *bundle) waitArmed(t *testing.T, at time.Time) {
	t.Helper()
	done := make(chan struct{})
	tm := time.AfterFunc(failAfter, func() { close(done) })
	defer tm.Stop()
	require.True(t, b.clock.WaitForDeadline(at, done), "no timer armed for %s", at)
}

// advanceAfterArmed advances the clock by d once a timer due at now+d has
// been armed, so the advance cannot race the code that arms it, and once
// no store call of the scheduler is in flight: a Redis store with a fake
// clock reads "now" when it sends a call, so a call sent before an advance
// and run after it would act at a time that has passed.
//
// A timer at now+d says nothing about which service armed it: d must be a
// period no other running service of the scheduler shares, or the test
// gives the service it waits for one of its own (WithSweepInterval,
// WithLeaseDuration, ...). The timers armed under setup: the lease keeper
// every third of the lease (5s by default), the sweep every
// SweepIntervalDefault (5s), the pause after a hand back IdleWaitDefault
// (1s), a driver's wake-up when the next delayed task is due, the janitor
// every JanitorIntervalDefault (30s), the task log flush
// TaskLogFlushDefault (1s, while lines are buffered). The node heartbeat
// and the schedule leader do not run: callCounter does not pass their
// capabilities through.
func (b *bundle) advanceAfterArmed(t *testing.T, d time.Duration) {
	t.Helper()
	b.waitArmed(t, b.clock.Now().Add(d))
	b.calls.waitIdle(t)
	b.clock.Advance(d)
}

// recorder keeps every event and lets tests wait for one.
type recorder struct {
	mu     sync.Mutex
	events []plait.Event
	wake   chan struct{}
}

func (r *recorder) add(e plait.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	if r.wake != nil {
		close(r.wake)
		r.wake = nil
	}
	r.mu.Unlock()
}

// waitFor returns the n-th (from 1) event matching match.
func (r *recorder) waitFor(t *testing.T, n int, match func(plait.Event) bool) plait.Event {
	t.Helper()
	deadline := time.After(failAfter)
	for {
		r.mu.Lock()
		seen := 0
		for _, e := range r.events {
			if match(e) {
				seen++
				if seen == n {
					r.mu.Unlock()
					return e
				}
			}
		}
		if r.wake == nil {
			r.wake = make(chan struct{})
		}
		ch := r.wake
		r.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("event %d not seen; have %s", n, r.String())
		}
	}
}

func (r *recorder) count(match func(plait.Event) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if match(e) {
			n++
		}
	}
	return n
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, e := range r.events {
		b.WriteString(fmt.Sprintf("%s:%s@%s/e%d/n%d", e.Type, e.Task, e.At.Sub(epoch), e.Epoch, e.Count))
		if e.Err != nil {
			b.WriteString("(" + e.Err.Error() + ")")
		}
		b.WriteString(" ")
	}
	return b.String()
}

func is(typ plait.EventType, task string) func(plait.Event) bool {
	return func(e plait.Event) bool { return e.Type == typ && (task == "" || e.Task == task) }
}

// noop is a handler that does nothing.
func noop(ctx context.Context, t *plait.Task) (any, error) { return nil, nil }

// blockUntilCancelled signals entered, then waits for its context and
// returns the cancellation cause.
func blockUntilCancelled(entered chan<- struct{}, causes chan<- error) plait.HandlerFunc {
	return func(ctx context.Context, t *plait.Task) (any, error) {
		entered <- struct{}{}
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return nil, ctx.Err()
	}
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(failAfter):
		t.Fatal("nothing received")
		var zero T
		return zero
	}
}
