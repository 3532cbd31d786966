// Package metricstest drives a Scheduler for the tests of the metrics
// modules (metrics/prometheus, metrics/otel), so both check what they
// record of one and the same work.
package metricstest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store/memstore"
)

// FailAfter bounds every wait: a deadline for a test already broken.
const FailAfter = 20 * time.Second

// Metrics is what a metrics module's Metrics implements.
type Metrics interface {
	plait.Metrics
	plait.RunMetrics
	plait.QueueDepthClearer
}

// depthSeen is a Metrics that also tells the driver when the leader
// sampled queue depth and when it cleared it.
type depthSeen struct {
	Metrics
	sampled, cleared chan struct{}
}

func (d depthSeen) QueueDepth(queue string, ready, delayed int) {
	d.Metrics.QueueDepth(queue, ready, delayed)
	select {
	case d.sampled <- struct{}{}:
	default:
	}
}

func (d depthSeen) QueueDepthClear() {
	d.Metrics.QueueDepthClear()
	select {
	case d.cleared <- struct{}{}:
	default:
	}
}

func recv(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(FailAfter):
		t.Fatalf("no %s", what)
	}
}

// Drive runs a Scheduler on memstore whose metrics are m, made with a
// tenant cap of two, through this work, all on queue "default":
//
//   - workflow "order" (tasks a then b, handler "ok", which succeeds)
//     submitted for tenants "acme", "t2" and "t3" (past the cap: other);
//   - workflow "broken" (task a, handler "bad", which fails for good) for
//     tenant "acme";
//   - workflow "refused" (a handler not registered), refused at submit,
//     and "later" (one task delayed an hour), both without a tenant
//     (other, the two tenants of the cap being taken).
//
// It answers once the four runs ended and the leader sampled queue depth
// after that (one task delayed, none ready), the process still leading.
// stop then ends the Scheduler and answers once Run returned, when every
// hook of its attempts has been called and the leader cleared its queue
// depth.
func Drive(t *testing.T, m Metrics) (stop func()) {
	t.Helper()
	seen := depthSeen{Metrics: m, sampled: make(chan struct{}, 1), cleared: make(chan struct{}, 1)}
	clk := fakeclock.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	st, err := memstore.New(memstore.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	// The leader samples queue depth at its first pass, then at each tick
	// once a sweep interval has passed: every tick here, a period no other
	// timer of the scheduler has.
	const tick = 700 * time.Millisecond
	s, err := plait.New(st, plait.WithClock(clk), plait.WithMetrics(seen),
		plait.WithScheduleTick(tick), plait.WithSweepInterval(300*time.Millisecond),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Handle("ok", func(context.Context, *plait.Task) (any, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Handle("bad", func(context.Context, *plait.Task) (any, error) {
		return nil, plait.Permanent(errors.New("no"))
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	order := plait.NewWorkflow("order").Task("a", "ok", nil).Task("b", "ok", nil, plait.After("a"))
	var runs []*plait.Run
	for _, sub := range []struct {
		wf     *plait.Workflow
		tenant string
	}{
		{order, "acme"},
		{order, "t2"},
		{order, "t3"}, // past the cap of two tenants
		{plait.NewWorkflow("broken").Task("a", "bad", nil), "acme"},
	} {
		r, err := s.Submit(ctx, sub.wf, plait.ForTenant(sub.tenant))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	if _, err := s.Submit(ctx, plait.NewWorkflow("refused").Task("a", "missing", nil)); err == nil {
		t.Fatal("a workflow with an unknown handler must be refused")
	}
	if _, err := s.Submit(ctx, plait.NewWorkflow("later").Task("a", "ok", nil, plait.Delay(time.Hour))); err != nil {
		t.Fatal(err)
	}

	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(rctx) }()
	for _, r := range runs {
		wctx, wcancel := context.WithTimeout(ctx, FailAfter)
		if _, err := s.RunWait(wctx, r.ID); err != nil {
			t.Fatal(err)
		}
		wcancel()
	}
	// The first sample may have seen the tasks still ready: take the one
	// after the next tick.
	select {
	case <-seen.sampled:
	default:
	}
	stopWait := make(chan struct{})
	tm := time.AfterFunc(FailAfter, func() { close(stopWait) })
	if !clk.WaitForDeadline(clk.Now().Add(tick), stopWait) {
		t.Fatal("the leader armed no tick")
	}
	tm.Stop()
	clk.Advance(tick)
	recv(t, seen.sampled, "queue depth sample from the leader")

	// The rest is read once Run returned: RunWait answers as soon as the
	// store ended the run, before the last finish's hooks.
	return func() {
		t.Helper()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		recv(t, seen.cleared, "queue depth clear when the leader stops")
	}
}
