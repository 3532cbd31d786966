package browsertest

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/inspector"
)

// TestRunsPageActions cancels one running run picked by its checkbox, then
// the others by "cancel all matching" on the running filter: the dialog
// counts them first and asks a reason before it acts.
func TestRunsPageActions(t *testing.T) {
	env := start(t, nil, inspector.WithReadOnly(false))
	runs := []*plait.Run{env.submit(t), env.submit(t), env.submit(t)}
	ctx := browser(t)
	env.watch(ctx)
	open(t, ctx, env.srv.URL+prefix+"/runs?status=running")
	for _, r := range runs {
		waitFor(t, ctx, `tr[data-run="`+r.ID+`"] input.pick`)
	}
	mark(t, ctx)
	click(t, ctx, `tr[data-run="`+runs[0].ID+`"] input.pick`)
	waitText(t, ctx, "#selected-count", "1 selected")
	click(t, ctx, `#run-actions .sel-actions button[data-action="run.cancel"]`)
	confirm(t, ctx, "This acts on 1 run", "")
	waitText(t, ctx, "#notice", "Cancel: 1 of 1 done")
	waitText(t, ctx, "#run-count", "2 runs")
	status(t, env, runs[0].ID, plait.RunCancelled)

	click(t, ctx, `#run-actions .act-group > button[data-action="run.cancel"]`)
	waitText(t, ctx, `dialog.act-dialog .act-count`, "This acts on 2 runs")
	click(t, ctx, `dialog.act-dialog button.confirm`)
	waitText(t, ctx, `dialog.act-dialog .err`, "needs a reason")
	shoot(t, ctx, "PLAIT_SCREENSHOT_RUNS_DIALOG")
	confirm(t, ctx, "This acts on 2 runs", "a bad deploy")
	waitText(t, ctx, "#notice", "Cancel: 2 of 2 done; the reason is in 2 runs' history")
	for _, r := range runs[1:] {
		status(t, env, r.ID, plait.RunCancelled)
	}
	checkMark(t, ctx)
	env.checkNoErrors(t)
}

// status checks a run's status.
func status(t *testing.T, env *env, id string, want plait.RunStatus) {
	t.Helper()
	got, err := env.s.RunGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != want {
		t.Fatalf("run %s is %s, want %s", id, got.Status, want)
	}
}

// TestRunPageTaskControls cancels one running task from its row on the
// run page: the task turns cancelled, the run goes on; a finished task
// offers no control.
func TestRunPageTaskControls(t *testing.T) {
	env := start(t, nil, inspector.WithReadOnly(false))
	run := env.submit(t)
	ctx := browser(t)
	env.watch(ctx)
	open(t, ctx, env.pageURL(run.ID))
	waitFor(t, ctx, `g.task[data-task="parse"].state-running`)
	waitFor(t, ctx, `tr[data-task="fetch"] .badge.state-succeeded`)
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('tr[data-task="fetch"] button.act').length`)); err != nil || n != 0 {
		t.Fatalf("a succeeded task offers %d controls (%v)", n, err)
	}
	mark(t, ctx)
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(`#task-filter`)); err != nil {
		t.Fatal(err)
	}
	shoot(t, ctx, "PLAIT_SCREENSHOT_TASK_CONTROLS")
	click(t, ctx, `tr[data-task="parse"] button[data-action="task.cancel"]`)
	confirm(t, ctx, "This acts on 1 task", "stuck on a lock")
	waitFor(t, ctx, `tr[data-task="parse"] .badge.state-cancelled`)
	waitFor(t, ctx, `g.task[data-task="parse"].state-cancelled`)
	checkMark(t, ctx)
	got, err := env.s.RunGet(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range got.Tasks {
		if task.Name == "parse" && task.Status != plait.TaskCancelled {
			t.Fatalf("parse is %s, want cancelled", task.Status)
		}
	}
	env.checkNoErrors(t)
}

// TestFleetPages opens the nodes, schedules and live event pages: the node
// with its drain, a schedule with its note and controls, and the events of
// a run submitted while the tail is open.
func TestFleetPages(t *testing.T) {
	env := start(t, nil, inspector.WithReadOnly(false))
	if _, err := env.s.ScheduleSave(context.Background(), &plait.Schedule{
		Name: "nightly-import", Spec: "0 2 * * *", TimeZone: "Europe/Paris",
		Workflow: plait.NewWorkflow("nightly-import").Task("fetch", "quick", nil),
	}); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	env.watch(ctx)

	open(t, ctx, env.srv.URL+prefix+"/nodes")
	waitFor(t, ctx, `table.nodes tbody tr button[data-action="node.drain"]`)
	waitText(t, ctx, "#node-count", "1 live node")
	shoot(t, ctx, "PLAIT_SCREENSHOT_NODES")

	open(t, ctx, env.srv.URL+prefix+"/schedules")
	row := `tr[data-schedule="nightly-import"]`
	waitFor(t, ctx, row+` button[data-action="schedule.pause"]`)
	waitText(t, ctx, ".schedule-note", "overwrites")
	click(t, ctx, row+` button[data-action="schedule.trigger"]`)
	confirm(t, ctx, "This acts on 1 schedule", "")
	waitText(t, ctx, "#notice", "Trigger: 1 of 1 done")
	// A backfill of the last three days: the dialog counts once both
	// times are given; the schedule fired at 02:00 Paris time each day.
	click(t, ctx, row+` button[data-action="schedule.backfill"]`)
	waitText(t, ctx, `dialog.act-dialog .act-count`, "Fill in the fields")
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const local = (ms) => new Date(ms - new Date(ms).getTimezoneOffset() * 60000).toISOString().slice(0, 16);
		for (const [name, ms] of [["from", Date.now() - 3 * 86400000], ["to", Date.now()]]) {
			const input = document.querySelector('dialog.act-dialog input[name="' + name + '"]');
			input.value = local(ms);
			input.dispatchEvent(new Event("change"));
		}
	})()`)); err != nil {
		t.Fatal(err)
	}
	confirm(t, ctx, "This acts on 1 schedule", "")
	waitText(t, ctx, "#notice", "Backfill: 1 of 1 done; started runs ")
	click(t, ctx, row+` button[data-action="schedule.pause"]`)
	confirm(t, ctx, "This acts on 1 schedule", "")
	waitFor(t, ctx, row+` .badge.state-paused`)
	shoot(t, ctx, "PLAIT_SCREENSHOT_SCHEDULES")

	open(t, ctx, env.srv.URL+prefix+"/events")
	waitFor(t, ctx, "#live.on")
	run := env.submit(t)
	waitFor(t, ctx, `table.events tr[data-type="task_running"] a[href="runs/`+run.ID+`"]`)
	shoot(t, ctx, "PLAIT_SCREENSHOT_EVENTS")
	env.checkNoErrors(t)
}

// TestRunPageRunNowAndSkip starts a task held by an hour's delay now, and
// skips another, from their rows: the first runs and succeeds, the second
// is skipped, and the run completes.
func TestRunPageRunNowAndSkip(t *testing.T) {
	env := start(t, nil, inspector.WithReadOnly(false))
	run, err := env.s.Submit(context.Background(), plait.NewWorkflow("delayed").
		Task("later", "quick", nil, plait.Delay(time.Hour)).
		Task("never", "quick", nil, plait.Delay(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	env.watch(ctx)
	open(t, ctx, env.pageURL(run.ID))
	mark(t, ctx)
	click(t, ctx, `tr[data-task="later"] button[data-action="task.run_now"]`)
	confirm(t, ctx, "This acts on 1 task", "")
	waitFor(t, ctx, `tr[data-task="later"] .badge.state-succeeded`)
	click(t, ctx, `tr[data-task="never"] button[data-action="task.skip"]`)
	confirm(t, ctx, "This acts on 1 task", "not needed today")
	waitFor(t, ctx, `tr[data-task="never"] .badge.state-skipped`)
	waitFor(t, ctx, `#run-status .badge.state-completed`)
	checkMark(t, ctx)
	status(t, env, run.ID, plait.RunCompleted)
	env.checkNoErrors(t)
}

// TestFleetPagesWithoutActions opens every page that acts on a handler
// that is read-only, and on one whose authorizer refuses every action:
// none shows a control.
func TestFleetPagesWithoutActions(t *testing.T) {
	ctx := browser(t)
	readsOnly := inspector.WithAuthorizer(func(r *http.Request, action, resource string) error {
		if action != inspector.ActionRead {
			return errors.New("readers only")
		}
		return nil
	})
	for name, opts := range map[string][]inspector.Option{
		"read-only":  nil,
		"authorizer": {inspector.WithReadOnly(false), readsOnly},
	} {
		env := start(t, nil, opts...)
		env.watch(ctx)
		env.release("parse")
		env.release("validate")
		run := env.failedRun(t)
		for _, page := range []struct{ path, ready string }{
			{"/dead-letters", "details.group"},
			{"/queues", "table.queues"},
			{"/nodes", "table.nodes"},
			{"/runs", "table.runs"},
			{"/runs/" + run.ID, `tr[data-task="lint"]`},
		} {
			open(t, ctx, env.srv.URL+prefix+page.path)
			waitFor(t, ctx, page.ready)
			n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("button.act, .act-bar, input.pick").length`))
			if err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%s: %s shows %d controls", name, page.path, n)
			}
		}
		env.checkNoErrors(t)
	}
}
