// Package plaitotel records the metrics hooks of a plait Scheduler
// ([plait.WithMetrics]) as OpenTelemetry instruments:
//
//	m, err := plaitotel.New(meterProvider)
//	if err != nil { ... }
//	s, err := plait.New(st, plait.WithMetrics(m))
//
// The instruments come from the provider's meter named
// "github.com/plaitdag/plait/metrics/otel"; export them with any reader of
// the SDK. Every process of a fleet records its own view, and the metrics
// are made so that summing a series over the processes counts each thing
// once:
//
//   - attempts (started, finished by outcome, their durations, retries,
//     lost leases): the process that ran the attempt;
//   - tasks dead past the crash limit: the process whose sweep found them;
//   - runs submitted, submit errors and latency: the process that
//     submitted (the schedule leader for the runs its schedules fire);
//   - runs ended, by status: the one process whose finish, sweep or cancel
//     ended the run;
//   - queue depth: only the process holding the schedule leader lease, for
//     every queue a live node serves; every other process observes no
//     queue depth, and a process that stops leading drops its own.
//
// Attributes are plait.queue, plait.workflow and plait.tenant (and
// plait.outcome, plait.status or plait.state where an instrument has
// one), each of the first three bounded by a cap ([WithQueueCap],
// [WithWorkflowCap], [WithTenantCap], [LabelCapDefault] values each): an
// attribute admits the first values it sees, in the order this process
// sees them, and every later new value is recorded as [Other]. The
// histograms leave the tenant out, so their series stay few. Task and
// handler names and run ids are never attributes.
//
// The instruments:
//
//	plait.tasks.started        counter    queue, workflow, tenant
//	plait.tasks.finished       counter    queue, workflow, tenant, outcome
//	plait.task.duration        histogram  queue, workflow (s)
//	plait.tasks.retried        counter    queue, workflow, tenant
//	plait.leases.lost          counter    queue, workflow, tenant
//	plait.tasks.dead           counter
//	plait.runs.submitted       counter    workflow, tenant
//	plait.run.submit.errors    counter    workflow, tenant
//	plait.run.submit.duration  histogram  workflow (s)
//	plait.runs.ended           counter    workflow, tenant, status
//	plait.queue.depth          gauge      queue, state (ready or delayed)
package plaitotel

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/labelcap"
)

// ScopeName is the name of the meter the instruments come from.
const ScopeName = "github.com/plaitdag/plait/metrics/otel"

// The attribute keys.
const (
	KeyQueue    = attribute.Key("plait.queue")
	KeyWorkflow = attribute.Key("plait.workflow")
	KeyTenant   = attribute.Key("plait.tenant")
	KeyOutcome  = attribute.Key("plait.outcome")
	KeyStatus   = attribute.Key("plait.status")
	KeyState    = attribute.Key("plait.state")
)

// Metrics is a [plait.Metrics], [plait.RunMetrics] and
// [plait.QueueDepthClearer] backed by OpenTelemetry instruments. Make it
// with [New]; it is safe for concurrent use.
type Metrics struct {
	queue, workflow, tenant *labelcap.Cap

	started, finished, retried, leaseLost, dead metric.Int64Counter
	duration, submitDuration                    metric.Float64Histogram
	submitted, submitErrors, ended              metric.Int64Counter
	registration                                metric.Registration

	mu sync.Mutex
	// depth holds the latest sample of each queue (capped), observed at
	// each collection; others the queues past the cap, summed into Other.
	depth  map[string][2]int
	others labelcap.Depths
}

var (
	_ plait.Metrics           = (*Metrics)(nil)
	_ plait.RunMetrics        = (*Metrics)(nil)
	_ plait.QueueDepthClearer = (*Metrics)(nil)
)

// New makes the instruments from mp's meter. Every option is checked:
// those out of range are joined in the error, each matching
// [ErrInvalidOption]. A nil mp is an error, and so is an instrument the
// meter refuses. [Metrics.Close] unregisters the queue depth callback.
func New(mp metric.MeterProvider, opts ...Option) (*Metrics, error) {
	c, err := newConfig(opts)
	if mp == nil {
		err = errors.Join(err, fmt.Errorf("%w: New needs a MeterProvider, got nil", ErrInvalidOption))
	}
	if err != nil {
		return nil, err
	}
	meter := mp.Meter(ScopeName)
	m := &Metrics{
		queue:    labelcap.New(c.QueueCap),
		workflow: labelcap.New(c.WorkflowCap),
		tenant:   labelcap.New(c.TenantCap),
		depth:    make(map[string][2]int),
	}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		ctr, err := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return ctr
	}
	histogram := func(name, desc string, bounds []float64) metric.Float64Histogram {
		h, err := meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(bounds...))
		errs = append(errs, err)
		return h
	}
	m.started = counter("plait.tasks.started", "{attempt}", "Attempts whose handler started in this process.")
	m.finished = counter("plait.tasks.finished", "{attempt}", "Attempts of this process whose outcome was recorded, by outcome.")
	m.duration = histogram("plait.task.duration", "How long the handlers of this process ran, per attempt recorded.", c.DurationBuckets)
	m.retried = counter("plait.tasks.retried", "{attempt}", "Attempts of this process that failed and will be retried.")
	m.leaseLost = counter("plait.leases.lost", "{attempt}", "Attempts of this process that lost their lease.")
	m.dead = counter("plait.tasks.dead", "{task}", "Tasks this process's sweep found dead past the crash limit.")
	m.submitted = counter("plait.runs.submitted", "{run}", "Runs this process created (submits, and the schedule leader's fires).")
	m.submitErrors = counter("plait.run.submit.errors", "{run}", "Submits of one run this process made that failed.")
	m.submitDuration = histogram("plait.run.submit.duration", "How long the submits of this process took, per run, failed ones included.", c.SubmitBuckets)
	m.ended = counter("plait.runs.ended", "{run}", "Runs this process ended (its finish, sweep or cancel), by status: one process counts each run.")
	depth, err := meter.Int64ObservableGauge("plait.queue.depth", metric.WithUnit("{task}"),
		metric.WithDescription("Tasks waiting on a queue, ready or delayed: observed by the schedule leader only."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("plaitotel: making the instruments: %w", err)
	}
	m.registration, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		for q, d := range m.depth {
			o.ObserveInt64(depth, int64(d[0]), metric.WithAttributes(KeyQueue.String(q), KeyState.String("ready")))
			o.ObserveInt64(depth, int64(d[1]), metric.WithAttributes(KeyQueue.String(q), KeyState.String("delayed")))
		}
		return nil
	}, depth)
	if err != nil {
		return nil, fmt.Errorf("plaitotel: registering the queue depth callback: %w", err)
	}
	return m, nil
}

// Close unregisters the queue depth callback; the counters and histograms
// stay with the meter.
func (m *Metrics) Close() error { return m.registration.Unregister() }

// taskAttrs answers the capped queue, workflow and tenant of an attempt.
func (m *Metrics) taskAttrs(l plait.TaskLabels) []attribute.KeyValue {
	return []attribute.KeyValue{KeyQueue.String(m.queue.Value(l.Queue)), KeyWorkflow.String(m.workflow.Value(l.Workflow)),
		KeyTenant.String(m.tenant.Value(l.Tenant))}
}

// The hooks get no context from the scheduler: they record under a
// background one, as synchronous instruments that carry no trace.
var background = context.Background()

// TaskStarted counts an attempt started.
func (m *Metrics) TaskStarted(l plait.TaskLabels) {
	m.started.Add(background, 1, metric.WithAttributes(m.taskAttrs(l)...))
}

// TaskFinished counts an attempt recorded, by outcome, and records how
// long its handler ran.
func (m *Metrics) TaskFinished(l plait.TaskLabels, o plait.Outcome, d time.Duration) {
	a := m.taskAttrs(l)
	m.finished.Add(background, 1, metric.WithAttributes(append(a, KeyOutcome.String(o.String()))...))
	m.duration.Record(background, d.Seconds(), metric.WithAttributes(a[0], a[1]))
}

// TaskRetried counts an attempt that failed and will be retried.
func (m *Metrics) TaskRetried(l plait.TaskLabels, _ time.Duration) {
	m.retried.Add(background, 1, metric.WithAttributes(m.taskAttrs(l)...))
}

// TaskDead counts a task the sweep found dead.
func (m *Metrics) TaskDead(plait.Lease) { m.dead.Add(background, 1) }

// LeaseLost counts an attempt that lost its lease.
func (m *Metrics) LeaseLost(l plait.TaskLabels) {
	m.leaseLost.Add(background, 1, metric.WithAttributes(m.taskAttrs(l)...))
}

// QueueDepth keeps the latest depth of a queue for the next collection.
// The queues past the cap share the Other attribute, which holds the sum
// of their latest samples.
func (m *Metrics) QueueDepth(queue string, ready, delayed int) {
	q := m.queue.Value(queue)
	if q == Other {
		ready, delayed = m.others.Add(queue, ready, delayed)
	}
	m.mu.Lock()
	m.depth[q] = [2]int{ready, delayed}
	m.mu.Unlock()
}

// QueueDepthClear drops every queue depth: this process stopped sampling
// for the fleet, and its next collections observe none.
func (m *Metrics) QueueDepthClear() {
	m.others.Reset()
	m.mu.Lock()
	clear(m.depth)
	m.mu.Unlock()
}

// RunSubmitted counts a run created, or a submit failed, and records the
// submit's latency.
func (m *Metrics) RunSubmitted(l plait.RunLabels, err error, d time.Duration) {
	wf := KeyWorkflow.String(m.workflow.Value(l.Workflow))
	attrs := metric.WithAttributes(wf, KeyTenant.String(m.tenant.Value(l.Tenant)))
	if err != nil {
		m.submitErrors.Add(background, 1, attrs)
	} else {
		m.submitted.Add(background, 1, attrs)
	}
	m.submitDuration.Record(background, d.Seconds(), metric.WithAttributes(wf))
}

// RunEnded counts a run ended, by status.
func (m *Metrics) RunEnded(l plait.RunLabels, status plait.RunStatus) {
	m.ended.Add(background, 1, metric.WithAttributes(KeyWorkflow.String(m.workflow.Value(l.Workflow)),
		KeyTenant.String(m.tenant.Value(l.Tenant)), KeyStatus.String(string(status))))
}
