package plaitotel_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/metricstest"
	plaitotel "github.com/plaitdag/plait/metrics/otel"
)

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
	stop := metricstest.Drive(t, om)
	// Queue depth while this process leads; the rest once stop returned,
	// when every hook of its attempts has been called.
	c := collect(t, reader)
	c.want(t, "plait.queue.depth", 1, queue("default"), state("delayed"))
	c.want(t, "plait.queue.depth", 0, queue("default"), state("ready"))
	stop()
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
