package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/apijson"
)

func TestRunActions(t *testing.T) {
	f := newFixture(t)
	var rep reportJSON
	decode(t, f.ok(t, "runs", "cancel", f.live, "-reason", "stuck", "-o", "json"), &rep)
	if rep.Action != "run.cancel" || rep.Done != 1 || rep.Failed != 0 || len(rep.Items) != 1 || rep.Items[0].ID != f.live || rep.Noted != 1 {
		t.Fatalf("runs cancel: %+v", rep)
	}
	var run runJSON
	decode(t, f.ok(t, "runs", "show", f.live, "-o", "json"), &run)
	if run.Status != "cancelled" {
		t.Fatalf("after runs cancel: %s", run.Status)
	}
	// Cancelling it again: nothing to do, refused.
	f.exit(t, ExitRefused, "runs", "cancel", f.live)
	f.exit(t, ExitNotFound, "runs", "cancel", "no-such-run")

	// A query: counted, refused without -yes, then done.
	var c countJSON
	out, _ := f.exit(t, ExitRefused, "runs", "delete", "-status", "completed", "-reason", "clean up", "-o", "json")
	decode(t, out, &c)
	if c.Action != "run.delete" || c.Count != 1 || !c.DryRun {
		t.Fatalf("runs delete without -yes: %+v", c)
	}
	var runs page[runJSON]
	decode(t, f.ok(t, "runs", "ls", "-o", "json"), &runs)
	if len(runs.Items) != 3 {
		t.Fatalf("a dry run deleted runs: %d left", len(runs.Items))
	}
	out = f.ok(t, "runs", "delete", "-status", "completed", "-reason", "clean up", "-dry-run")
	if !strings.Contains(out, "run.delete: 1 item(s)") {
		t.Fatalf("runs delete -dry-run:\n%s", out)
	}
	// The JSON of a confirmed query action is the count, then the report.
	out = f.ok(t, "runs", "delete", "-status", "completed", "-reason", "clean up", "-yes")
	if !strings.Contains(out, "run.delete: 1 item(s)") || !strings.Contains(out, "run.delete: 1 done, 0 failed") {
		t.Fatalf("runs delete -yes:\n%s", out)
	}
	f.exit(t, ExitNotFound, "runs", "show", f.done)

	// -max refuses a larger target and acts on nothing.
	f.exit(t, ExitRefused, "runs", "replay", f.failed, f.live, "-max", "1")
	f.exit(t, ExitUsage, "runs", "replay", f.failed, f.done, "-tasks", "charge")
	f.exit(t, ExitNotFound, "runs", "replay", f.failed, "-tasks", "receipt,nope") // no such task of the run
	decode(t, f.ok(t, "runs", "replay", f.failed, "-tasks", "charge", "-reason", "gateway fixed", "-o", "json"), &rep)
	if rep.Done != 1 {
		t.Fatalf("runs replay -tasks: %+v", rep)
	}
	decode(t, f.ok(t, "runs", "note", f.failed, "-reason", "looked at it", "-o", "json"), &rep)
	if rep.Action != "run.note" || rep.Done != 1 || rep.Noted != 1 {
		t.Fatalf("runs note: %+v", rep)
	}
}

func TestTaskActions(t *testing.T) {
	f := newFixture(t)
	// load waits on hold: it may be skipped; hold is running: it may not.
	_, errs := f.exit(t, ExitRefused, "tasks", "skip", f.live, "hold")
	if !strings.Contains(errs, "nothing done") {
		t.Fatalf("tasks skip of a running task: %s", errs)
	}
	var rep reportJSON
	decode(t, f.ok(t, "tasks", "skip", f.live, "load", "-reason", "not needed", "-o", "json"), &rep)
	if rep.Action != "task.skip" || rep.Done != 1 || rep.Items[0].RunID != f.live || rep.Items[0].Task != "load" {
		t.Fatalf("tasks skip: %+v", rep)
	}
	decode(t, f.ok(t, "tasks", "cancel", f.live, "hold", "-o", "json"), &rep)
	if rep.Done != 1 {
		t.Fatalf("tasks cancel: %+v", rep)
	}
	var run runJSON
	decode(t, f.ok(t, "runs", "show", f.live, "-o", "json"), &run)
	if run.Tasks[1].Status != "cancelled" || run.Tasks[2].Status != "skipped" {
		t.Fatalf("after tasks skip and cancel: %+v", run.Tasks)
	}
	f.exit(t, ExitRefused, "tasks", "run-now", f.live, "extract") // it has finished

	// A task waiting out a delay of an hour runs now.
	ctx := context.Background()
	later, err := f.worker.Submit(ctx, plait.NewWorkflow("later").Task("tick", "step", nil, plait.Delay(time.Hour)))
	must(t, err)
	decode(t, f.ok(t, "tasks", "run-now", later.ID, "tick", "-reason", "now", "-o", "json"), &rep)
	if rep.Action != "task.run_now" || rep.Done != 1 {
		t.Fatalf("tasks run-now: %+v", rep)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	end, err := f.worker.RunWait(wctx, later.ID)
	if err != nil || end.Status != plait.RunCompleted {
		t.Fatalf("the run after run-now: %v %v", end, err)
	}
	f.exit(t, ExitNotFound, "tasks", "cancel", f.live, "no-such-task")
}

func TestDeadLetterActions(t *testing.T) {
	f := newFixture(t)
	var c countJSON
	out, errs := f.exit(t, ExitRefused, "dlq", "replay", "-workflow", "billing", "-reason", "gateway fixed", "-o", "json")
	decode(t, out, &c)
	if c.Count != 1 || c.Action != "dead_letter.requeue" || !strings.Contains(errs, "-yes") {
		t.Fatalf("dlq replay without -yes: %+v %s", c, errs)
	}
	f.exit(t, ExitUsage, "dlq", "replay", "-workflow", "billing", "-yes") // no reason
	var groups groupsJSON
	decode(t, f.ok(t, "dlq", "groups", "-o", "json"), &groups)
	if len(groups.Groups) != 1 || groups.Letters != 1 || groups.Groups[0].Sample.RunID != f.failed {
		t.Fatalf("dlq groups: %+v", groups)
	}
	out, _ = f.exit(t, ExitRefused, "dlq", "replay", "-error-key", groups.Groups[0].Key, "-reason", "r", "-o", "json")
	decode(t, out, &c)
	if c.Count != 1 {
		t.Fatalf("dlq replay -error-key of the group: %+v", c)
	}
	out, _ = f.exit(t, ExitRefused, "dlq", "replay", "-error-key", "another error", "-reason", "r", "-o", "json")
	decode(t, out, &c)
	if c.Count != 0 {
		t.Fatalf("dlq replay -error-key of no group: %+v", c)
	}
	var rep reportJSON
	decode(t, f.ok(t, "dlq", "replay", "-workflow", "billing", "-reason", "gateway fixed", "-yes", "-rps", "100", "-o", "json"), &rep)
	if rep.Action != "dead_letter.requeue" || rep.Total != 1 || rep.Done != 1 || rep.Items[0].RunID != f.failed {
		t.Fatalf("dlq replay -yes: %+v", rep)
	}
	// The charge fails again and is a dead letter again: purge it by name.
	var letters page[letterJSON]
	f.waitLetters(t, 1)
	decode(t, f.ok(t, "dlq", "purge", f.failed+"/charge", "-o", "json"), &rep)
	if rep.Done != 1 {
		t.Fatalf("dlq purge: %+v", rep)
	}
	decode(t, f.ok(t, "dlq", "ls", "-o", "json"), &letters)
	if len(letters.Items) != 0 {
		t.Fatalf("dlq ls after purge: %+v", letters.Items)
	}
}

func TestQueueNodeScheduleActions(t *testing.T) {
	f := newFixture(t)
	f.ok(t, "queues", "pause", "default")
	var queues page[queueJSON]
	decode(t, f.ok(t, "queues", "ls", "-o", "json"), &queues)
	if !queues.Items[0].Paused {
		t.Fatalf("queues ls after pause: %+v", queues.Items)
	}
	f.ok(t, "queues", "resume", "default")
	decode(t, f.ok(t, "queues", "ls", "-o", "json"), &queues)
	if queues.Items[0].Paused {
		t.Fatalf("queues ls after resume: %+v", queues.Items)
	}

	if _, errs := f.exit(t, ExitOK, "schedules", "pause", "heartbeat"); !strings.Contains(errs, "overwrites a pause") {
		t.Fatalf("schedules pause says nothing of ScheduleSave: %s", errs)
	}
	var list page[apijson.Schedule]
	decode(t, f.ok(t, "schedules", "ls", "-o", "json"), &list)
	if !list.Items[0].Paused {
		t.Fatalf("schedules ls after pause: %+v", list.Items)
	}
	f.ok(t, "schedules", "resume", "heartbeat")
	var rep reportJSON
	decode(t, f.ok(t, "schedules", "trigger", "heartbeat", "-o", "json"), &rep)
	if rep.Done != 1 || len(rep.Items[0].Runs) != 1 {
		t.Fatalf("schedules trigger: %+v", rep)
	}
	decode(t, f.ok(t, "schedules", "backfill", "heartbeat", "-from", "3h", "-to", "1h", "-o", "json"), &rep)
	if rep.Done != 1 || len(rep.Items[0].Runs) != 2 {
		t.Fatalf("schedules backfill of two hours of @every 1h: %+v", rep)
	}
	f.exit(t, ExitNotFound, "schedules", "trigger", "no-such-schedule")

	f.exit(t, ExitNotFound, "nodes", "drain", "no-such-node")
	f.ok(t, "nodes", "drain", f.worker.NodeID())
	var nodes page[nodeJSON]
	decode(t, f.ok(t, "nodes", "ls", "-o", "json"), &nodes)
	if len(nodes.Items) != 1 || !nodes.Items[0].Draining {
		t.Fatalf("nodes ls after drain: %+v", nodes.Items)
	}
}
