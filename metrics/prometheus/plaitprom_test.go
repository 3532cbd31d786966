package plaitprom_test

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/metricstest"
	plaitprom "github.com/plaitdag/plait/metrics/prometheus"
)

// value answers the value of the series name{labels} in the registry's
// gathered families, and whether it is there.
func value(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			if len(got) != len(labels) {
				continue
			}
			for k, v := range labels {
				if got[k] != v {
					continue metrics
				}
			}
			return sampleValue(f.GetType(), m), true
		}
	}
	return 0, false
}

func sampleValue(typ dto.MetricType, m *dto.Metric) float64 {
	switch typ {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue()
	case dto.MetricType_HISTOGRAM:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}

func want(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string, v float64) {
	t.Helper()
	got, ok := value(t, g, name, labels)
	if !ok {
		t.Fatalf("no series %s%v", name, labels)
	}
	if got != v {
		t.Fatalf("%s%v = %v, want %v", name, labels, got, v)
	}
}

// TestScheduler drives a Scheduler on memstore and reads back what the
// collectors gathered: attempts by outcome, runs submitted and ended by
// status with their tenant, a tenant past the cap counted as other, the
// submit error of a refused workflow, and the queue depth the leader
// sampled, dropped when it stops.
func TestScheduler(t *testing.T) {
	reg := prometheus.NewRegistry()
	pm, err := plaitprom.New(reg, plaitprom.WithTenantCap(2))
	if err != nil {
		t.Fatal(err)
	}
	stop := metricstest.Drive(t, pm)
	// Queue depth while this process leads; the rest once stop returned,
	// when every hook of its attempts has been called.
	want(t, reg, "plait_queue_depth", map[string]string{"queue": "default", "state": "delayed"}, 1)
	want(t, reg, "plait_queue_depth", map[string]string{"queue": "default", "state": "ready"}, 0)
	stop()
	want(t, reg, "plait_tasks_started_total", map[string]string{"queue": "default", "workflow": "order", "tenant": "acme"}, 2)
	want(t, reg, "plait_tasks_finished_total", map[string]string{"queue": "default", "workflow": "order", "tenant": "acme", "outcome": "succeeded"}, 2)
	want(t, reg, "plait_tasks_finished_total", map[string]string{"queue": "default", "workflow": "order", "tenant": "other", "outcome": "succeeded"}, 2)
	want(t, reg, "plait_tasks_finished_total", map[string]string{"queue": "default", "workflow": "broken", "tenant": "acme", "outcome": "failed"}, 1)
	want(t, reg, "plait_task_duration_seconds", map[string]string{"queue": "default", "workflow": "order"}, 6)
	want(t, reg, "plait_runs_submitted_total", map[string]string{"workflow": "order", "tenant": "acme"}, 1)
	want(t, reg, "plait_runs_submitted_total", map[string]string{"workflow": "order", "tenant": "t2"}, 1)
	want(t, reg, "plait_runs_submitted_total", map[string]string{"workflow": "order", "tenant": "other"}, 1)
	want(t, reg, "plait_runs_submitted_total", map[string]string{"workflow": "later", "tenant": "other"}, 1)
	want(t, reg, "plait_run_submit_errors_total", map[string]string{"workflow": "refused", "tenant": "other"}, 1)
	want(t, reg, "plait_run_submit_duration_seconds", map[string]string{"workflow": "order"}, 3)
	want(t, reg, "plait_runs_ended_total", map[string]string{"workflow": "order", "tenant": "acme", "status": "completed"}, 1)
	want(t, reg, "plait_runs_ended_total", map[string]string{"workflow": "order", "tenant": "other", "status": "completed"}, 1)
	want(t, reg, "plait_runs_ended_total", map[string]string{"workflow": "broken", "tenant": "acme", "status": "failed"}, 1)
	if _, ok := value(t, reg, "plait_queue_depth", map[string]string{"queue": "default", "state": "delayed"}); ok {
		t.Fatal("a process that no longer leads must export no queue depth")
	}
}

// TestLabelCap: each label admits its first values and reads every later
// one as other; a value admitted stays itself.
func TestLabelCap(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := plaitprom.New(reg, plaitprom.WithQueueCap(1), plaitprom.WithWorkflowCap(1), plaitprom.WithTenantCap(1))
	if err != nil {
		t.Fatal(err)
	}
	m.TaskStarted(plait.TaskLabels{Queue: "q1", Workflow: "w1", Tenant: "t1"})
	m.TaskStarted(plait.TaskLabels{Queue: "q2", Workflow: "w2", Tenant: "t2"})
	m.TaskStarted(plait.TaskLabels{Queue: "q3", Workflow: "w3", Tenant: "t3"})
	m.TaskStarted(plait.TaskLabels{Queue: "q1", Workflow: "w1", Tenant: "t1"})
	want(t, reg, "plait_tasks_started_total", map[string]string{"queue": "q1", "workflow": "w1", "tenant": "t1"}, 2)
	want(t, reg, "plait_tasks_started_total", map[string]string{"queue": "other", "workflow": "other", "tenant": "other"}, 2)
	// The queues past the cap share one depth series: their sum.
	m.QueueDepth("q1", 1, 2)
	m.QueueDepth("q2", 3, 4)
	m.QueueDepth("q3", 5, 6)
	m.QueueDepth("q2", 7, 0)
	want(t, reg, "plait_queue_depth", map[string]string{"queue": "q1", "state": "ready"}, 1)
	want(t, reg, "plait_queue_depth", map[string]string{"queue": "other", "state": "ready"}, 12)
	want(t, reg, "plait_queue_depth", map[string]string{"queue": "other", "state": "delayed"}, 6)
	m.QueueDepthClear()
	m.QueueDepth("q3", 1, 1)
	want(t, reg, "plait_queue_depth", map[string]string{"queue": "other", "state": "ready"}, 1)
	if _, ok := value(t, reg, "plait_queue_depth", map[string]string{"queue": "q1", "state": "ready"}); ok {
		t.Fatal("a clear drops every depth series")
	}
}

// TestNewRefuses: options out of range, a nil registerer and a second
// registration on one registry are errors.
func TestNewRefuses(t *testing.T) {
	for name, opts := range map[string][]plaitprom.Option{
		"tenant cap 0":         {plaitprom.WithTenantCap(0)},
		"queue cap -1":         {plaitprom.WithQueueCap(-1)},
		"workflow cap 0":       {plaitprom.WithWorkflowCap(0)},
		"empty namespace":      {plaitprom.WithNamespace("")},
		"no buckets":           {plaitprom.WithDurationBuckets()},
		"decreasing buckets":   {plaitprom.WithSubmitBuckets(1, 0.5)},
		"nil option":           {nil},
		"two wrong, both told": {plaitprom.WithTenantCap(0), plaitprom.WithQueueCap(0)},
	} {
		_, err := plaitprom.New(prometheus.NewRegistry(), opts...)
		if !errors.Is(err, plaitprom.ErrInvalidOption) {
			t.Errorf("%s: err %v, want ErrInvalidOption", name, err)
		}
	}
	if _, err := plaitprom.New(nil); !errors.Is(err, plaitprom.ErrInvalidOption) {
		t.Errorf("nil registerer: err %v", err)
	}
	reg := prometheus.NewRegistry()
	if _, err := plaitprom.New(reg, plaitprom.WithNamespace("app")); err != nil {
		t.Fatal(err)
	}
	if _, err := plaitprom.New(reg, plaitprom.WithNamespace("app")); err == nil {
		t.Error("registering twice on one registry must fail")
	}
}
