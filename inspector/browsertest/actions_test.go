package browsertest

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/inspector"
)

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
