package browsertest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/plaitdag/plait"
)

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

// TestRunsPageFiltersAndPages filters the runs page from its form, finds
// the filter in the URL, and pages through the result by cursor.
func TestRunsPageFiltersAndPages(t *testing.T) {
	env := start(t, nil)
	for range 3 {
		env.submit(t)
	}
	other, err := env.s.Submit(context.Background(), plait.NewWorkflow("other").Task("only", "quick", nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	env.watch(ctx)

	open(t, ctx, env.srv.URL+prefix+"/runs")
	waitText(t, ctx, "#run-count", "4 runs")
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`form.filters input[name="workflow"]`), "nightly-import")); err != nil {
		t.Fatal(err)
	}
	clickAndLoad(t, ctx, `form.filters button[type="submit"]`)
	waitText(t, ctx, "#run-count", "3 runs")
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.search`))
	if err != nil {
		t.Fatal(err)
	}
	if href != "?workflow=nightly-import" {
		t.Fatalf("the filter is not in the URL: %q", href)
	}
	if n := count(t, ctx, `table.runs a[href="runs/`+other.ID+`"]`); n != 0 {
		t.Fatalf("the filtered list shows the other workflow's run")
	}

	// Two pages of two runs and one.
	open(t, ctx, env.srv.URL+prefix+"/runs?workflow=nightly-import&limit=2")
	waitFor(t, ctx, `table.runs tbody tr`)
	if n := count(t, ctx, `table.runs tbody tr`); n != 2 {
		t.Fatalf("the first page shows %d runs, want 2", n)
	}
	clickAndLoad(t, ctx, `.pager a[rel="next"]`)
	waitFor(t, ctx, `.pager a[href^="runs?workflow=nightly-import"]:not([rel])`) // "First page"
	waitFor(t, ctx, `table.runs tbody tr`)
	if n := count(t, ctx, `table.runs tbody tr`); n != 1 {
		t.Fatalf("the second page shows %d runs, want 1", n)
	}
	env.checkNoErrors(t)
}

func count(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// clickAndLoad clicks an element that leads to another page and waits for
// that page's load.
func clickAndLoad(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(wctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel)))); err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
}
