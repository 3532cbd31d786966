package browsertest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/plaitdag/plait"
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
	mark(t, ctx)
	waitVisible(t, ctx, `#dag svg.dag`)
	waitFor(t, ctx, `g.task[data-task="parse"].state-running`)
	waitFor(t, ctx, `g.task[data-task="validate"].state-running`)
	waitText(t, ctx, "#live", "live")

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
