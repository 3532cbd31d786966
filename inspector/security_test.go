package inspector

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// pathOf answers a path of rt with id and task filled in.
func pathOf(rt *route, id, task string) string {
	segs := make([]string, len(rt.segments))
	for i, s := range rt.segments {
		switch s {
		case "{id}":
			segs[i] = id
		case "{task}":
			segs[i] = task
		default:
			segs[i] = s
		}
	}
	return "/" + strings.Join(segs, "/")
}

// routeCase is one request of the walk over the route table: the action
// route comes once per action, with a body naming one item of its kind.
type routeCase struct {
	rt            *route
	path, body    string
	action, resrc string // what the authorizer is asked
}

// routeCases answers a case per route, and per action for the action
// route, for run id and task (a letter or a task of that run).
func routeCases(id, task string) []routeCase {
	var out []routeCase
	for i := range routes {
		rt := &routes[i]
		if rt.action != actionFromPath {
			out = append(out, routeCase{rt, pathOf(rt, id, task), "", rt.action, rt.resource(params{id: id, task: task})})
			continue
		}
		for _, a := range Actions() {
			body, res := actionBody(a, id, task)
			out = append(out, routeCase{rt, "/api/v1/actions/" + a, body, a, res})
		}
	}
	return out
}

// actionBody answers a body of action a naming one item, and the item's
// resource.
func actionBody(a, id, task string) (string, string) {
	ref := `{"refs": [{"runId": "` + id + `", "task": "` + task + `"}]}`
	switch {
	case strings.HasPrefix(a, "run."):
		return `{"ids": ["` + id + `"]}`, "run:" + id
	case strings.HasPrefix(a, "task."):
		return ref, "task:" + id + "/" + task
	case strings.HasPrefix(a, "dead_letter."):
		return ref, "dead_letter:" + id + "/" + task
	case strings.HasPrefix(a, "queue."):
		return `{"ids": ["default"]}`, "queue:default"
	case strings.HasPrefix(a, "node."):
		return `{"ids": ["node-1"]}`, "node:node-1"
	case a == ActionScheduleBackfill:
		return `{"ids": ["nightly"], "from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z"}`, "schedule:nightly"
	}
	return `{"ids": ["nightly"]}`, "schedule:nightly"
}

func mutatingRoutes(t *testing.T, id, task string) []routeCase {
	var out []routeCase
	for _, c := range routeCases(id, task) {
		if c.rt.mutating() {
			if c.rt.method != http.MethodPost {
				t.Errorf("mutating route %v answers %s, want POST", c.rt.segments, c.rt.method)
			}
			out = append(out, c)
		}
	}
	if len(out) < 2+len(Actions()) {
		t.Fatalf("%d mutating routes, want cancel, replay and every action at least", len(out))
	}
	return out
}

// Every mutating route is refused on a read-only handler, and refuses GET:
// the test walks the route table, so a route added later is checked too.
func TestReadOnlyRefusesEveryMutatingRoute(t *testing.T) {
	f := newFixture(t)
	ro := newHandler(t, f.s)
	rw := newHandler(t, f.s, WithReadOnly(false))
	for _, c := range mutatingRoutes(t, f.idle, "wait") {
		p := c.path
		if rec := do(ro, "POST", p, strings.NewReader(c.body)); rec.Code != http.StatusForbidden || errorCode(t, rec) != "read_only" {
			t.Errorf("read-only POST %s: %d %s, want 403 read_only", p, rec.Code, rec.Body)
		}
		for _, h := range []*handler{ro, rw} {
			for _, m := range []string{"GET", "PUT", "DELETE"} {
				rec := do(h, m, p, nil)
				if rec.Code != http.StatusMethodNotAllowed || errorCode(t, rec) != "method_not_allowed" || rec.Header().Get("Allow") != "POST" {
					t.Errorf("%s %s: %d %s, want 405 with Allow: POST", m, p, rec.Code, rec.Body)
				}
			}
		}
	}
	run, err := f.s.RunGet(t.Context(), f.idle)
	must(t, err)
	if run.Status.Terminal() {
		t.Fatalf("a refused route changed the run: %s", run.Status)
	}
}

// The authorizer is asked for every route, reads included, with the
// route's action and resource, and its refusal answers 403.
func TestAuthorizerDenies(t *testing.T) {
	f := newFixture(t)
	var asked []string
	h := newHandler(t, f.s, WithReadOnly(false), WithAuthorizer(func(r *http.Request, action, resource string) error {
		asked = append(asked, action+" "+resource)
		return errors.New("not you")
	}))
	for _, c := range routeCases(f.broken, "charge") {
		rt, p := c.rt, c.path
		asked = asked[:0]
		rec := do(h, rt.method, p, strings.NewReader(c.body))
		if rec.Code != http.StatusForbidden || errorCode(t, rec) != "forbidden" || !strings.Contains(rec.Body.String(), "not you") {
			t.Errorf("%s %s: %d %s, want 403 forbidden", rt.method, p, rec.Code, rec.Body)
		}
		want := c.action + " " + c.resrc
		if len(asked) != 1 || asked[0] != want {
			t.Errorf("%s %s asked %q, want %q", rt.method, p, asked, want)
		}
	}
	if rec := do(h, "GET", "/assets/app.js", nil); rec.Code != http.StatusForbidden {
		t.Errorf("asset: %d, want 403", rec.Code)
	}
	run, err := f.s.RunGet(t.Context(), f.broken)
	must(t, err)
	if run.Generation != 0 {
		t.Errorf("a refused replay replayed: generation %d", run.Generation)
	}
}

func TestAuthorizerAllowsByAction(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.s, WithReadOnly(false), WithAuthorizer(func(r *http.Request, action, resource string) error {
		if action == ActionRead || r.Header.Get("X-Admin") == "yes" {
			return nil
		}
		return errors.New("admins only")
	}))
	if rec := do(h, "GET", "/api/v1/runs/"+f.idle, nil); rec.Code != http.StatusOK {
		t.Errorf("read: %d", rec.Code)
	}
	if rec := do(h, "POST", "/api/v1/runs/"+f.idle+"/cancel", nil); rec.Code != http.StatusForbidden {
		t.Errorf("cancel by a reader: %d", rec.Code)
	}
	if rec := do(h, "POST", "/api/v1/runs/"+f.idle+"/cancel", nil, "X-Admin", "yes"); rec.Code != http.StatusOK {
		t.Errorf("cancel by an admin: %d %s", rec.Code, rec.Body)
	}
}

func TestCrossSiteRefused(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.s, WithReadOnly(false))
	for _, c := range mutatingRoutes(t, f.idle, "wait") {
		p := c.path
		for _, hdr := range [][]string{
			{"Sec-Fetch-Site", "cross-site"},
			{"Sec-Fetch-Site", "same-site"},
			{"Origin", "https://evil.example"},
			{"Origin", "null"},
			{"Origin", "http://example.com.evil.example"},
			{"Sec-Fetch-Site", "cross-site", "Origin", "http://example.com"},
		} {
			rec := do(h, "POST", p, strings.NewReader(c.body), hdr...)
			if rec.Code != http.StatusForbidden || errorCode(t, rec) != "cross_site" {
				t.Errorf("POST %s with %q: %d %s, want 403 cross_site", p, hdr, rec.Code, rec.Body)
			}
		}
	}
	run, err := f.s.RunGet(t.Context(), f.idle)
	must(t, err)
	if run.Status.Terminal() {
		t.Fatal("a cross-site request cancelled the run")
	}
	// httptest's requests are for example.com.
	for _, hdr := range [][]string{{"Sec-Fetch-Site", "same-origin"}, {"Origin", "http://example.com"}, {"Sec-Fetch-Site", "none"}, nil} {
		if err := crossSite(requestWith(hdr...)); err != nil {
			t.Errorf("%q refused: %v", hdr, err)
		}
	}
}

func requestWith(hdr ...string) *http.Request {
	r, _ := http.NewRequest("POST", "http://example.com/api/v1/runs/x/cancel", nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	return r
}

func TestCancelAndReplay(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.s, WithReadOnly(false))
	var out struct {
		Run struct {
			ID, Status string
			Generation int64
		}
	}
	decode(t, do(h, "POST", "/api/v1/runs/"+f.idle+"/cancel", nil, "Sec-Fetch-Site", "same-origin"), &out)
	if out.Run.ID != f.idle || out.Run.Status != "cancelled" {
		t.Errorf("cancel answered %+v", out)
	}
	rec := do(h, "POST", "/api/v1/runs/"+f.broken+"/replay", strings.NewReader(`{"generation": 7}`))
	if rec.Code != http.StatusConflict || errorCode(t, rec) != "conflict" {
		t.Errorf("replay of a stale generation: %d %s", rec.Code, rec.Body)
	}
	for _, body := range []string{`{"tasks": "charge"}`, `{"unknown": 1}`, `not json`} {
		if rec := do(h, "POST", "/api/v1/runs/"+f.broken+"/replay", strings.NewReader(body)); rec.Code != http.StatusBadRequest {
			t.Errorf("replay body %s: %d", body, rec.Code)
		}
	}
	decode(t, do(h, "POST", "/api/v1/runs/"+f.broken+"/replay", strings.NewReader(`{"generation": 0, "tasks": ["charge"]}`)), &out)
	if out.Run.ID != f.broken || out.Run.Generation != 1 {
		t.Errorf("replay answered %+v", out)
	}
	run, err := f.s.RunGet(t.Context(), f.broken)
	must(t, err)
	if run.Generation != 1 || run.Task("charge").Status.Terminal() {
		t.Errorf("after replay: generation %d, charge %s", run.Generation, run.Task("charge").Status)
	}
}
