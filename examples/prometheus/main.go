// Command prometheus exports a plait scheduler's metrics hooks with the
// Prometheus Go client and serves them on /metrics, while it submits and
// runs a small workflow every second on the in-memory store:
//
//	cd examples/prometheus && go run . -addr :2112
//	curl -s localhost:2112/metrics | grep plait_
//
// With -once it runs one batch, prints the plait_ lines of its own
// /metrics and exits. plait itself does not import Prometheus; this module
// does.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/memstore"
)

// metrics implements plait.Metrics with Prometheus collectors. Labels are
// workflow, task, handler and queue: low-cardinality by design (run ids
// never become labels).
type metrics struct {
	started   *prometheus.CounterVec
	finished  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	retried   *prometheus.CounterVec
	dead      prometheus.Counter
	leaseLost *prometheus.CounterVec
	depth     *prometheus.GaugeVec
}

var taskLabels = []string{"workflow", "task", "handler", "queue"}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plait_tasks_started_total", Help: "Attempts whose handler started.",
		}, taskLabels),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plait_tasks_finished_total", Help: "Attempts whose outcome was recorded, by outcome.",
		}, append(taskLabels, "outcome")),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "plait_task_duration_seconds", Help: "How long handlers ran.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, taskLabels),
		retried: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plait_tasks_retried_total", Help: "Attempts that failed and will be retried.",
		}, taskLabels),
		dead: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "plait_tasks_dead_total", Help: "Tasks found dead past the crash limit by this process's sweep.",
		}),
		leaseLost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plait_leases_lost_total", Help: "Attempts of this process that lost their lease.",
		}, taskLabels),
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "plait_queue_depth", Help: "Tasks waiting on a queue, ready or delayed, sampled every sweep interval.",
		}, []string{"queue", "state"}),
	}
	reg.MustRegister(m.started, m.finished, m.duration, m.retried, m.dead, m.leaseLost, m.depth)
	return m
}

func values(l plait.TaskLabels) []string { return []string{l.Workflow, l.Task, l.Handler, l.Queue} }

func (m *metrics) TaskStarted(l plait.TaskLabels) { m.started.WithLabelValues(values(l)...).Inc() }

func (m *metrics) TaskFinished(l plait.TaskLabels, o plait.Outcome, d time.Duration) {
	m.finished.WithLabelValues(append(values(l), o.String())...).Inc()
	m.duration.WithLabelValues(values(l)...).Observe(d.Seconds())
}

func (m *metrics) TaskRetried(l plait.TaskLabels, _ time.Duration) {
	m.retried.WithLabelValues(values(l)...).Inc()
}

func (m *metrics) TaskDead(plait.Lease) { m.dead.Inc() }

func (m *metrics) LeaseLost(l plait.TaskLabels) { m.leaseLost.WithLabelValues(values(l)...).Inc() }

func (m *metrics) QueueDepth(queue string, ready, delayed int) {
	m.depth.WithLabelValues(queue, "ready").Set(float64(ready))
	m.depth.WithLabelValues(queue, "delayed").Set(float64(delayed))
}

func main() {
	addr := flag.String("addr", ":2112", "address to serve /metrics on")
	once := flag.Bool("once", false, "run one batch, print the plait_ metrics and exit")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *addr, *once, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "prometheus:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string, once bool, out io.Writer) error {
	reg := prometheus.NewRegistry()
	st, err := memstore.New()
	if err != nil {
		return err
	}
	s, err := plait.New(st,
		plait.WithMetrics(newMetrics(reg)),
		plait.WithSweepInterval(500*time.Millisecond), // queue depth is sampled at each sweep
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	)
	if err != nil {
		return err
	}
	var calls atomic.Int64
	if err := s.Handle("work", func(ctx context.Context, t *plait.Task) (any, error) {
		time.Sleep(time.Duration(1+calls.Add(1)%5) * time.Millisecond) // stands for real work
		if calls.Load()%7 == 0 {
			return nil, errors.New("a transient failure, retried")
		}
		return nil, nil
	}); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	fmt.Fprintf(out, "serving http://%s/metrics\n", ln.Addr())

	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Run(rctx) }()

	quick := plait.ConstantBackoff(10 * time.Millisecond)
	wf := plait.NewWorkflow("etl").
		Task("extract", "work", nil, plait.Backoff(quick)).
		Task("transform", "work", nil, plait.After("extract"), plait.Backoff(quick)).
		Task("load", "work", nil, plait.After("transform"), plait.Backoff(quick)).
		Task("later", "work", nil, plait.Delay(time.Hour))
	batch := func() error {
		for i := 0; i < 5; i++ {
			r, err := s.Submit(ctx, wf)
			if err != nil {
				return err
			}
			// Wait for the chain that runs now; "later" waits an hour.
			if err := waitTask(ctx, s, r.ID, "load"); err != nil {
				return err
			}
		}
		return nil
	}
	if once {
		if err := batch(); err != nil {
			return err
		}
		// Let one sweep sample the queue depth.
		if err := waitMetric(ctx, ln.Addr().String(), `plait_queue_depth{queue="default",state="delayed"} 5`); err != nil {
			return err
		}
		cancel()
		if err := <-done; err != nil {
			return err
		}
		return printMetrics(ln.Addr().String(), out)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			cancel()
			return <-done
		case <-tick.C:
			if err := batch(); err != nil && ctx.Err() == nil {
				return err
			}
		}
	}
}

// waitTask waits until the named task of the run has finished.
func waitTask(ctx context.Context, s *plait.Scheduler, runID, task string) error {
	for {
		r, err := s.RunGet(ctx, runID)
		if err != nil {
			return err
		}
		if ti := r.Task(task); ti != nil && ti.Status.Terminal() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// waitMetric scrapes /metrics until a line equal to want appears.
func waitMetric(ctx context.Context, addr, want string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var found bool
		if err := scrape(addr, func(line string) {
			if line == want {
				found = true
			}
		}); err != nil {
			return err
		}
		if found {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("no %q in /metrics", want)
}

// printMetrics prints the plait_ samples of /metrics.
func printMetrics(addr string, out io.Writer) error {
	return scrape(addr, func(line string) {
		if strings.HasPrefix(line, "plait_") && !strings.HasPrefix(line, "plait_task_duration_seconds_bucket") {
			fmt.Fprintln(out, line)
		}
	})
}

func scrape(addr string, each func(line string)) error {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		each(sc.Text())
	}
	return sc.Err()
}
