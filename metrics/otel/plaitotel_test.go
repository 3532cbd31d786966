package plaitotel_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	plaitotel "github.com/plaitdag/plait/metrics/otel"
	"github.com/plaitdag/plait/store/memstore"
)

// failAfter bounds every wait: a deadline for a test already broken.
const failAfter = 20 * time.Second

// depthSeen is a plaitotel.Metrics that also tells the test when the
// leader sampled queue depth and when it cleared it.
type depthSeen struct {
	*plaitotel.Metrics
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
	case <-time.After(failAfter):
		t.Fatalf("no %s", what)
	}
}

// collected is one collection of a reader: the value of each instrument's
// series, by instrument name and attribute set (histograms: their count).
type collected map[string]map[attribute.Distinct]float64

func collect(t *testing.T, r *sdkmetric.ManualReader) collected {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := collected{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != plaitotel.ScopeName {
			t.Fatalf("scope %q, want %q", sm.Scope.Name, plaitotel.ScopeName)
		}
		for _, m := range sm.Metrics {
			series := map[attribute.Distinct]float64{}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					series[p.Attributes.Equivalent()] = float64(p.Value)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					series[p.Attributes.Equivalent()] = float64(p.Value)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					series[p.Attributes.Equivalent()] = float64(p.Count)
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
			out[m.Name] = series
		}
	}
	return out
}

func (c collected) value(name string, kv ...attribute.KeyValue) (float64, bool) {
	set := attribute.NewSet(kv...)
	v, ok := c[name][set.Equivalent()]
	return v, ok
}

func (c collected) want(t *testing.T, name string, v float64, kv ...attribute.KeyValue) {
	t.Helper()
	got, ok := c.value(name, kv...)
	if !ok {
		t.Fatalf("no series %s%v; have %v", name, kv, c[name])
	}
	if got != v {
		t.Fatalf("%s%v = %v, want %v", name, kv, got, v)
	}
}

var (
	queue    = plaitotel.KeyQueue.String
	workflow = plaitotel.KeyWorkflow.String
	tenant   = plaitotel.KeyTenant.String
	outcome  = plaitotel.KeyOutcome.String
	status   = plaitotel.KeyStatus.String
	state    = plaitotel.KeyState.String
)

// TestScheduler drives a Scheduler on memstore and reads back, through
// the SDK's manual reader, what the instruments recorded: attempts by
// outcome, runs submitted and ended by status with their tenant, a tenant
// past the cap recorded as other, the submit error of a refused workflow,
// and the queue depth the leader sampled, gone once it stops.
func TestScheduler(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	om, err := plaitotel.New(mp, plaitotel.WithTenantCap(2))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := om.Close(); err != nil {
			t.Error(err)
		}
	}()
	m := depthSeen{Metrics: om, sampled: make(chan struct{}, 1), cleared: make(chan struct{}, 1)}
	clk := fakeclock.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	st, err := memstore.New(memstore.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	// The leader samples queue depth at its first pass, then at each tick
	// once a sweep interval has passed: every tick here, a period no other
	// timer of the scheduler has.
	const tick = 700 * time.Millisecond
	s, err := plait.New(st, plait.WithClock(clk), plait.WithMetrics(m),
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
		wctx, wcancel := context.WithTimeout(ctx, failAfter)
		if _, err := s.RunWait(wctx, r.ID); err != nil {
			t.Fatal(err)
		}
		wcancel()
	}
	// The first sample may have seen the tasks still ready: take the one
	// after the next tick.
	select {
	case <-m.sampled:
	default:
	}
	stopWait := make(chan struct{})
	tm := time.AfterFunc(failAfter, func() { close(stopWait) })
	if !clk.WaitForDeadline(clk.Now().Add(tick), stopWait) {
		t.Fatal("the leader armed no tick")
	}
	tm.Stop()
	clk.Advance(tick)
	recv(t, m.sampled, "queue depth sample from the leader")

	// Queue depth while this process leads; the rest once Run returned,
	// when every hook of its attempts has been called (RunWait answers as
	// soon as the store ended the run, before the last finish's hooks).
	c := collect(t, reader)
	c.want(t, "plait.queue.depth", 1, queue("default"), state("delayed"))
	c.want(t, "plait.queue.depth", 0, queue("default"), state("ready"))
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	recv(t, m.cleared, "queue depth clear when the leader stops")
	c = collect(t, reader)
	c.want(t, "plait.tasks.started", 2, queue("default"), workflow("order"), tenant("acme"))
	c.want(t, "plait.tasks.finished", 2, queue("default"), workflow("order"), tenant("acme"), outcome("succeeded"))
	c.want(t, "plait.tasks.finished", 2, queue("default"), workflow("order"), tenant("other"), outcome("succeeded"))
	c.want(t, "plait.tasks.finished", 1, queue("default"), workflow("broken"), tenant("acme"), outcome("failed"))
	c.want(t, "plait.task.duration", 6, queue("default"), workflow("order"))
	c.want(t, "plait.runs.submitted", 1, workflow("order"), tenant("acme"))
	c.want(t, "plait.runs.submitted", 1, workflow("order"), tenant("t2"))
	c.want(t, "plait.runs.submitted", 1, workflow("order"), tenant("other"))
	c.want(t, "plait.runs.submitted", 1, workflow("later"), tenant("other"))
	c.want(t, "plait.run.submit.errors", 1, workflow("refused"), tenant("other"))
	c.want(t, "plait.run.submit.duration", 3, workflow("order"))
	c.want(t, "plait.runs.ended", 1, workflow("order"), tenant("acme"), status("completed"))
	c.want(t, "plait.runs.ended", 1, workflow("order"), tenant("other"), status("completed"))
	c.want(t, "plait.runs.ended", 1, workflow("broken"), tenant("acme"), status("failed"))
	if v, ok := c.value("plait.queue.depth", queue("default"), state("delayed")); ok {
		t.Fatalf("a process that no longer leads must observe no queue depth, got %v", v)
	}
}

// TestLabelCap: each attribute admits its first values and records every
// later one as other; the queues past the cap share one depth, their sum.
func TestLabelCap(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	m, err := plaitotel.New(mp, plaitotel.WithQueueCap(1), plaitotel.WithWorkflowCap(1), plaitotel.WithTenantCap(1))
	if err != nil {
		t.Fatal(err)
	}
	m.TaskStarted(plait.TaskLabels{Queue: "q1", Workflow: "w1", Tenant: "t1"})
	m.TaskStarted(plait.TaskLabels{Queue: "q2", Workflow: "w2", Tenant: "t2"})
	m.TaskStarted(plait.TaskLabels{Queue: "q3", Workflow: "w3", Tenant: "t3"})
	m.TaskStarted(plait.TaskLabels{Queue: "q1", Workflow: "w1", Tenant: "t1"})
	m.QueueDepth("q1", 1, 2)
	m.QueueDepth("q2", 3, 4)
	m.QueueDepth("q3", 5, 6)
	m.QueueDepth("q2", 7, 0)
	c := collect(t, reader)
	c.want(t, "plait.tasks.started", 2, queue("q1"), workflow("w1"), tenant("t1"))
	c.want(t, "plait.tasks.started", 2, queue("other"), workflow("other"), tenant("other"))
	c.want(t, "plait.queue.depth", 1, queue("q1"), state("ready"))
	c.want(t, "plait.queue.depth", 12, queue("other"), state("ready"))
	c.want(t, "plait.queue.depth", 6, queue("other"), state("delayed"))
	m.QueueDepthClear()
	if _, ok := collect(t, reader).value("plait.queue.depth", queue("q1"), state("ready")); ok {
		t.Fatal("a clear drops every queue depth")
	}
}

// TestNewRefuses: options out of range and a nil provider are errors.
func TestNewRefuses(t *testing.T) {
	mp := sdkmetric.NewMeterProvider()
	defer func() { _ = mp.Shutdown(context.Background()) }()
	for name, opts := range map[string][]plaitotel.Option{
		"tenant cap 0":       {plaitotel.WithTenantCap(0)},
		"queue cap -1":       {plaitotel.WithQueueCap(-1)},
		"workflow cap 0":     {plaitotel.WithWorkflowCap(0)},
		"no buckets":         {plaitotel.WithDurationBuckets()},
		"decreasing buckets": {plaitotel.WithSubmitBuckets(1, 0.5)},
		"nil option":         {nil},
	} {
		_, err := plaitotel.New(mp, opts...)
		if !errors.Is(err, plaitotel.ErrInvalidOption) {
			t.Errorf("%s: err %v, want ErrInvalidOption", name, err)
		}
	}
	if _, err := plaitotel.New(nil); !errors.Is(err, plaitotel.ErrInvalidOption) {
		t.Errorf("nil provider: err %v", err)
	}
}
