package browsertest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/inspector"
)

// failedRun submits the pages' workflow and lets it end: failed, by its
// lint.
func (e *env) failedRun(t *testing.T) *plait.Run {
	t.Helper()
	run := e.submit(t)
	ended, err := e.s.RunWait(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ended.Status != plait.RunFailed {
		t.Fatalf("the run ended %s, want failed (its lint fails)", ended.Status)
	}
	return ended
}

// confirm answers the open action dialog once its dry run has counted
// want, giving reason when not empty.
func confirm(t *testing.T, ctx context.Context, want, reason string) {
	t.Helper()
	waitVisible(t, ctx, `dialog.act-dialog[open]`)
	waitText(t, ctx, `dialog.act-dialog .act-count`, want)
	if reason != "" {
		if err := chromedp.Do(ctx, chromedp.SendKeys(`dialog.act-dialog textarea[name="reason"]`, reason)); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click(`dialog.act-dialog button.confirm`)); err != nil {
		t.Fatal(err)
	}
}

// click clicks the first element the selector matches.
func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	waitVisible(t, ctx, sel)
	if err := chromedp.Do(ctx, chromedp.Click(sel)); err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
}

// shoot saves a screenshot of the page where the environment variable
// names a file.
func shoot(t *testing.T, ctx context.Context, envVar string) {
	t.Helper()
	path := os.Getenv(envVar)
	if path == "" {
		return
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(shot))
}

// TestDeadLetterReplay replays a failed run's letter from the dead-letter
// page: the letters of two failed runs make one group by their error; the
// replay of one (its dry run counting one) runs that run again, as its
// next generation, which its page shows. The group is then purged whole.
func TestDeadLetterReplay(t *testing.T) {
	env := start(t, nil, inspector.WithReadOnly(false))
	env.release("parse")
	env.release("validate")
	first := env.failedRun(t)
	second := env.failedRun(t)
	ctx := browser(t)
	env.watch(ctx)
	open(t, ctx, env.srv.URL+prefix+"/dead-letters")
	group := `details.group[data-key="lint: # problems in schema.sql"]`
	waitText(t, ctx, group+" .group-count", "2")
	mark(t, ctx)
	click(t, ctx, group+" summary")
	row := group + ` tr[data-run="` + second.ID + `"][data-task="lint"]`
	waitVisible(t, ctx, row)
	shoot(t, ctx, "PLAIT_SCREENSHOT_DEAD_LETTERS")
	click(t, ctx, row+` button[data-action="dead_letter.requeue"]`)
	confirm(t, ctx, "This acts on 1 letter", "the schema is fixed")
	waitText(t, ctx, "#notice", "Replay: 1 of 1 done")
	checkMark(t, ctx)

	// It runs again: the replay is the run's next generation, and it ends
	// (failed again: its lint still fails).
	again, err := env.s.RunWait(context.Background(), second.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Generation != 1 || again.Status != plait.RunFailed {
		t.Fatalf("after the replay the run is generation %d, %s; want 1, failed", again.Generation, again.Status)
	}
	if got, err := env.s.RunGet(context.Background(), first.ID); err != nil || got.Generation != 0 {
		t.Fatalf("the other run of the group: %v, %+v; want it untouched", err, got)
	}
	// Its lint failed again: the group holds both letters again; purged
	// as a group (a query by its key, so a reason is asked), none is left.
	open(t, ctx, env.srv.URL+prefix+"/dead-letters")
	waitText(t, ctx, group+" .group-count", "2")
	click(t, ctx, group+` summary button[data-action="dead_letter.purge"]`)
	confirm(t, ctx, "This acts on 2 letters", "the schema checks moved to CI")
	waitText(t, ctx, "#notice", "Purge: 2 of 2 done")
	waitText(t, ctx, "main", "No dead letter")

	open(t, ctx, env.pageURL(second.ID))
	waitText(t, ctx, "dl.facts", "Generation")
	waitFor(t, ctx, `g.task[data-task="lint"].state-failed`)
	env.checkNoErrors(t)
}

// TestQueuePauseFromPage pauses the default queue from the queues page:
// a run submitted once the nodes know waits, ready, on the paused queue,
// until the page resumes it. A read-only view offers no button.
func TestQueuePauseFromPage(t *testing.T) {
	ctx := browser(t)
	ro := start(t, nil)
	ro.watch(ctx)
	ro.submit(t)
	open(t, ctx, ro.srv.URL+prefix+"/queues")
	waitFor(t, ctx, `tr[data-queue="default"]`)
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("button.act").length`)); err != nil || n != 0 {
		t.Fatalf("a read-only queues page shows %d action buttons (%v)", n, err)
	}

	env := start(t, nil, inspector.WithReadOnly(false))
	env.watch(ctx)
	env.submit(t) // parse and validate hold the queue's entry open
	open(t, ctx, env.srv.URL+prefix+"/queues")
	q := `tr[data-queue="default"]`
	waitText(t, ctx, q+" td.running", "2")
	mark(t, ctx)
	click(t, ctx, q+` button[data-action="queue.pause"]`)
	confirm(t, ctx, "This acts on 1 queue", "")
	waitFor(t, ctx, q+` .badge.state-paused`)
	pausedAt := time.Now()
	env.heartbeatsSince(t, pausedAt, 2)

	later, err := env.s.Submit(context.Background(), plait.NewWorkflow("later").Task("one", "quick", nil))
	if err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, q+" td.ready", "1")
	shoot(t, ctx, "PLAIT_SCREENSHOT_QUEUES")
	got, err := env.s.RunGet(context.Background(), later.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st := got.Tasks[0].Status; st != plait.TaskReady {
		t.Fatalf("on the paused queue the task is %s, want ready (waiting)", st)
	}

	click(t, ctx, q+` button[data-action="queue.resume"]`)
	confirm(t, ctx, "This acts on 1 queue", "")
	waitFor(t, ctx, q+` .badge.state-active`)
	done, err := env.s.RunWait(context.Background(), later.ID)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != plait.RunCompleted {
		t.Fatalf("after the resume the run ended %s, want completed", done.Status)
	}
	waitText(t, ctx, q+" td.ready", "0")
	checkMark(t, ctx)
	env.checkNoErrors(t)
}

// heartbeatsSince waits until the live node has sent n heartbeats after
// since: a node learns of a pause from its heartbeat's answer.
func (e *env) heartbeatsSince(t *testing.T, since time.Time, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last time.Time
	seen := 0
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for seen < n {
		nodes, err := e.s.NodeList(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes) == 1 && nodes[0].HeartbeatAt.After(since) && !nodes[0].HeartbeatAt.Equal(last) {
			last = nodes[0].HeartbeatAt
			seen++
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d heartbeats after the pause, want %d", seen, n)
		}
		<-tick.C
	}
}
