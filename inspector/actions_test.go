package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
)

// act posts an action's body and answers the recorder.
func act(h http.Handler, a, body string) *httptest.ResponseRecorder {
	return do(h, "POST", "/api/v1/actions/"+a, strings.NewReader(body), "Sec-Fetch-Site", "same-origin")
}

type actReport struct {
	Action              string
	DryRun              bool
	Count               int
	Skipped             json.RawMessage // a count in a dry run, a list after an action
	Capped              bool
	Total, Done, Failed int
	Noted               int
	Items               []struct {
		ID, RunID, Task string
		Runs            []string
		Error           *struct{ Code string }
	}
}

// doFrom serves one request from the client at remote.
func doFrom(h http.Handler, method, target string, body io.Reader, remote string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, body)
	req.RemoteAddr = remote
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func actOK(t *testing.T, h http.Handler, a, body string) actReport {
	t.Helper()
	var rep actReport
	decode(t, act(h, a, body), &rep)
	return rep
}

// submitIdleN submits n one-task runs of workflow wf nothing runs.
func submitIdleN(t *testing.T, s *plait.Scheduler, wf string, n int) []string {
	t.Helper()
	var ids []string
	for range n {
		r, err := s.Submit(context.Background(), plait.NewWorkflow(wf).Task("wait", "ok", nil))
		must(t, err)
		ids = append(ids, r.ID)
	}
	return ids
}

// A query action's dry-run count is what the action then acts on, and the
// run's history shows the reason.
func TestActionQueryDryRunEqualsApply(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.s, WithReadOnly(false), WithActionRate(1000))
	submitIdleN(t, f.s, "bulk", 6)
	body := `{"runs": {"workflow": "bulk", "status": ["pending"]}, "reason": "bad deploy", "dryRun": true}`
	dry := actOK(t, h, ActionRunCancel, body)
	if !dry.DryRun || dry.Count != 6 || dry.Capped {
		t.Fatalf("dry run %+v, want 6", dry)
	}
	rep := actOK(t, h, ActionRunCancel, strings.Replace(body, `"dryRun": true`, `"max": 6`, 1))
	if rep.Total != dry.Count || rep.Done != dry.Count || rep.Failed != 0 || rep.Noted != dry.Count {
		t.Fatalf("report %+v, want %d done and noted", rep, dry.Count)
	}
	for _, it := range rep.Items {
		r, err := f.s.RunGet(t.Context(), it.ID)
		must(t, err)
		if r.Workflow != "bulk" || r.Status != plait.RunCancelled {
			t.Fatalf("run %s of %s is %s", r.ID, r.Workflow, r.Status)
		}
	}
	if r, _ := f.s.RunGet(t.Context(), f.idle); r.Status.Terminal() {
		t.Fatal("a run the query does not match was cancelled")
	}
	// Dead letters by query: the same.
	dry = actOK(t, h, ActionDeadLetterPurge, `{"deadLetters": {"error": "card"}, "reason": "known", "dryRun": true}`)
	rep = actOK(t, h, ActionDeadLetterPurge, `{"deadLetters": {"error": "card"}, "reason": "known"}`)
	if dry.Count != 1 || rep.Done != dry.Count {
		t.Fatalf("purge counted %d, did %d", dry.Count, rep.Done)
	}
}

func TestActionRefusals(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.s, WithReadOnly(false))
	submitIdleN(t, f.s, "bulk", 3)
	for _, c := range []struct {
		action, body string
		status       int
		code         string
	}{
		{ActionRunCancel, `{"runs": {"workflow": "bulk"}}`, 400, "invalid_argument"},                          // no reason
		{ActionRunCancel, `{"runs": {"workflow": "bulk"}, "reason": "r", "max": 2}`, 422, "too_many"},         // more than max
		{ActionRunCancel, `{"ids": ["` + f.idle + `"], "runs": {}}`, 400, "invalid_argument"},                 // two forms
		{ActionRunCancel, `{}`, 400, "invalid_argument"},                                                      // none
		{ActionRunCancel, `{"ids": ["` + f.idle + `"], "rate": 51}`, 400, "invalid_argument"},                 // over the ceiling
		{ActionRunCancel, `{"ids": ["a\u0001b"]}`, 400, "invalid_argument"},                                   // a control character
		{ActionRunCancel, `{"ids": ["nope"]}`, 404, "not_found"},                                              // one unknown item
		{ActionRunCancel, `{"ids": ["` + f.etl + `"]}`, 409, "conflict"},                                      // finished
		{ActionTaskSkip, `{"refs": [{"runId": "` + f.etl + `", "task": "load"}]}`, 409, "conflict"},           // succeeded
		{ActionTaskSkip, `{"refs": [{"runId": "` + f.etl + `", "task": "nope"}]}`, 404, "not_found"},          // no such task
		{ActionQueuePause, `{"refs": [{"runId": "` + f.etl + `", "task": "load"}]}`, 400, "invalid_argument"}, // wrong form
		{"run.explode", `{"ids": ["x"]}`, 404, "not_found"},
		{ActionRunCancel, `{"ids": ["x"], "extra": 1}`, 400, "invalid_argument"},
	} {
		rec := act(h, c.action, c.body)
		if rec.Code != c.status || errorCode(t, rec) != c.code {
			t.Errorf("%s %s: %d %s, want %d %s", c.action, c.body, rec.Code, rec.Body, c.status, c.code)
		}
	}
	r, err := f.s.RunGet(t.Context(), f.idle)
	must(t, err)
	if r.Status.Terminal() {
		t.Fatal("a refused action cancelled a run")
	}
}

// An action WithActions leaves out is refused, and config says so.
func TestActionDisabled(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.s, WithReadOnly(false), WithActions(ActionRunCancel))
	for _, c := range mutatingRoutes(t, f.idle, "wait") {
		rec := do(h, "POST", c.path, strings.NewReader(c.body))
		if c.action == ActionRunCancel {
			continue
		}
		if rec.Code != http.StatusForbidden || errorCode(t, rec) != "action_disabled" {
			t.Errorf("%s: %d %s, want 403 action_disabled", c.path, rec.Code, rec.Body)
		}
	}
	var cfg struct{ Actions map[string]bool }
	decode(t, do(h, "GET", "/api/v1/config", nil), &cfg)
	if !cfg.Actions[ActionRunCancel] || cfg.Actions[ActionRunReplay] {
		t.Errorf("config actions %v", cfg.Actions)
	}
	if _, err := New(f.s, WithActions("run.explode")); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("an unknown action: %v", err)
	}
}

// A selection is authorized item by item: one refused item refuses all.
func TestActionAuthorizedPerItem(t *testing.T) {
	f := newFixture(t)
	ids := submitIdleN(t, f.s, "bulk", 3)
	var mu sync.Mutex
	var asked []string
	h := newHandler(t, f.s, WithReadOnly(false), WithAuthorizer(func(r *http.Request, action, resource string) error {
		mu.Lock()
		asked = append(asked, action+" "+resource)
		mu.Unlock()
		if resource == "run:"+ids[2] {
			return errors.New("not that one")
		}
		return nil
	}))
	body, _ := json.Marshal(map[string]any{"ids": ids})
	if rec := act(h, ActionRunCancel, string(body)); rec.Code != http.StatusForbidden {
		t.Fatalf("a selection with a refused item: %d %s", rec.Code, rec.Body)
	}
	if len(asked) != 3 || asked[0] != "run.cancel run:"+ids[0] {
		t.Errorf("asked %q", asked)
	}
	for _, id := range ids {
		if r, _ := f.s.RunGet(t.Context(), id); r.Status.Terminal() {
			t.Fatal("a refused selection acted")
		}
	}
	asked = nil
	actOK(t, h, ActionRunNote, `{"runs": {"workflow": "bulk"}, "reason": "r", "dryRun": true}`)
	if len(asked) != 1 || asked[0] != "run.note runs" {
		t.Errorf("a query asked %q", asked)
	}
}

// A client that starts actions faster than the floor is answered 429 with
// Retry-After, and one more start comes back per interval.
func TestActionStartLimit(t *testing.T) {
	f := newFixture(t)
	clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	h := newHandler(t, f.s, WithReadOnly(false), WithActionStarts(3, 2*time.Second))
	h.now = clk.Now
	dry := `{"ids": ["` + f.idle + `"], "dryRun": true}`
	for i := range 3 {
		if rec := act(h, ActionRunCancel, dry); rec.Code != http.StatusOK {
			t.Fatalf("start %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	rec := act(h, ActionRunCancel, dry)
	if rec.Code != http.StatusTooManyRequests || errorCode(t, rec) != "rate_limited" || rec.Header().Get("Retry-After") != "2" {
		t.Fatalf("the fourth start: %d %s Retry-After %q", rec.Code, rec.Body, rec.Header().Get("Retry-After"))
	}
	if rec := do(h, "POST", "/api/v1/runs/"+f.idle+"/cancel", nil); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("a run route past the limit: %d", rec.Code)
	}
	clk.Advance(1999 * time.Millisecond)
	if rec := act(h, ActionRunCancel, dry); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("before the interval: %d", rec.Code)
	}
	clk.Advance(time.Millisecond)
	if rec := act(h, ActionRunCancel, dry); rec.Code != http.StatusOK {
		t.Fatalf("after the interval: %d", rec.Code)
	}
	// Another client has its own budget.
	req := strings.NewReader(dry)
	r2 := doFrom(h, "POST", "/api/v1/actions/"+ActionRunCancel, req, "10.0.0.9:1234")
	if r2.Code != http.StatusOK {
		t.Fatalf("another client: %d", r2.Code)
	}
	if r, _ := f.s.RunGet(t.Context(), f.idle); r.Status.Terminal() {
		t.Fatal("a dry run or a limited start acted")
	}
}

// An action goes at the rate asked: on a fake clock, one item per
// interval, never faster.
func TestActionRateHeld(t *testing.T) {
	f := newFixture(t)
	clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	h := newHandler(t, f.s, WithReadOnly(false))
	h.clock = clk
	ids := submitIdleN(t, f.s, "paced", 5)
	body, _ := json.Marshal(map[string]any{"ids": ids, "rate": 2, "reason": "slow"})
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- act(h, ActionRunCancel, string(body)) }()
	cancelled := func() int {
		n := 0
		for _, id := range ids {
			if r, _ := f.s.RunGet(context.Background(), id); r.Status == plait.RunCancelled {
				n++
			}
		}
		return n
	}
	for k := 1; k < len(ids); k++ {
		if !clk.WaitForTimers(1, nil) {
			t.Fatal("no timer")
		}
		if n := cancelled(); n != k {
			t.Fatalf("%d runs cancelled after %d half-seconds, want %d", n, k-1, k)
		}
		clk.Advance(499 * time.Millisecond)
		if n := cancelled(); n != k {
			t.Fatalf("%d runs cancelled early, want %d", n, k)
		}
		clk.Advance(time.Millisecond)
	}
	rec := <-done
	var rep actReport
	decode(t, rec, &rep)
	if rep.Done != len(ids) {
		t.Fatalf("report %+v", rep)
	}
}
