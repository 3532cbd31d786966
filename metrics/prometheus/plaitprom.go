// Package plaitprom exports the metrics hooks of a plait Scheduler
// ([plait.WithMetrics]) as Prometheus collectors:
//
//	m, err := plaitprom.New(prometheus.DefaultRegisterer)
//	if err != nil { ... }
//	s, err := plait.New(st, plait.WithMetrics(m))
//
// and serve the registry on /metrics (promhttp). Every process of a fleet
// exports its own view, and the metrics are made so that summing a series
// over the processes counts each thing once:
//
//   - attempts (started, finished by outcome, their durations, retries,
//     lost leases): the process that ran the attempt;
//   - tasks dead past the crash limit: the process whose sweep found them;
//   - runs submitted, submit errors and latency: the process that
//     submitted (the schedule leader for the runs its schedules fire);
//   - runs ended, by status: the one process whose finish, sweep or cancel
//     ended the run;
//   - queue depth: only the process holding the schedule leader lease, for
//     every queue a live node serves; every other process exports no
//     queue depth series, and a process that stops leading drops its own.
//
// Labels are queue, workflow and tenant (and outcome, status or state
// where a metric has one), each bounded by a cap ([WithQueueCap],
// [WithWorkflowCap], [WithTenantCap], [LabelCapDefault] values each): a
// label admits the first values it sees, in the order this process sees
// them, and every later new value is counted under [Other]. The
// histograms leave the tenant out, so their series stay few. Task and
// handler names and run ids are never labels; [plait.Scheduler.Stats]
// has the per-task durations.
//
// The metrics, with the default namespace:
//
//	plait_tasks_started_total{queue,workflow,tenant}
//	plait_tasks_finished_total{queue,workflow,tenant,outcome}
//	plait_task_duration_seconds{queue,workflow}          histogram
//	plait_tasks_retried_total{queue,workflow,tenant}
//	plait_leases_lost_total{queue,workflow,tenant}
//	plait_tasks_dead_total
//	plait_runs_submitted_total{workflow,tenant}
//	plait_run_submit_errors_total{workflow,tenant}
//	plait_run_submit_duration_seconds{workflow}           histogram
//	plait_runs_ended_total{workflow,tenant,status}
//	plait_queue_depth{queue,state}                        gauge, state ready or delayed
package plaitprom

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/labelcap"
)

// Metrics is a [plait.Metrics], [plait.RunMetrics] and
// [plait.QueueDepthClearer] backed by Prometheus collectors. Make it with
// [New]; it is safe for concurrent use.
type Metrics struct {
	queue, workflow, tenant *labelcap.Cap

	started, finished, retried, leaseLost *prometheus.CounterVec
	duration                              *prometheus.HistogramVec
	dead                                  prometheus.Counter
	submitted, submitErrors, ended        *prometheus.CounterVec
	submitDuration                        *prometheus.HistogramVec
	depth                                 *prometheus.GaugeVec
	others                                labelcap.Depths
}

var (
	_ plait.Metrics           = (*Metrics)(nil)
	_ plait.RunMetrics        = (*Metrics)(nil)
	_ plait.QueueDepthClearer = (*Metrics)(nil)
)

// New makes the collectors and registers them with reg. Every option is
// checked: those out of range are joined in the error, each matching
// [ErrInvalidOption]. A nil reg is an error, and so is a registration
// refused (the same metrics registered twice on one registry).
func New(reg prometheus.Registerer, opts ...Option) (*Metrics, error) {
	c, err := newConfig(opts)
	if reg == nil {
		err = errors.Join(err, fmt.Errorf("%w: New needs a Registerer, got nil", ErrInvalidOption))
	}
	if err != nil {
		return nil, err
	}
	task := []string{"queue", "workflow", "tenant"}
	run := []string{"workflow", "tenant"}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: c.namespace, Name: name, Help: help}, labels)
	}
	m := &Metrics{
		queue:    labelcap.New(c.QueueCap),
		workflow: labelcap.New(c.WorkflowCap),
		tenant:   labelcap.New(c.TenantCap),
		started:  counter("tasks_started_total", "Attempts whose handler started in this process.", task...),
		finished: counter("tasks_finished_total", "Attempts of this process whose outcome was recorded, by outcome.", append(task, "outcome")...),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: c.namespace, Name: "task_duration_seconds",
			Help: "How long the handlers of this process ran, per attempt recorded.", Buckets: c.DurationBuckets}, []string{"queue", "workflow"}),
		retried:   counter("tasks_retried_total", "Attempts of this process that failed and will be retried.", task...),
		leaseLost: counter("leases_lost_total", "Attempts of this process that lost their lease.", task...),
		dead: prometheus.NewCounter(prometheus.CounterOpts{Namespace: c.namespace, Name: "tasks_dead_total",
			Help: "Tasks this process's sweep found dead past the crash limit."}),
		submitted:    counter("runs_submitted_total", "Runs this process created (submits, and the schedule leader's fires).", run...),
		submitErrors: counter("run_submit_errors_total", "Submits of one run this process made that failed.", run...),
		submitDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: c.namespace, Name: "run_submit_duration_seconds",
			Help: "How long the submits of this process took, per run, failed ones included.", Buckets: c.SubmitBuckets}, []string{"workflow"}),
		ended: counter("runs_ended_total", "Runs this process ended (its finish, sweep or cancel), by status: one process counts each run.", append(run, "status")...),
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: c.namespace, Name: "queue_depth",
			Help: "Tasks waiting on a queue, ready or delayed: sampled by the schedule leader only."}, []string{"queue", "state"}),
	}
	for _, col := range []prometheus.Collector{m.started, m.finished, m.duration, m.retried, m.leaseLost, m.dead,
		m.submitted, m.submitErrors, m.submitDuration, m.ended, m.depth} {
		if err := reg.Register(col); err != nil {
			return nil, fmt.Errorf("plaitprom: registering the collectors: %w", err)
		}
	}
	return m, nil
}

// taskValues answers the capped queue, workflow and tenant of an attempt.
func (m *Metrics) taskValues(l plait.TaskLabels) []string {
	return []string{m.queue.Value(l.Queue), m.workflow.Value(l.Workflow), m.tenant.Value(l.Tenant)}
}

// TaskStarted counts an attempt started.
func (m *Metrics) TaskStarted(l plait.TaskLabels) {
	m.started.WithLabelValues(m.taskValues(l)...).Inc()
}

// TaskFinished counts an attempt recorded, by outcome, and observes how
// long its handler ran.
func (m *Metrics) TaskFinished(l plait.TaskLabels, o plait.Outcome, d time.Duration) {
	v := m.taskValues(l)
	m.finished.WithLabelValues(append(v, o.String())...).Inc()
	m.duration.WithLabelValues(v[0], v[1]).Observe(d.Seconds())
}

// TaskRetried counts an attempt that failed and will be retried.
func (m *Metrics) TaskRetried(l plait.TaskLabels, _ time.Duration) {
	m.retried.WithLabelValues(m.taskValues(l)...).Inc()
}

// TaskDead counts a task the sweep found dead.
func (m *Metrics) TaskDead(plait.Lease) { m.dead.Inc() }

// LeaseLost counts an attempt that lost its lease.
func (m *Metrics) LeaseLost(l plait.TaskLabels) {
	m.leaseLost.WithLabelValues(m.taskValues(l)...).Inc()
}

// QueueDepth sets the depth gauges of a queue. The queues past the cap
// share the Other series, which holds the sum of their latest samples.
func (m *Metrics) QueueDepth(queue string, ready, delayed int) {
	q := m.queue.Value(queue)
	if q == Other {
		ready, delayed = m.others.Add(queue, ready, delayed)
	}
	m.depth.WithLabelValues(q, "ready").Set(float64(ready))
	m.depth.WithLabelValues(q, "delayed").Set(float64(delayed))
}

// QueueDepthClear drops every queue depth series: this process stopped
// sampling for the fleet.
func (m *Metrics) QueueDepthClear() {
	m.others.Reset()
	m.depth.Reset()
}

// RunSubmitted counts a run created, or a submit failed, and observes the
// submit's latency.
func (m *Metrics) RunSubmitted(l plait.RunLabels, err error, d time.Duration) {
	wf, tenant := m.workflow.Value(l.Workflow), m.tenant.Value(l.Tenant)
	if err != nil {
		m.submitErrors.WithLabelValues(wf, tenant).Inc()
	} else {
		m.submitted.WithLabelValues(wf, tenant).Inc()
	}
	m.submitDuration.WithLabelValues(wf).Observe(d.Seconds())
}

// RunEnded counts a run ended, by status.
func (m *Metrics) RunEnded(l plait.RunLabels, status plait.RunStatus) {
	m.ended.WithLabelValues(m.workflow.Value(l.Workflow), m.tenant.Value(l.Tenant), string(status)).Inc()
}
