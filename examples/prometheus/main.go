// Command prometheus exports a plait scheduler's metrics hooks with the
// Prometheus Go client and serves them on /metrics, while it submits and
// runs a small workflow every second on the in-memory store:
//
//	cd examples/prometheus && go run . -addr :2112
//	curl -s localhost:2112/metrics | grep plait_
//
// The metrics come from the module github.com/plaitdag/plait/metrics/prometheus
// (plaitprom.New): attempts, runs submitted and ended, submit latency and
// the queue depth the schedule leader samples. With -once it runs one
// batch, prints the plait_ lines of its own /metrics and exits. plait
// itself does not import Prometheus; this module and plaitprom do.
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
	plaitprom "github.com/plaitdag/plait/metrics/prometheus"
	"github.com/plaitdag/plait/store/memstore"
)

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
	metrics, err := plaitprom.New(reg)
	if err != nil {
		return err
	}
	st, err := memstore.New()
	if err != nil {
		return err
	}
	s, err := plait.New(st,
		plait.WithMetrics(metrics),
		// The schedule leader samples queue depth every sweep interval, at
		// its tick (a second) at most.
		plait.WithSweepInterval(500*time.Millisecond),
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
			r, err := s.Submit(ctx, wf, plait.ForTenant(fmt.Sprintf("tenant-%d", i%2)))
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
		// Let the leader sample the queue depth.
		if err := waitMetric(ctx, ln.Addr().String(), `plait_queue_depth{queue="default",state="delayed"} 5`); err != nil {
			return err
		}
		// Printed while Run runs: once it stops, this process no longer
		// leads, and its queue depth series are dropped.
		perr := printMetrics(ln.Addr().String(), out)
		cancel()
		return errors.Join(perr, <-done)
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
		if strings.HasPrefix(line, "plait_") && !strings.Contains(line, "_bucket{") {
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
