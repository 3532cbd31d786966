package browsertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/inspector"
	"github.com/plaitdag/plait/store/memstore"
)

// env is a Scheduler on the memory store whose "gate" tasks block until the
// test releases them, and the view mounted under prefix in a test server.
type env struct {
	s   *plait.Scheduler
	srv *httptest.Server

	mu    sync.Mutex
	gates map[string]chan struct{}
	// thrown are the script errors the pages threw (see watch).
	thrown []string
}

// start runs the Scheduler and serves the view (built with opts after the
// tests' refresh floor) under prefix; wrap, when given, stands in front of
// the view, as a proxy would. Everything stops with the test.
func start(t *testing.T, wrap func(http.Handler) http.Handler, opts ...inspector.Option) *env {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	// A short lease: progress reports are stored every third of it, so the
	// page sees one within two seconds.
	s, err := plait.New(st, plait.WithConcurrency(8), plait.WithLogger(quiet), plait.WithLeaseDuration(6*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{s: s, gates: map[string]chan struct{}{}}
	quick := func(ctx context.Context, task *plait.Task) (any, error) { return task.Name + " ok", nil }
	gate := func(ctx context.Context, task *plait.Task) (any, error) {
		task.Logger().Info("waiting for the test", "task", task.Name)
		if task.Name == "validate" {
			_ = task.Progress(0.4, "400 of 1000 rows")
		}
		select {
		case <-e.gate(task.Name):
			return task.Name + " released", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	lint := func(ctx context.Context, task *plait.Task) (any, error) {
		return nil, errors.New("lint: 3 problems in schema.sql")
	}
	for name, fn := range map[string]plait.HandlerFunc{"quick": quick, "gate": gate, "lint": lint} {
		if err := s.Handle(name, fn); err != nil {
			t.Fatal(err)
		}
	}
	view, err := inspector.New(s, append([]inspector.Option{inspector.WithMinRefresh(refresh), inspector.WithLogger(quiet)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = http.StripPrefix(prefix, view)
	if wrap != nil {
		h = wrap(h)
	}
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", h)
	e.srv = httptest.NewServer(mux)

	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- s.Run(ctx) }()
	t.Cleanup(func() {
		e.releaseAll()
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("scheduler: %v", err)
		}
		// The browser is gone (its cleanup ran first), so the event
		// streams' requests have ended or end with their connections.
		e.srv.CloseClientConnections()
		e.srv.Close()
	})
	return e
}

func (e *env) gate(name string) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	ch, ok := e.gates[name]
	if !ok {
		ch = make(chan struct{})
		e.gates[name] = ch
	}
	return ch
}

func (e *env) release(name string) { close(e.gate(name)) }

func (e *env) releaseAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for name, ch := range e.gates {
		select {
		case <-ch:
		default:
			close(ch)
		}
		delete(e.gates, name)
	}
}

// submit starts the workflow the pages show: a fetch, then a parse and a
// validate that wait for the test, a split into sixteen shards (wider
// than a layer may be, so they are drawn as one group) merged again, and a
// lint that fails with the alert that follows its failure.
func (e *env) submit(t *testing.T) *plait.Run {
	t.Helper()
	wf := plait.NewWorkflow("nightly-import").
		Task("fetch", "quick", nil).
		Task("parse", "gate", nil, plait.After("fetch")).
		Task("validate", "gate", nil, plait.After("fetch")).
		Task("split", "quick", nil, plait.After("fetch")).
		Task("lint", "lint", nil, plait.After("fetch"), plait.Retry(0))
	shards := make([]string, 16)
	for i := range shards {
		shards[i] = fmt.Sprintf("shard-%02d", i+1)
		wf.Task(shards[i], "quick", nil, plait.After("split"))
	}
	wf.Task("merge", "quick", nil, plait.After(shards...)).
		Task("alert", "quick", nil, plait.AfterFailure("lint")).
		Task("store", "quick", nil, plait.After("parse", "validate", "merge")).
		Task("publish", "quick", nil, plait.After("store")).
		Task("cleanup", "quick", nil, plait.AfterCompletion("publish"))
	run, err := e.s.Submit(context.Background(), wf, plait.ForTenant("acme"), plait.ForService("warehouse"))
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func (e *env) pageURL(runID string) string {
	return e.srv.URL + prefix + "/runs/" + url.PathEscape(runID)
}

func (e *env) checkNoErrors(t *testing.T) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.thrown) > 0 {
		t.Fatalf("the page threw: %s", strings.Join(e.thrown, "; "))
	}
}

// watch gathers the uncaught exceptions the tab's pages throw.
func (e *env) watch(ctx context.Context) {
	events := chromedp.Events(ctx, runtime.ExceptionThrown)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			text := ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				text += " " + ev.ExceptionDetails.Exception.Description
			}
			e.mu.Lock()
			e.thrown = append(e.thrown, text)
			e.mu.Unlock()
		}
	}()
}
