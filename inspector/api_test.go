package inspector

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestNewValidatesOptions(t *testing.T) {
	f := newFixture(t)
	for name, opts := range map[string][]Option{
		"nil authorizer":  {WithAuthorizer(nil)},
		"nil redactor":    {WithRedactor(nil)},
		"nil logger":      {WithLogger(nil)},
		"refresh too low": {WithMinRefresh(100 * time.Millisecond)},
		"nil option":      {nil},
	} {
		if _, err := New(f.s, opts...); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%s: err %v, want ErrInvalidOption", name, err)
		}
	}
	if _, err := New(nil); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("nil scheduler: err %v, want ErrInvalidOption", err)
	}
}

func TestConfig(t *testing.T) {
	f := newFixture(t)
	var c struct {
		Version      int
		ReadOnly     bool
		MinRefreshMs int64
		Actions      map[string]bool
		Events       bool
	}
	decode(t, do(newHandler(t, f.s), "GET", "/api/v1/config", nil), &c)
	if c.Version != 1 || !c.ReadOnly || c.MinRefreshMs != 2000 || c.Actions[ActionRunCancel] || c.Actions[ActionRunReplay] || len(c.Actions) != len(Actions()) || !c.Events {
		t.Errorf("default config %+v", c)
	}
	deny := WithAuthorizer(func(r *http.Request, action, resource string) error {
		if action == ActionReplay {
			return errors.New("no")
		}
		return nil
	})
	decode(t, do(newHandler(t, f.s, WithReadOnly(false), WithMinRefresh(5*time.Second), deny), "GET", "/api/v1/config", nil), &c)
	if c.ReadOnly || c.MinRefreshMs != 5000 || !c.Actions[ActionRunCancel] || c.Actions[ActionRunReplay] || !c.Actions[ActionNodeDrain] {
		t.Errorf("config %+v, want writable, 5s, cancel only", c)
	}
	decode(t, do(newHandler(t, newCoreOnly(t)), "GET", "/api/v1/config", nil), &c)
	if c.Events {
		t.Error("a store without EventStore answers events true")
	}
}

func TestRuns(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.s)
	type page struct {
		Runs []struct {
			ID, Workflow, Status string
			Total, Succeeded     int
			DurationMs           int64
		}
		NextCursor string
	}
	var p page
	decode(t, do(h, "GET", "/api/v1/runs", nil), &p)
	if len(p.Runs) != 3 || p.NextCursor != "" {
		t.Fatalf("runs %+v, want 3 on one page", p)
	}
	decode(t, do(h, "GET", "/api/v1/runs?status=completed,failed&limit=1", nil), &p)
	if len(p.Runs) != 1 || p.NextCursor == "" {
		t.Fatalf("first page %+v, want one run and a cursor", p)
	}
	first := p.Runs[0].ID
	decode(t, do(h, "GET", "/api/v1/runs?status=completed&status=failed&limit=1&cursor="+url.QueryEscape(p.NextCursor), nil), &p)
	if len(p.Runs) != 1 || p.Runs[0].ID == first {
		t.Fatalf("second page %+v", p)
	}
	decode(t, do(h, "GET", "/api/v1/runs?workflow=etl", nil), &p)
	if len(p.Runs) != 1 || p.Runs[0].ID != f.etl || p.Runs[0].Status != "completed" || p.Runs[0].Total != 3 || p.Runs[0].Succeeded != 3 {
		t.Fatalf("etl runs %+v", p)
	}
	decode(t, do(h, "GET", "/api/v1/runs?error=card", nil), &p)
	if len(p.Runs) != 1 || p.Runs[0].ID != f.broken {
		t.Fatalf("runs by error %+v, want broken", p)
	}
	from := url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339))
	decode(t, do(h, "GET", "/api/v1/runs?createdFrom="+from, nil), &p)
	if len(p.Runs) != 0 {
		t.Fatalf("runs created in the future %+v", p)
	}
	for _, q := range []string{"status=bogus", "createdFrom=yesterday", "limit=0", "limit=100000", "workflow=a%20b",
		"endedFrom=" + from + "&status=running"} {
		rec := do(h, "GET", "/api/v1/runs?"+q, nil)
		if rec.Code != http.StatusBadRequest || errorCode(t, rec) != "invalid_argument" {
			t.Errorf("?%s: %d %s, want 400 invalid_argument", q, rec.Code, rec.Body)
		}
	}
}

func TestRunCount(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.s)
	var c struct {
		Counts map[string]int64
		Total  int64
		Capped bool
	}
	decode(t, do(h, "GET", "/api/v1/runs/count", nil), &c)
	if c.Total != 3 || c.Counts["completed"] != 1 || c.Counts["failed"] != 1 || c.Capped {
		t.Fatalf("count %+v", c)
	}
	decode(t, do(h, "GET", "/api/v1/runs/count?workflow=broken", nil), &c)
	if c.Total != 1 || c.Counts["failed"] != 1 {
		t.Fatalf("count of broken %+v", c)
	}
	if rec := do(h, "GET", "/api/v1/runs/count?limit=-1", nil); rec.Code != http.StatusBadRequest {
		t.Errorf("limit -1: %d", rec.Code)
	}
}

func TestRunDetail(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.s)
	var d struct {
		Run struct {
			ID, Status, Strategy string
		}
		Tasks []struct {
			Name, Status, Join string
			Attempt            int
			StartedAt, EndedAt string
			Deps               []struct{ Task, On string }
			Progress           *struct{ Value float64 }
			Attempts           []struct {
				Attempt int
				Outcome string
			}
		}
		Notices []notice
	}
	decode(t, do(h, "GET", "/api/v1/runs/"+f.etl, nil), &d)
	if d.Run.ID != f.etl || d.Run.Status != "completed" || len(d.Tasks) != 3 || len(d.Notices) != 0 {
		t.Fatalf("run %+v", d)
	}
	load := d.Tasks[2]
	if load.Name != "load" || load.Status != "succeeded" || load.Join != "all" || len(load.Deps) != 1 ||
		load.Deps[0].Task != "transform" || load.Deps[0].On != "completion" || load.StartedAt == "" || load.EndedAt == "" {
		t.Errorf("load %+v", load)
	}
	if tr := d.Tasks[1]; tr.Progress == nil || tr.Progress.Value != 0.5 || len(tr.Attempts) != 1 || tr.Attempts[0].Attempt != 1 {
		t.Errorf("transform %+v", tr)
	}
	// Without RunSpecStore the run comes all the same, with a notice.
	s := newCoreOnly(t)
	rec := do(newHandler(t, s), "GET", "/api/v1/runs/"+f.etl, nil)
	if rec.Code != http.StatusNotFound || errorCode(t, rec) != "not_found" {
		t.Errorf("unknown run on a core store: %d %s", rec.Code, rec.Body)
	}
}

func TestRunDetailWithoutSpec(t *testing.T) {
	s := newCoreOnly(t)
	run := submitIdle(t, s)
	var d struct {
		Tasks []struct {
			Name string
			Deps []struct{ Task string }
		}
		Notices []notice
	}
	decode(t, do(newHandler(t, s), "GET", "/api/v1/runs/"+run, nil), &d)
	if len(d.Tasks) != 1 || len(d.Notices) != 1 || d.Notices[0].Code != "unsupported" || d.Notices[0].Section != "deps" {
		t.Fatalf("run on a core store %+v", d)
	}
}

func TestUnknownAndBadIDs(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.s, WithReadOnly(false))
	long := strings.Repeat("x", idMax+1)
	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/api/v1/runs/nope", 404, "not_found"},
		{"GET", "/api/v1/runs/nope/dag.svg", 404, "not_found"},
		{"GET", "/api/v1/runs/nope/events", 404, "not_found"},
		{"GET", "/api/v1/runs/nope/tasks/extract", 404, "not_found"},
		{"GET", "/api/v1/runs/" + f.etl + "/tasks/nope", 404, "not_found"},
		{"POST", "/api/v1/runs/nope/cancel", 404, "not_found"},
		{"POST", "/api/v1/runs/nope/replay", 404, "not_found"},
		{"POST", "/api/v1/runs/" + f.broken + "/replay", 200, ""},
		{"GET", "/api/v1/runs/bad%0Aid", 400, "invalid_argument"},
		{"GET", "/api/v1/runs/" + long, 400, "invalid_argument"},
		{"GET", "/api/v1/runs/" + f.etl + "/tasks/bad%00", 400, "invalid_argument"},
		{"POST", "/api/v1/runs/bad%0Aid/cancel", 400, "invalid_argument"},
		{"GET", "/api/v1/nothing", 404, "not_found"},
		{"GET", "/api/v1/runs//dag.svg", 404, "not_found"},
		{"GET", "/api/v2/runs", 404, "not_found"},
	} {
		rec := do(h, c.method, c.path, nil)
		if rec.Code != c.status || (c.code != "" && errorCode(t, rec) != c.code) {
			t.Errorf("%s %s: %d %s, want %d %s", c.method, c.path, rec.Code, rec.Body, c.status, c.code)
		}
	}
	rec := do(h, "POST", "/api/v1/runs/"+f.etl+"/replay", strings.NewReader(`{"tasks":["nope"]}`))
	if rec.Code != http.StatusNotFound {
		t.Errorf("replay of an unknown task: %d %s", rec.Code, rec.Body)
	}
}

func TestTaskDetail(t *testing.T) {
	f := newFixture(t)
	redacted := WithRedactor(func(kind, runID, task string, data []byte) []byte {
		if kind == "result" && task == "extract" {
			return nil
		}
		return data
	})
	h := newHandler(t, f.s, redacted)
	type data struct {
		Encoding, Data      string
		Size                int
		Truncated, Redacted bool
	}
	var d struct {
		RunID    string
		Task     struct{ Name, Status string }
		Attempts []struct {
			Attempt    int
			Outcome    string
			DurationMs int64
		}
		Logs *struct {
			Attempt int
			Lines   []struct{ Level, Text string }
		}
		Payload, Result *data
		Notices         []notice
	}
	decode(t, do(h, "GET", "/api/v1/runs/"+f.etl+"/tasks/extract", nil), &d)
	if d.RunID != f.etl || d.Task.Name != "extract" || len(d.Attempts) != 1 || d.Attempts[0].Outcome == "" {
		t.Fatalf("extract %+v", d)
	}
	if d.Payload == nil || d.Payload.Encoding != "text" || d.Payload.Data != string(f.textPayload) || d.Payload.Size != len(f.textPayload) {
		t.Errorf("text payload %+v", d.Payload)
	}
	if d.Result == nil || !d.Result.Redacted || d.Result.Data != "" {
		t.Errorf("redacted result %+v", d.Result)
	}
	decode(t, do(h, "GET", "/api/v1/runs/"+f.etl+"/tasks/load", nil), &d)
	if d.Payload == nil || d.Payload.Encoding != "base64" || d.Payload.Data != base64.StdEncoding.EncodeToString(f.binary) {
		t.Errorf("binary payload %+v", d.Payload)
	}
	if d.Result == nil || d.Result.Data != "done load" {
		t.Errorf("result %+v", d.Result)
	}
	decode(t, do(h, "GET", "/api/v1/runs/"+f.etl+"/tasks/transform", nil), &d)
	if d.Logs == nil || d.Logs.Attempt != 1 || len(d.Logs.Lines) != 1 || !strings.Contains(d.Logs.Lines[0].Text, "transforming") {
		t.Errorf("logs %+v", d.Logs)
	}
	if d.Payload != nil {
		t.Errorf("payload of a task with none %+v", d.Payload)
	}
	decode(t, do(h, "GET", "/api/v1/runs/"+f.idle+"/tasks/wait", nil), &d)
	if d.Logs != nil || d.Result != nil || len(d.Attempts) != 0 {
		t.Errorf("task never run %+v", d)
	}
}

func TestShownCutsAndEncodes(t *testing.T) {
	h := &handler{cfg: defaults()}
	big := []byte(strings.Repeat("é", ShownBytesMax)) // 2 bytes each
	d := h.shown("payload", "r", "t", big)
	if !d.Truncated || d.Encoding != "text" || d.Size != len(big) || len(d.Data) > ShownBytesMax || len(d.Data) < ShownBytesMax-4 {
		t.Errorf("cut text: truncated %v encoding %s size %d shown %d", d.Truncated, d.Encoding, d.Size, len(d.Data))
	}
	if d := h.shown("payload", "r", "t", nil); d != nil {
		t.Errorf("nil data shown as %+v", d)
	}
	if d := h.shown("result", "r", "t", []byte{0xc3}); d.Encoding != "base64" || d.Data != "ww==" {
		t.Errorf("invalid UTF-8 shown as %+v", d)
	}
}

func TestOverview(t *testing.T) {
	f := newFixture(t)
	var o struct {
		Hours  int
		Series []struct {
			At             string
			TasksSucceeded int64
			TasksFailed    int64
		}
		Queues *struct {
			Items []struct {
				Name  string
				Ready int
			}
			Ready int
		}
		Nodes       *struct{ Live int }
		DeadLetters *struct {
			Total, LastHour int
			Groups          []struct {
				Key   string
				Count int
			}
		}
		Health  struct{ Warnings []string }
		Notices []notice
	}
	decode(t, do(newHandler(t, f.s), "GET", "/api/v1/overview?hours=2", nil), &o)
	if o.Hours != 2 || len(o.Series) != 120 {
		t.Fatalf("hours %d, %d points, want 2 and 120", o.Hours, len(o.Series))
	}
	var ok, failed int64
	for _, p := range o.Series {
		ok, failed = ok+p.TasksSucceeded, failed+p.TasksFailed
	}
	if ok != 3 || failed != 1 {
		t.Errorf("series counts %d succeeded %d failed, want 3 and 1", ok, failed)
	}
	if o.Queues == nil || o.Queues.Ready != 1 || o.Nodes == nil || o.DeadLetters == nil || o.DeadLetters.Total != 1 ||
		o.DeadLetters.LastHour != 1 || len(o.DeadLetters.Groups) != 1 || len(o.Notices) != 0 {
		t.Errorf("overview %+v", o)
	}
	if len(o.Health.Warnings) != 0 {
		t.Errorf("warnings %v for a healthy client", o.Health.Warnings)
	}
	if rec := do(newHandler(t, f.s), "GET", "/api/v1/overview?hours=25", nil); rec.Code != http.StatusBadRequest {
		t.Errorf("hours=25: %d", rec.Code)
	}
	decode(t, do(newHandler(t, newCoreOnly(t)), "GET", "/api/v1/overview", nil), &o)
	if o.Series != nil || o.Queues != nil || o.Nodes != nil || o.DeadLetters != nil || len(o.Notices) != 4 {
		t.Errorf("overview on a core store %+v", o)
	}
	for _, n := range o.Notices {
		if n.Code != "unsupported" {
			t.Errorf("notice %+v", n)
		}
	}
}

func TestUnsupportedAnswers501(t *testing.T) {
	s := newCoreOnly(t)
	run := submitIdle(t, s)
	h := newHandler(t, s)
	for _, p := range []string{"/api/v1/runs", "/api/v1/runs/count", "/api/v1/runs/" + run + "/dag.svg", "/api/v1/runs/" + run + "/events"} {
		rec := do(h, "GET", p, nil)
		if rec.Code != http.StatusNotImplemented || errorCode(t, rec) != "unsupported" {
			t.Errorf("%s: %d %s, want 501 unsupported", p, rec.Code, rec.Body)
		}
	}
}

func TestLargeAnswersGzipped(t *testing.T) {
	big := []byte(`{"x":"` + strings.Repeat("a", 3*gzipFrom) + `"}`)
	for _, c := range []struct {
		accept string
		gzip   bool
	}{{"gzip, deflate, br", true}, {"br;q=1.0, GZIP;q=0.5", true}, {"gzip;q=0", false}, {"", false}, {"deflate", false}} {
		req := httptest.NewRequest("GET", "/api/v1/runs/x", nil)
		req.Header.Set("Accept-Encoding", c.accept)
		rec := httptest.NewRecorder()
		writeBody(rec, req, http.StatusOK, "application/json", big)
		got := rec.Body.Bytes()
		if c.gzip {
			if rec.Header().Get("Content-Encoding") != "gzip" {
				t.Errorf("Accept-Encoding %q: not compressed", c.accept)
				continue
			}
			zr, err := gzip.NewReader(rec.Body)
			must(t, err)
			got, err = io.ReadAll(zr)
			must(t, err)
		} else if rec.Header().Get("Content-Encoding") != "" {
			t.Errorf("Accept-Encoding %q: compressed", c.accept)
		}
		if !bytes.Equal(got, big) {
			t.Errorf("Accept-Encoding %q: body changed", c.accept)
		}
	}
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	writeBody(rec, req, http.StatusOK, "application/json", []byte(`{}`))
	if rec.Header().Get("Content-Encoding") != "" {
		t.Error("a small answer is compressed")
	}
}
