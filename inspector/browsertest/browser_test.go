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
	"os"
	"os/exec"
	"path/filepath"
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

// prefix is where the test mounts the view, so the pages' relative URLs
// are exercised under a path prefix, as a host mounts them.
const prefix = "/ops/plait"

// refresh is the view's refresh floor in these tests: the polling fallback
// rereads the run this often.
const refresh = 500 * time.Millisecond

// TestRunPageLive opens the run page of a running workflow, sees the DAG
// drawn and a task running, lets the task finish, and sees its box turn
// succeeded through the event stream, in the same page (a mark set on the
// window at load survives). It saves a screenshot of the page.
func TestRunPageLive(t *testing.T) {
	env := start(t, nil)
	run := env.submit(t)
	ctx := browser(t)
	env.watch(ctx)

	open(t, ctx, env.pageURL(run.ID))
	waitFor(t, ctx, `g.task[data-task="parse"].state-running`)
	waitFor(t, ctx, `g.task[data-task="validate"].state-running`)
	waitText(t, ctx, "#live", "live")
	mark(t, ctx)

	env.release("parse")
	waitFor(t, ctx, `g.task[data-task="parse"].state-succeeded`)
	// The table row and the timeline follow from the throttled reread.
	waitFor(t, ctx, `tr[data-task="parse"] .badge.state-succeeded`)
	waitFor(t, ctx, `tr[data-task="validate"] .progress`)
	checkMark(t, ctx)
	env.checkNoErrors(t)

	// The viewport: the run's facts, its graph and the start of its timeline.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 1000)); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := os.Getenv("PLAIT_SCREENSHOT")
	if path == "" {
		path = filepath.Join(t.TempDir(), "inspector-run.png")
	}
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(shot))
}

// TestRunPagePolls is the same page on a server whose event stream answers
// 501, as on a store without events: the page falls back to polling at the
// refresh floor, and the states still change without a reload.
func TestRunPagePolls(t *testing.T) {
	noEvents := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/events") {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.WriteHeader(http.StatusNotImplemented)
				io.WriteString(w, `{"error":{"code":"unsupported","message":"no events on this store"}}`)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	env := start(t, noEvents)
	run := env.submit(t)
	ctx := browser(t)
	env.watch(ctx)

	open(t, ctx, env.pageURL(run.ID))
	waitFor(t, ctx, `g.task[data-task="parse"].state-running`)
	waitText(t, ctx, "#live", "polling")
	mark(t, ctx)

	env.release("parse")
	waitFor(t, ctx, `g.task[data-task="parse"].state-succeeded`)
	checkMark(t, ctx)
	env.checkNoErrors(t)
}

// TestPagesRender opens the overview, the runs page, a task page and the
// page of an unknown run, and checks each shows its content (or says the
// run is not found) without a script error.
func TestPagesRender(t *testing.T) {
	env := start(t, nil)
	run := env.submit(t)
	ctx := browser(t)
	env.watch(ctx)

	open(t, ctx, env.srv.URL+prefix+"/")
	waitFor(t, ctx, `.cards .card`)
	open(t, ctx, env.srv.URL+prefix+"/runs?status=running")
	waitFor(t, ctx, `table.runs a[href="runs/`+run.ID+`"]`)
	waitText(t, ctx, "#run-count", "1 run")
	open(t, ctx, env.srv.URL+prefix+"/runs/"+url.PathEscape(run.ID)+"/tasks/validate")
	waitFor(t, ctx, `.logs .log-line`)
	waitText(t, ctx, "h1", "validate")
	// An unknown run is said so, not shown as an empty page.
	open(t, ctx, env.pageURL("no-such-run"))
	waitText(t, ctx, "#notice", "Not found")
	env.checkNoErrors(t)
}

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

func start(t *testing.T, wrap func(http.Handler) http.Handler, opts ...inspector.Option) *env {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	s, err := plait.New(st, plait.WithConcurrency(8), plait.WithLogger(quiet))
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

// chromium is the browser the tests drive: PLAIT_CHROMIUM, else Debian's.
// Without one the tests skip, or fail under PLAIT_REQUIRE_BROWSER=1.
func chromium(t *testing.T) string {
	t.Helper()
	path := os.Getenv("PLAIT_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(path); err != nil {
		if os.Getenv("PLAIT_REQUIRE_BROWSER") == "1" {
			t.Fatalf("no browser at %s (PLAIT_REQUIRE_BROWSER=1): %v", path, err)
		}
		t.Skipf("no browser at %s: %v", path, err)
	}
	return path
}

// browser starts a headless Chromium that resolves no name but loopback,
// and answers a tab's context, ended with the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 1000),
		// Nothing but the test server: every other host name fails.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.Flag("proxy-server", "direct://"),
		chromedp.Flag("proxy-bypass-list", "*"),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("lang", "en-US"),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	ctx, cancelTime := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTime()
		cancelTab()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// open loads a page and starts gathering the script errors it throws.
func open(t *testing.T, ctx context.Context, pageURL string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
		t.Fatalf("open %s: %v", pageURL, err)
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

// waitFor waits until an element matches the CSS selector.
func waitFor(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.WaitReady(chromedp.CSS(sel))); err != nil {
		t.Fatalf("waiting for %s: %v\n%s", sel, err, pageState(ctx))
	}
}

// waitText waits until the element's text contains want.
func waitText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	expr := fmt.Sprintf(`(() => { const el = document.querySelector(%q); return !!el && el.textContent.includes(%q); })()`, sel, want)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("waiting for %q in %s: %v\n%s", want, sel, err, pageState(ctx))
	}
}

const markValue = "set-at-load"

// mark sets a value on the window: a reload would lose it.
func mark(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.__plaitMark = "`+markValue+`"`)); err != nil {
		t.Fatal(err)
	}
}

func checkMark(t *testing.T, ctx context.Context) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`String(window.__plaitMark)`))
	if err != nil {
		t.Fatal(err)
	}
	if got != markValue {
		t.Fatalf("the window's mark is %q, not %q: the page was reloaded", got, markValue)
	}
}

// pageState describes the page for a failure message.
func pageState(ctx context.Context) string {
	c, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	s, err := chromedp.Run(c, chromedp.Evaluate[string](`location.href + "\n" + (document.getElementById("notice") || {}).textContent + "\n" + document.body.innerText.slice(0, 1500)`))
	if err != nil {
		return "(page state unreadable: " + err.Error() + ")"
	}
	return s
}

// hostile is markup in a payload, an error, a log line and run metadata
// (names are limited to [A-Za-z0-9._-] by plait): the pages must show it as
// text.
const hostile = `<img src=x onerror="window.__pwned=1">`

// TestPagesEscape shows a run whose payload, error, log and metadata carry
// markup on the run page and the task page, and checks none of it became
// an element or ran.
func TestPagesEscape(t *testing.T) {
	env := start(t, nil)
	ctx := browser(t)
	env.watch(ctx)
	const bad = "bad"
	if err := env.s.Handle("bad", func(ctx context.Context, task *plait.Task) (any, error) {
		task.Logger().Error(hostile)
		return nil, errors.New(hostile)
	}); err != nil {
		t.Fatal(err)
	}
	wf := plait.NewWorkflow("hostile").
		Task(bad, "bad", hostile, plait.Retry(0)).
		Task("after", "quick", nil, plait.AfterCompletion(bad))
	run, err := env.s.Submit(context.Background(), wf, plait.WithMetadata(map[string]string{hostile: hostile}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.s.RunWait(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	check := func(where string) {
		t.Helper()
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`String(window.__pwned) + " " + document.querySelectorAll("img").length`))
		if err != nil {
			t.Fatal(err)
		}
		if got != "undefined 0" {
			t.Fatalf("%s: markup from the store became elements or ran (__pwned, img count: %s)", where, got)
		}
	}
	open(t, ctx, env.pageURL(run.ID))
	waitFor(t, ctx, `g.task.state-failed`)
	waitText(t, ctx, "td.err", hostile)
	waitText(t, ctx, "dl.facts", hostile)
	check("run page")
	open(t, ctx, env.pageURL(run.ID)+"/tasks/"+url.PathEscape(bad))
	waitText(t, ctx, ".logs", hostile)
	waitText(t, ctx, "pre.block", hostile)
	check("task page")
	env.checkNoErrors(t)
}

// TestRunPageLarge opens the run page of a 10,000-task fan-out: the shards
// are drawn as one group, the table shows its first rows, and when the
// shards run the group's state follows through reloads of the SVG, in the
// same page.
func TestRunPageLarge(t *testing.T) {
	const shards = 9998
	env := start(t, nil)
	ctx := browser(t)
	env.watch(ctx)
	wf := plait.NewWorkflow("large").Task("root", "gate", nil)
	names := make([]string, shards)
	for i := range names {
		names[i] = fmt.Sprintf("shard-%05d", i)
		wf.Task(names[i], "quick", nil, plait.After("root"))
	}
	wf.Task("join", "quick", nil, plait.After(names...))
	run, err := env.s.Submit(context.Background(), wf)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	open(t, ctx, env.pageURL(run.ID))
	waitFor(t, ctx, `g.group.state-pending[data-count="9998"]`)
	waitText(t, ctx, "main", "Showing 500 of 10,000 tasks")
	t.Logf("a %d-task run page drawn in %s", shards+2, time.Since(began).Round(time.Millisecond))
	waitFor(t, ctx, `g.task[data-task="root"].state-running`)
	mark(t, ctx)

	env.release("root")
	waitFor(t, ctx, `g.task[data-task="join"].state-succeeded`)
	waitFor(t, ctx, `g.group.state-succeeded[data-count="9998"]`)
	checkMark(t, ctx)
	env.checkNoErrors(t)
}

// TestRunPageCancel cancels a running run from its page on a handler that
// allows it (the confirmation answered yes), and sees the run and its
// waiting tasks turn cancelled; on the default read-only handler the page
// offers no button.
func TestRunPageCancel(t *testing.T) {
	ro := start(t, nil)
	roRun := ro.submit(t)
	ctx := browser(t)
	ro.watch(ctx)
	open(t, ctx, ro.pageURL(roRun.ID))
	waitFor(t, ctx, `g.task[data-task="parse"].state-running`)
	buttons, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".run-head button").length`))
	if err != nil {
		t.Fatal(err)
	}
	if buttons != 0 {
		t.Fatalf("a read-only view shows %d action buttons", buttons)
	}

	env := start(t, nil, inspector.WithReadOnly(false))
	run := env.submit(t)
	env.watch(ctx)
	open(t, ctx, env.pageURL(run.ID))
	waitFor(t, ctx, `g.task[data-task="parse"].state-running`)
	mark(t, ctx)
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`),
		chromedp.Click(chromedp.CSS(`.run-head button.danger`)),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `#run-status .badge.state-cancelled`)
	waitFor(t, ctx, `g.task[data-task="store"].state-cancelled`)
	checkMark(t, ctx)
	env.checkNoErrors(t)
}

// TestRunPageReplay replays a failed run from its page: the run comes back
// as its next generation, in the same page.
func TestRunPageReplay(t *testing.T) {
	env := start(t, nil, inspector.WithReadOnly(false))
	run := env.submit(t)
	env.release("parse")
	env.release("validate")
	ended, err := env.s.RunWait(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ended.Status != plait.RunFailed {
		t.Fatalf("the run ended %s, want failed (its lint fails)", ended.Status)
	}
	ctx := browser(t)
	env.watch(ctx)
	open(t, ctx, env.pageURL(run.ID))
	waitFor(t, ctx, `g.task[data-task="lint"].state-failed`)
	mark(t, ctx)
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`),
		chromedp.Click(chromedp.CSS(`.run-head .actions button`)),
	); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "dl.facts", "Generation")
	waitFor(t, ctx, `#run-status .badge.state-failed`)
	checkMark(t, ctx)
	env.checkNoErrors(t)
}
