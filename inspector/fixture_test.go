package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a memstore with three runs: etl completed (a chain with a
// text payload, a logging task and a binary payload), broken failed (its
// first task fails for good), idle waiting (nothing runs it).
type fixture struct {
	s                   *plait.Scheduler
	etl, broken, idle   string
	binary, textPayload []byte
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := memstore.New(memstore.WithStats(0))
	if err != nil {
		t.Fatal(err)
	}
	s, err := plait.New(st, plait.WithLogger(quiet()))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{s: s, binary: []byte{0xff, 0xfe, 0x00, 0x01}, textPayload: []byte(`{"file":"in.csv"}`)}
	must(t, s.Handle("ok", func(ctx context.Context, tk *plait.Task) (any, error) { return plait.Raw("done " + tk.Name), nil }))
	must(t, s.Handle("log", func(ctx context.Context, tk *plait.Task) (any, error) {
		tk.Logger().Info("transforming", "rows", 3)
		if err := tk.Progress(0.5, "half"); err != nil {
			return nil, err
		}
		return nil, nil
	}))
	must(t, s.Handle("fail", func(ctx context.Context, tk *plait.Task) (any, error) {
		return nil, plait.Permanent(errors.New("card declined"))
	}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	etl := plait.NewWorkflow("etl").
		Task("extract", "ok", plait.Raw(f.textPayload)).
		Task("transform", "log", nil, plait.After("extract")).
		Task("load", "ok", plait.Raw(f.binary), plait.AfterCompletion("transform"))
	broken := plait.NewWorkflow("broken").
		Task("charge", "fail", nil).
		Task("ship", "ok", nil, plait.After("charge"))
	var runs []*plait.Run
	for _, wf := range []*plait.Workflow{etl, broken} {
		r, err := s.Submit(ctx, wf)
		must(t, err)
		runs = append(runs, r)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	for _, r := range runs {
		if _, err := s.RunWait(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	must(t, <-done)
	f.etl, f.broken = runs[0].ID, runs[1].ID
	idle, err := s.Submit(context.Background(), plait.NewWorkflow("idle").Task("wait", "ok", nil))
	must(t, err)
	f.idle = idle.ID
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// newHandler answers the handler of s with opts, failing the test on an
// error.
func newHandler(t *testing.T, s *plait.Scheduler, opts ...Option) *handler {
	t.Helper()
	h, err := New(s, append([]Option{WithLogger(quiet())}, opts...)...)
	must(t, err)
	return h.(*handler)
}

// do serves one request and answers the recorder.
func do(h http.Handler, method, target string, body io.Reader, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, body)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// errorCode answers the code of a JSON error answer, "" when it is none.
func errorCode(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		return ""
	}
	return e.Error.Code
}

// decode unmarshals a JSON answer of status 200 into v.
func decode(t *testing.T, rec *httptest.ResponseRecorder, v any) {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q", ct)
	}
	must(t, json.Unmarshal(rec.Body.Bytes(), v))
}

// coreOnly is a store with the core Store alone: every capability the
// inspector reads is missing.
type coreOnly struct{ store.Store }

func newCoreOnly(t *testing.T) *plait.Scheduler {
	t.Helper()
	st, err := memstore.New()
	must(t, err)
	s, err := plait.New(coreOnly{st}, plait.WithLogger(quiet()))
	must(t, err)
	must(t, s.Handle("ok", func(context.Context, *plait.Task) (any, error) { return nil, nil }))
	return s
}

// submitIdle submits a one-task run nothing runs and answers its id.
func submitIdle(t *testing.T, s *plait.Scheduler) string {
	t.Helper()
	r, err := s.Submit(context.Background(), plait.NewWorkflow("idle").Task("wait", "ok", nil))
	must(t, err)
	return r.ID
}

func mustSpec(t *testing.T, f *fixture) *plait.WorkflowSpec {
	t.Helper()
	res, err := f.s.RunSpecGet(context.Background(), f.etl)
	must(t, err)
	return res.Spec
}

func mustRun(t *testing.T, f *fixture) *plait.Run {
	t.Helper()
	r, err := f.s.RunGet(context.Background(), f.etl)
	must(t, err)
	return r
}
