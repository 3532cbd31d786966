package inspector

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/apijson"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

// fleet is a memstore with a live node, a saved schedule, a waiting run
// and a dead letter.
type fleet struct {
	st      *memstore.Store
	s       *plait.Scheduler
	h       *handler
	waiting string
	broken  string
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	st, err := memstore.New()
	must(t, err)
	s, err := plait.New(st, plait.WithLogger(quiet()), plait.WithQueueLimit("default", 4))
	must(t, err)
	must(t, s.Handle("ok", func(context.Context, *plait.Task) (any, error) { return nil, nil }))
	must(t, s.Handle("fail", func(context.Context, *plait.Task) (any, error) {
		return nil, plait.Permanent(errBadRequest("card declined"))
	}))
	ctx := t.Context()
	fl := &fleet{st: st, s: s, h: newHandler(t, s, WithReadOnly(false))}
	broken, err := s.Submit(ctx, plait.NewWorkflow("broken").Task("charge", "fail", nil))
	must(t, err)
	fl.broken = broken.ID
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	_, err = s.RunWait(ctx, broken.ID)
	cancel()
	must(t, <-done)
	must(t, err)
	w, err := s.Submit(ctx, plait.NewWorkflow("idle").Task("wait", "ok", nil, plait.OnQueue("render")))
	must(t, err)
	fl.waiting = w.ID
	_, err = st.NodeHeartbeat(ctx, &store.NodeHeartbeatParams{Node: store.NodeInfo{
		ID: "node-1", Name: "worker-1", Host: "h1", Capabilities: []string{"gpu"}, Queues: []string{"default"},
		Handlers: []string{"ok"}, Capacity: 4, Load: 1, Tasks: []store.NodeTask{{RunID: "r1", Task: "t1", Attempt: 2}},
	}, TTL: time.Hour, HistoryLimit: 10})
	must(t, err)
	_, err = s.ScheduleSave(ctx, &plait.Schedule{Name: "hourly", Spec: "@every 1h", Workflow: plait.NewWorkflow("tick").Task("a", "ok", nil)})
	must(t, err)
	return fl
}

func getJSON(t *testing.T, h http.Handler, path string, v any) {
	t.Helper()
	decode(t, do(h, "GET", path, nil), v)
}

func TestDeadLetterRoutes(t *testing.T) {
	fl := newFleet(t)
	var list struct {
		Letters    []deadLetterJSON
		NextCursor string
	}
	getJSON(t, fl.h, "/api/v1/dead-letters?workflow=broken", &list)
	if len(list.Letters) != 1 || list.Letters[0].RunID != fl.broken || list.Letters[0].Task != "charge" ||
		list.Letters[0].Status != "failed" || !strings.Contains(list.Letters[0].Error, "card declined") {
		t.Fatalf("letters %+v", list)
	}
	getJSON(t, fl.h, "/api/v1/dead-letters?errorKey="+url.QueryEscape(plait.DeadLetterErrorKey(list.Letters[0].Error)), &list)
	if len(list.Letters) != 1 {
		t.Fatalf("letters of the group: %+v", list.Letters)
	}
	getJSON(t, fl.h, "/api/v1/dead-letters?errorKey=nothing", &list)
	if len(list.Letters) != 0 {
		t.Fatalf("letters of another group: %+v", list.Letters)
	}
	getJSON(t, fl.h, "/api/v1/dead-letters?workflow=other", &list)
	if len(list.Letters) != 0 {
		t.Fatalf("letters of another workflow: %+v", list.Letters)
	}
	var groups struct {
		Groups []struct {
			Key    string
			Count  int
			Sample deadLetterJSON
		}
		Letters   int
		Truncated bool
	}
	getJSON(t, fl.h, "/api/v1/dead-letters/groups", &groups)
	if len(groups.Groups) != 1 || groups.Groups[0].Count != 1 || groups.Groups[0].Sample.RunID != fl.broken || groups.Letters != 1 {
		t.Fatalf("groups %+v", groups)
	}
	for _, q := range []string{"limit=0", "limit=1001", "since=yesterday", "window=0", "runId=a%01b"} {
		path := "/api/v1/dead-letters?" + q
		if strings.HasPrefix(q, "window") {
			path = "/api/v1/dead-letters/groups?" + q
		}
		if rec := do(fl.h, "GET", path, nil); rec.Code != http.StatusBadRequest {
			t.Errorf("%s: %d", path, rec.Code)
		}
	}
	keyBody, _ := json.Marshal(map[string]any{"deadLetters": map[string]string{"errorKey": groups.Groups[0].Key}, "reason": "r", "dryRun": true})
	if dry := actOK(t, fl.h, ActionDeadLetterPurge, string(keyBody)); dry.Count != 1 {
		t.Fatalf("a group's purge counted %d", dry.Count)
	}
	// Requeue from the page: the run runs again.
	rep := actOK(t, fl.h, ActionDeadLetterRequeue, `{"refs": [{"runId": "`+fl.broken+`", "task": "charge"}], "reason": "fixed"}`)
	if rep.Done != 1 || rep.Noted != 1 {
		t.Fatalf("requeue %+v", rep)
	}
	r, err := fl.s.RunGet(t.Context(), fl.broken)
	must(t, err)
	if r.Generation != 1 || r.Status.Terminal() {
		t.Fatalf("requeued run: generation %d %s", r.Generation, r.Status)
	}
}

func TestQueueRoutes(t *testing.T) {
	fl := newFleet(t)
	var qs struct {
		Items    []fleetQueueJSON
		Warnings []string
	}
	getJSON(t, fl.h, "/api/v1/queues", &qs)
	byName := map[string]fleetQueueJSON{}
	for _, q := range qs.Items {
		byName[q.Name] = q
	}
	render, def := byName["render"], byName["default"]
	if render.Ready+render.Normal == 0 || render.Normal != render.Ready || !render.Unserved || len(render.Nodes) != 0 {
		t.Fatalf("render queue %+v", render)
	}
	if def.Limit != 4 || len(def.Nodes) != 1 || def.Nodes[0] != "node-1" || def.Unserved {
		t.Fatalf("default queue %+v", def)
	}
	if len(qs.Warnings) != 1 || !strings.Contains(qs.Warnings[0], "render") {
		t.Fatalf("warnings %q", qs.Warnings)
	}
	actOK(t, fl.h, ActionQueuePause, `{"ids": ["render"]}`)
	getJSON(t, fl.h, "/api/v1/queues", &qs)
	for _, q := range qs.Items {
		if q.Name == "render" && !q.Paused {
			t.Fatal("render not paused")
		}
	}
	actOK(t, fl.h, ActionQueueResume, `{"ids": ["render"]}`)
	paused, err := fl.s.QueueListPaused(t.Context())
	must(t, err)
	if len(paused) != 0 {
		t.Fatalf("paused after resume: %q", paused)
	}
}

func TestNodeRoutes(t *testing.T) {
	fl := newFleet(t)
	var ns struct {
		Items    []fleetNodeJSON
		Live     int
		Warnings []string
	}
	getJSON(t, fl.h, "/api/v1/nodes", &ns)
	if ns.Live != 1 || len(ns.Items) != 1 {
		t.Fatalf("nodes %+v", ns)
	}
	n := ns.Items[0]
	if n.ID != "node-1" || n.Capabilities[0] != "gpu" || n.Load != 1 || len(n.Held) != 1 || n.Held[0].Attempt != 2 || n.DrainRequested {
		t.Fatalf("node %+v", n)
	}
	if len(ns.Warnings) != 1 || !strings.Contains(ns.Warnings[0], "queue render") {
		t.Fatalf("warnings %q", ns.Warnings)
	}
	actOK(t, fl.h, ActionNodeDrain, `{"ids": ["node-1"]}`)
	getJSON(t, fl.h, "/api/v1/nodes", &ns)
	if !ns.Items[0].DrainRequested {
		t.Fatal("drain not requested")
	}
	if rec := act(fl.h, ActionNodeDrain, `{"ids": ["node-9"]}`); rec.Code != http.StatusNotFound {
		t.Fatalf("drain of an unknown node: %d", rec.Code)
	}
}

func TestScheduleRoutes(t *testing.T) {
	fl := newFleet(t)
	var ss struct {
		Items []apijson.Schedule
		Note  string
	}
	getJSON(t, fl.h, "/api/v1/schedules", &ss)
	if len(ss.Items) != 1 || ss.Items[0].Name != "hourly" || ss.Items[0].Spec != "@every 1h" || ss.Items[0].Paused ||
		time.Time(ss.Items[0].NextFire).IsZero() || !strings.Contains(ss.Note, "overwrites") {
		t.Fatalf("schedules %+v", ss)
	}
	actOK(t, fl.h, ActionSchedulePause, `{"ids": ["hourly"]}`)
	getJSON(t, fl.h, "/api/v1/schedules", &ss)
	if !ss.Items[0].Paused {
		t.Fatal("not paused")
	}
	actOK(t, fl.h, ActionScheduleResume, `{"ids": ["hourly"]}`)
	rep := actOK(t, fl.h, ActionScheduleTrigger, `{"ids": ["hourly"]}`)
	if len(rep.Items) != 1 || len(rep.Items[0].Runs) != 1 {
		t.Fatalf("trigger %+v", rep)
	}
	rep = actOK(t, fl.h, ActionScheduleBackfill, `{"ids": ["hourly"], "from": "2026-01-01T00:00:00Z", "to": "2026-01-01T02:30:00Z"}`)
	if len(rep.Items) != 1 || len(rep.Items[0].Runs) != 3 {
		t.Fatalf("backfill of 00:00, 01:00, 02:00: %+v", rep)
	}
	if rec := act(fl.h, ActionSchedulePause, `{"ids": ["nope"]}`); rec.Code != http.StatusNotFound {
		t.Fatalf("pause of an unknown schedule: %d", rec.Code)
	}
}

func TestRunAndTaskActions(t *testing.T) {
	fl := newFleet(t)
	ctx := t.Context()
	// Task controls on the waiting run's task.
	ref := `{"refs": [{"runId": "` + fl.waiting + `", "task": "wait"}], "reason": "not needed"}`
	if rec := act(fl.h, ActionTaskRunNow, ref); rec.Code != http.StatusConflict {
		t.Fatalf("run now of a ready task: %d %s", rec.Code, rec.Body)
	}
	actOK(t, fl.h, ActionTaskSkip, ref)
	r, err := fl.s.RunGet(ctx, fl.waiting)
	must(t, err)
	if r.Task("wait").Status != plait.TaskSkipped || !r.Status.Terminal() {
		t.Fatalf("after skip: %s %s", r.Task("wait").Status, r.Status)
	}
	other, err := fl.s.Submit(ctx, plait.NewWorkflow("idle").Task("wait", "ok", nil, plait.OnQueue("render")))
	must(t, err)
	actOK(t, fl.h, ActionTaskCancel, `{"refs": [{"runId": "`+other.ID+`", "task": "wait"}]}`)
	r, err = fl.s.RunGet(ctx, other.ID)
	must(t, err)
	if r.Task("wait").Status != plait.TaskCancelled {
		t.Fatalf("after cancel: %s", r.Task("wait").Status)
	}
	// Run now: a task delayed by an hour becomes ready.
	delayed, err := fl.s.Submit(ctx, plait.NewWorkflow("later").Task("tick", "ok", nil, plait.Delay(time.Hour)))
	must(t, err)
	actOK(t, fl.h, ActionTaskRunNow, `{"refs": [{"runId": "`+delayed.ID+`", "task": "tick"}], "reason": "now please"}`)
	r, err = fl.s.RunGet(ctx, delayed.ID)
	must(t, err)
	if r.Task("tick").Status != plait.TaskReady {
		t.Fatalf("after run now: %s", r.Task("tick").Status)
	}
	// Replay by query: the failed run runs again.
	replay := `{"runs": {"status": ["failed"]}, "reason": "retry all"`
	dry := actOK(t, fl.h, ActionRunReplay, replay+`, "dryRun": true}`)
	rep := actOK(t, fl.h, ActionRunReplay, replay+`}`)
	if dry.Count != 1 || rep.Done != 1 || rep.Items[0].ID != fl.broken {
		t.Fatalf("replay counted %d, did %+v", dry.Count, rep)
	}
	// A note, then a delete of the finished runs by query.
	actOK(t, fl.h, ActionRunNote, `{"ids": ["`+fl.broken+`"], "reason": "looked at it"}`)
	ev, err := fl.st.EventRead(ctx, &store.EventReadParams{RunID: fl.broken, Limit: 1000})
	must(t, err)
	var notes []string
	for _, e := range ev.Events {
		if e.Type == store.EventRunNote {
			notes = append(notes, e.Note)
		}
	}
	if len(notes) != 2 || notes[0] != "run.replay by inspector 192.0.2.1:1234: retry all" ||
		!strings.HasPrefix(notes[1], "run.note by inspector ") || !strings.HasSuffix(notes[1], ": looked at it") {
		t.Fatalf("notes %q", notes)
	}
	del := `{"runs": {"workflow": "idle", "status": ["completed", "cancelled"]}, "reason": "cleanup"`
	dry = actOK(t, fl.h, ActionRunDelete, del+`, "dryRun": true}`)
	rep = actOK(t, fl.h, ActionRunDelete, del+`}`)
	if dry.Count != 2 || rep.Done != dry.Count {
		t.Fatalf("delete counted %d, did %+v", dry.Count, rep)
	}
	if _, err := fl.s.RunGet(ctx, fl.waiting); err == nil {
		t.Fatal("a deleted run is still there")
	}
}

// The live tail streams the store's events from now, filtered by type.
func TestEventTail(t *testing.T) {
	fl := newFleet(t)
	srv := httptest.NewServer(fl.h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := openStream(t, ctx, srv.URL+"/api/v1/events?types=run_note,run_cancelled")
	if first := s.next(t); first.retry == "" {
		t.Fatalf("first frame %+v", first)
	}
	must(t, fl.s.RunNote(ctx, fl.broken, "hello"))
	_, err := fl.s.RunCancel(ctx, fl.waiting)
	must(t, err)
	got := s.eventsUntil(t, "run_cancelled")
	if len(got) != 2 || got[0].event != "run_note" {
		t.Fatalf("tail %+v", got)
	}
	var ev struct{ Note, RunID string }
	must(t, json.Unmarshal([]byte(got[0].data), &ev))
	if ev.Note != "hello" || ev.RunID != fl.broken {
		t.Fatalf("note event %+v", ev)
	}
	if rec := do(fl.h, "GET", "/api/v1/events?types=a%01b", nil); rec.Code != http.StatusBadRequest {
		t.Fatalf("a type with a control character: %d", rec.Code)
	}
}
