// Command inspector runs a small workload on the in-memory store and serves
// plait's web view of it: an extract-transform-load workflow with a wide
// fan-out, a billing workflow that fails, and a schedule that fires a
// heartbeat every ten seconds. The view is mounted under /plait/ in the
// command's own HTTP server, on loopback.
//
//	go run ./examples/inspector              # then open http://127.0.0.1:8080/plait/
//	go run ./examples/inspector -for 3s      # stops by itself
//	go run ./examples/inspector -write       # allows cancel and replay
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/inspector"
	"github.com/plaitdag/plait/store/memstore"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve the view on")
	runFor := flag.Duration("for", 0, "stop after this long (0: until interrupted)")
	write := flag.Bool("write", false, "allow the view's cancel and replay actions (read-only by default)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *runFor > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *runFor)
		defer cancel()
	}
	if err := run(ctx, *addr, *write, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "inspector:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string, write bool, out io.Writer) error {
	// stop ends everything: the submits, the Scheduler and the requests.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Stats on, so the overview draws throughput and failures per minute.
	st, err := memstore.New(memstore.WithStats(0))
	if err != nil {
		return err
	}
	s, err := plait.New(st, plait.WithConcurrency(8), plait.WithLogger(quiet))
	if err != nil {
		return err
	}
	if err := register(s); err != nil {
		return err
	}
	_, err = s.ScheduleSave(ctx, &plait.Schedule{
		Name:     "heartbeat",
		Spec:     "@every 10s",
		Workflow: plait.NewWorkflow("heartbeat").Task("ping", "step", 50),
		Service:  "ops",
	})
	if err != nil {
		return err
	}

	view, err := inspector.New(s, inspector.WithReadOnly(!write), inspector.WithLogger(quiet))
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	// The view works under any prefix: StripPrefix hands it paths from its
	// own root.
	mux.Handle("/plait/", http.StripPrefix("/plait", view))
	mux.Handle("/{$}", http.RedirectHandler("/plait/", http.StatusFound))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	// Requests take their context from ctx, so the view's event streams
	// end when the command stops (Shutdown waits for requests, and a
	// stream ends only with its request's context).
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(out, "plait view on http://%s/plait/\n", ln.Addr())

	ran := make(chan error, 1)
	go func() { ran <- s.Run(ctx) }()
	submitErr := submitLoop(ctx, s)
	stop() // a submit that failed stops the rest as well

	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutCtx)
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if err := <-ran; err != nil {
		return err
	}
	if submitErr != nil && !errors.Is(submitErr, context.Canceled) && !errors.Is(submitErr, context.DeadlineExceeded) {
		return submitErr
	}
	fmt.Fprintln(out, "stopped")
	return nil
}

// register adds the handlers of the workload. "step" sleeps the number of
// milliseconds it is given (with some jitter) while reporting progress and
// logging, so runs stay visible in flight for a while.
func register(s *plait.Scheduler) error {
	step := plait.Typed(func(ctx context.Context, t *plait.Task, ms int) (string, error) {
		d := time.Duration(ms+rand.IntN(ms/2+1)) * time.Millisecond
		t.Logger().Info("working", "for", d.String())
		const parts = 4
		for i := 1; i <= parts; i++ {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(d / parts):
			}
			_ = t.Progress(float64(i)/parts, fmt.Sprintf("part %d of %d", i, parts))
		}
		t.Logger().Info("done")
		return fmt.Sprintf("%s done in %s", t.Name, d.Round(time.Millisecond)), nil
	})
	charge := plait.Typed(func(ctx context.Context, t *plait.Task, amount int) (string, error) {
		t.Logger().Warn("card declined", "amount", amount)
		return "", errors.New("payment gateway: card declined")
	})
	for name, fn := range map[string]plait.HandlerFunc{"step": step, "charge": charge} {
		if err := s.Handle(name, fn); err != nil {
			return err
		}
	}
	return nil
}

// etl is an extract, a fan-out of shards, and the joins after it: wide
// enough that the view groups the shards into one box.
func etl(shards int) *plait.Workflow {
	wf := plait.NewWorkflow("etl").
		Task("extract", "step", 400).
		Task("validate", "step", 300, plait.After("extract"))
	names := make([]string, shards)
	for i := range names {
		names[i] = fmt.Sprintf("transform-%02d", i+1)
		wf.Task(names[i], "step", 600, plait.After("validate"))
	}
	return wf.
		Task("load", "step", 500, plait.After(names...)).
		Task("index", "step", 300, plait.After("load")).
		Task("report", "step", 200, plait.After("load", "index")).
		Task("cleanup", "step", 100, plait.AfterCompletion("report"))
}

// billing fails: charge is declined on every attempt, so notify (after a
// failure) runs and receipt is skipped.
func billing() *plait.Workflow {
	quick := plait.ConstantBackoff(300 * time.Millisecond)
	return plait.NewWorkflow("billing").
		Task("invoice", "step", 200).
		Task("charge", "charge", 42, plait.After("invoice"), plait.Retry(2), plait.Backoff(quick)).
		Task("receipt", "step", 100, plait.After("charge")).
		Task("notify", "step", 100, plait.AfterFailure("charge"))
}

// submitLoop submits a mix of runs now and then until ctx is done.
func submitLoop(ctx context.Context, s *plait.Scheduler) error {
	tenants := []string{"acme", "globex", "initech"}
	for i := 0; ; i++ {
		tenant := plait.ForTenant(tenants[i%len(tenants)])
		if _, err := s.Submit(ctx, etl(8+4*(i%3)), tenant, plait.ForService("warehouse")); err != nil {
			return err
		}
		if i%2 == 0 {
			if _, err := s.Submit(ctx, billing(), tenant, plait.ForService("billing")); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(4 * time.Second):
		}
	}
}
