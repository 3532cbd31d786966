package browsertest

import (
	"context"
	"errors"
	"net/url"
	"testing"

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
