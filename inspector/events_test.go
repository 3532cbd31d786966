package inspector

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/memstore"
)

// frame is one server-sent event: its fields, or a comment.
type frame struct {
	id, event, data, retry, comment string
}

// stream is an open event stream.
type stream struct {
	resp *http.Response
	r    *bufio.Reader
}

func openStream(t *testing.T, ctx context.Context, u string, hdr ...string) *stream {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	must(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%s: %d %s", u, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return &stream{resp: resp, r: bufio.NewReader(resp.Body)}
}

// next reads the next frame; the test's deadline bounds the wait.
func (s *stream) next(t *testing.T) frame {
	t.Helper()
	var f frame
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			return f
		}
		if c, ok := strings.CutPrefix(line, ":"); ok {
			f.comment = strings.TrimSpace(c)
			continue
		}
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "id":
			f.id = v
		case "event":
			f.event = v
		case "data":
			f.data += v
		case "retry":
			f.retry = v
		default:
			t.Fatalf("unknown field %q", line)
		}
	}
}

// eventsUntil reads events until one of type last, and answers them.
func (s *stream) eventsUntil(t *testing.T, last string) []frame {
	t.Helper()
	var out []frame
	for {
		f := s.next(t)
		if f.event == "" {
			continue
		}
		out = append(out, f)
		if f.event == last {
			return out
		}
	}
}

func TestEventsResume(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(newHandler(t, f.s))
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	u := srv.URL + "/api/v1/runs/" + f.etl + "/events"

	s := openStream(t, ctx, u)
	if first := s.next(t); first.retry != "2000" {
		t.Fatalf("first frame %+v, want retry: 2000", first)
	}
	all := s.eventsUntil(t, "run_completed")
	if len(all) < 4 {
		t.Fatalf("%d events, want the run's", len(all))
	}
	for _, fr := range all {
		var ev struct{ Cursor, Type, RunID string }
		must(t, json.Unmarshal([]byte(fr.data), &ev))
		if ev.Cursor != fr.id || ev.Type != fr.event || ev.RunID != f.etl || fr.id == "" {
			t.Fatalf("frame %+v, data %+v", fr, ev)
		}
	}
	k := len(all) / 2
	for _, how := range [][]string{{"Last-Event-ID", all[k].id}, nil} {
		target := u
		if how == nil {
			target += "?after=" + all[k].id
		}
		rs := openStream(t, ctx, target, how...)
		got := rs.eventsUntil(t, "run_completed")
		if len(got) != len(all)-k-1 || got[0].id != all[k+1].id {
			t.Errorf("resumed with %q: %d events from %s, want %d from %s", how, len(got), got[0].id, len(all)-k-1, all[k+1].id)
		}
	}
	if rec := do(newHandler(t, f.s), "GET", "/api/v1/runs/"+f.etl+"/events", nil, "Last-Event-ID", "a\rb"); rec.Code != http.StatusBadRequest {
		t.Errorf("a cursor with a line break: %d, want 400", rec.Code)
	}
}

func TestEventsLiveAndKeepalive(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.s)
	h.keepalive = 20 * time.Millisecond
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := openStream(t, ctx, srv.URL+"/api/v1/runs/"+f.idle+"/events")
	// The past events, then keepalives while nothing happens.
	for fr := s.next(t); fr.comment != "keepalive"; fr = s.next(t) {
	}
	if _, err := f.s.RunCancel(t.Context(), f.idle); err != nil {
		t.Fatal(err)
	}
	got := s.eventsUntil(t, "run_cancelled")
	var ev struct{ RunStatus string }
	must(t, json.Unmarshal([]byte(got[len(got)-1].data), &ev))
	if ev.RunStatus != "cancelled" {
		t.Errorf("run event %+v", ev)
	}
}

// The run answer's eventCursor is the end of the stream before the run was
// read: a stream resumed after it carries the changes since, none before.
func TestRunEventCursor(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.s)
	var d struct{ EventCursor string }
	decode(t, do(h, "GET", "/api/v1/runs/"+f.idle, nil), &d)
	if d.EventCursor == "" {
		t.Fatal("no eventCursor")
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if _, err := f.s.RunCancel(t.Context(), f.idle); err != nil {
		t.Fatal(err)
	}
	s := openStream(t, ctx, srv.URL+"/api/v1/runs/"+f.idle+"/events?after="+d.EventCursor)
	got := s.eventsUntil(t, "run_cancelled")
	for _, fr := range got {
		if fr.event != "task_cancelled" && fr.event != "run_cancelled" {
			t.Errorf("event %s from before the run was read", fr.event)
		}
	}
}

func TestEventsHeadAnswersHeaders(t *testing.T) {
	f := newFixture(t)
	rec := do(newHandler(t, f.s), "HEAD", "/api/v1/runs/"+f.etl+"/events", nil)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/event-stream" || rec.Body.Len() != 0 {
		t.Errorf("HEAD: %d %s %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
}

// A stream resumed from a cursor the store's cap dropped says so with
// fell_behind, then goes on.
func TestEventsFellBehind(t *testing.T) {
	st, err := memstore.New(memstore.WithEventCap(8))
	must(t, err)
	s, err := plait.New(st, plait.WithLogger(quiet()))
	must(t, err)
	must(t, s.Handle("ok", func(context.Context, *plait.Task) (any, error) { return nil, nil }))
	watched := submitIdle(t, s)
	sub, err := s.Subscribe(t.Context(), &plait.SubscribeFilter{RunID: watched})
	must(t, err)
	first, err := sub.Next(t.Context())
	must(t, err)
	for range 10 {
		id := submitIdle(t, s)
		_, err := s.RunCancel(t.Context(), id)
		must(t, err)
	}
	srv := httptest.NewServer(newHandler(t, s))
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	str := openStream(t, ctx, srv.URL+"/api/v1/runs/"+watched+"/events?after="+string(first.Cursor))
	if fr := str.eventsUntil(t, "fell_behind"); len(fr) != 1 {
		t.Errorf("events before fell_behind: %+v", fr)
	}
	if _, err := s.RunCancel(t.Context(), watched); err != nil {
		t.Fatal(err)
	}
	str.eventsUntil(t, "run_cancelled")
}

// A store that fails answers 500 with a generic message, the cause logged.
func TestStoreFailureIsLogged(t *testing.T) {
	st, err := memstore.New()
	must(t, err)
	s, err := plait.New(failingStore{st}, plait.WithLogger(quiet()))
	must(t, err)
	var logged strings.Builder
	h := newHandler(t, s, WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
	rec := do(h, "GET", "/api/v1/runs/r1/tasks/t", nil)
	if rec.Code != http.StatusInternalServerError || errorCode(t, rec) != "internal" || strings.Contains(rec.Body.String(), "disk on fire") {
		t.Errorf("store failure answered %d %s", rec.Code, rec.Body)
	}
	if !strings.Contains(logged.String(), "disk on fire") {
		t.Errorf("the cause was not logged: %q", logged.String())
	}
}

type failingStore struct{ store.Store }

func (failingStore) RunGet(context.Context, *store.RunGetParams) (*store.Run, error) {
	return nil, errors.New("disk on fire")
}
