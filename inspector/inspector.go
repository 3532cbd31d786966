// Package inspector is a web view of a plait store a host mounts: an
// overview of the fleet, the runs with filters, a run with its DAG drawn as
// SVG and updated live over server-sent events, and a task with its
// attempts, logs, payload and result.
//
// [New] answers an [http.Handler] that serves embedded pages (plain
// JavaScript modules: building the library needs no front-end tool) and the
// JSON API they use, version 1 under /api/v1/. Every URL the pages use is
// relative, so the handler works under any path prefix: mounted with
// [http.StripPrefix], or behind a reverse proxy that strips or keeps the
// prefix. It is read-only unless [WithReadOnly](false) is given; every
// request goes through the host's [Authorizer]; the mutating routes refuse
// other methods than POST and cross-site requests, and check every id
// against the store. Every action ([Actions]: cancel, replay, delete or
// note runs, requeue or purge dead letters, run now, skip or cancel a
// task, pause or resume a queue, drain a node, pause, resume, trigger or
// backfill a schedule) goes through one route and the engine the plait
// command uses too: on one item, a selection or a query, with a dry run, a
// pace, a reason written to each run's history and one audit record.
// docs/inspector.md documents the routes and the JSON.
package inspector

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/action"
	"github.com/plaitdag/plait/internal/clock"
)

// handler is the http.Handler New answers.
type handler struct {
	s   *plait.Scheduler
	cfg config
	// now, clock and keepalive are fields so that tests can drive them:
	// now tells the time, clock paces the actions.
	now       func() time.Time
	clock     plait.Clock
	keepalive time.Duration
	starts    *startLimit // the floor under how fast a client starts actions
	assets    http.Handler
	etags     map[string]string // asset path ("/assets/app.js") to its ETag
}

// New answers the view of the runs s reads, as an http.Handler to mount
// under any prefix. s is used as a client: it needs no Run. It answers an
// error wrapping [ErrInvalidOption] for a nil s or an option out of range.
func New(s *plait.Scheduler, opts ...Option) (http.Handler, error) {
	cfg := defaults()
	if s == nil {
		return nil, fmt.Errorf("%w: New needs a scheduler", ErrInvalidOption)
	}
	for _, o := range opts {
		if o == nil {
			cfg.reject("Option", "is nil")
			continue
		}
		o(&cfg)
	}
	if len(cfg.errs) > 0 {
		return nil, errors.Join(cfg.errs...)
	}
	return &handler{
		s:         s,
		cfg:       cfg,
		now:       time.Now,
		clock:     clock.Real{},
		keepalive: keepaliveInterval,
		starts:    newStartLimit(cfg.acts.burst, cfg.acts.every),
		assets:    http.FileServerFS(assetsFS()),
		etags:     assetTags(assetsFS()),
	}, nil
}

// assetTags answers a strong ETag per embedded file, from its content: the
// files carry no modification time, and a tag is what lets a browser keep
// a file until the binary serving it changes.
func assetTags(fsys fs.FS) map[string]string {
	tags := map[string]string{}
	_ = fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := fs.ReadFile(fsys, path)
		if err != nil {
			return nil
		}
		sum := sha256.Sum256(b)
		tags["/"+path] = `"` + hex.EncodeToString(sum[:12]) + `"`
		return nil
	})
	return tags
}

// keepaliveInterval is how often an event stream sends a comment line, so
// that proxies and browsers do not close a quiet stream.
const keepaliveInterval = 15 * time.Second

// params are the path parameters of a route, unescaped.
type params struct{ id, task, action string }

// actionFromPath is the action of the route whose "{action}" segment names
// it.
const actionFromPath = "{action}"

// route is one route of the handler; routes lists them all, the tests walk
// the list (every mutating route is refused when read-only, for instance).
type route struct {
	segments []string              // literal segments, "{id}" and "{task}"
	method   string                // http.MethodGet (HEAD too) or http.MethodPost
	action   string                // ActionRead, the action of a mutating route, or actionFromPath
	resource func(p params) string // nil: the route authorizes its body's items itself
	serve    func(h *handler, w http.ResponseWriter, r *http.Request, p params)
}

// mutating reports whether the route changes anything.
func (rt *route) mutating() bool { return rt.action != ActionRead }

func fixed(name string) func(params) string { return func(params) string { return name } }
func runResource(p params) string           { return "run:" + p.id }
func taskResource(p params) string          { return "task:" + p.id + "/" + p.task }

// routes are tried in order: a literal segment before a parameter ("runs/count"
// is the count, not the run "count").
var routes = []route{
	{nil, http.MethodGet, ActionRead, fixed("page"), (*handler).servePage},
	{[]string{"runs"}, http.MethodGet, ActionRead, fixed("page"), (*handler).servePage},
	{[]string{"runs", "{id}"}, http.MethodGet, ActionRead, fixed("page"), (*handler).servePage},
	{[]string{"runs", "{id}", "tasks", "{task}"}, http.MethodGet, ActionRead, fixed("page"), (*handler).servePage},
	{[]string{"dead-letters"}, http.MethodGet, ActionRead, fixed("page"), (*handler).servePage},
	{[]string{"queues"}, http.MethodGet, ActionRead, fixed("page"), (*handler).servePage},
	{[]string{"nodes"}, http.MethodGet, ActionRead, fixed("page"), (*handler).servePage},
	{[]string{"schedules"}, http.MethodGet, ActionRead, fixed("page"), (*handler).servePage},
	{[]string{"events"}, http.MethodGet, ActionRead, fixed("page"), (*handler).servePage},
	{[]string{"api", "v1", "config"}, http.MethodGet, ActionRead, fixed("config"), (*handler).serveConfig},
	{[]string{"api", "v1", "overview"}, http.MethodGet, ActionRead, fixed("overview"), (*handler).serveOverview},
	{[]string{"api", "v1", "runs"}, http.MethodGet, ActionRead, fixed("runs"), (*handler).serveRuns},
	{[]string{"api", "v1", "runs", "count"}, http.MethodGet, ActionRead, fixed("runs"), (*handler).serveRunCount},
	{[]string{"api", "v1", "runs", "{id}"}, http.MethodGet, ActionRead, runResource, (*handler).serveRun},
	{[]string{"api", "v1", "runs", "{id}", "dag.svg"}, http.MethodGet, ActionRead, runResource, (*handler).serveDAG},
	{[]string{"api", "v1", "runs", "{id}", "events"}, http.MethodGet, ActionRead, runResource, (*handler).serveEvents},
	{[]string{"api", "v1", "runs", "{id}", "tasks", "{task}"}, http.MethodGet, ActionRead, taskResource, (*handler).serveTask},
	{[]string{"api", "v1", "runs", "{id}", "cancel"}, http.MethodPost, ActionCancel, runResource, (*handler).serveCancel},
	{[]string{"api", "v1", "runs", "{id}", "replay"}, http.MethodPost, ActionReplay, runResource, (*handler).serveReplay},
	{[]string{"api", "v1", "dead-letters"}, http.MethodGet, ActionRead, fixed("dead_letters"), (*handler).serveDeadLetters},
	{[]string{"api", "v1", "dead-letters", "groups"}, http.MethodGet, ActionRead, fixed("dead_letters"), (*handler).serveDeadLetterGroups},
	{[]string{"api", "v1", "queues"}, http.MethodGet, ActionRead, fixed("queues"), (*handler).serveQueues},
	{[]string{"api", "v1", "nodes"}, http.MethodGet, ActionRead, fixed("nodes"), (*handler).serveNodes},
	{[]string{"api", "v1", "schedules"}, http.MethodGet, ActionRead, fixed("schedules"), (*handler).serveSchedules},
	{[]string{"api", "v1", "events"}, http.MethodGet, ActionRead, fixed("events"), (*handler).serveTail},
	{[]string{"api", "v1", "actions", "{action}"}, http.MethodPost, actionFromPath, nil, (*handler).serveAction},
}

// ServeHTTP routes r by its path relative to the mount point.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	if path == "" {
		h.redirectToMount(w, r)
		return
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	segs := strings.Split(path[1:], "/")
	if len(segs) == 1 && segs[0] == "" {
		segs = nil
	}
	if len(segs) > 0 && segs[0] == "assets" {
		h.serveAsset(w, r)
		return
	}
	for i := range segs {
		s, err := url.PathUnescape(segs[i])
		if err != nil {
			h.fail(w, r, errBadRequest("path segment %q is not escaped properly", segs[i]))
			return
		}
		segs[i] = s
	}
	api := len(segs) > 0 && segs[0] == "api"
	for i := range routes {
		rt := &routes[i]
		p, ok := rt.match(segs)
		if !ok {
			continue
		}
		h.serveRoute(w, r, rt, p)
		return
	}
	if api {
		h.fail(w, r, &apiError{status: http.StatusNotFound, code: "not_found", message: "no such route"})
		return
	}
	http.NotFound(w, r)
}

// match answers the route's parameters when segs is its path.
func (rt *route) match(segs []string) (params, bool) {
	var p params
	if len(segs) != len(rt.segments) {
		return p, false
	}
	for i, s := range rt.segments {
		switch {
		case (s == "{id}" || s == "{task}" || s == "{action}") && segs[i] == "":
			return p, false // "/runs/" is no run
		case s == "{action}":
			p.action = segs[i]
		case s == "{id}":
			p.id = segs[i]
		case s == "{task}":
			p.task = segs[i]
		default:
			if segs[i] != s {
				return p, false
			}
		}
	}
	return p, true
}

// serveRoute checks the method, then for a mutating route the read-only
// mode and the origin, then the form of the ids and the authorizer, in that
// order, and serves.
func (h *handler) serveRoute(w http.ResponseWriter, r *http.Request, rt *route, p params) {
	if r.Method != rt.method && (rt.method != http.MethodGet || r.Method != http.MethodHead) {
		allow := rt.method
		if rt.method == http.MethodGet {
			allow = "GET, HEAD"
		}
		w.Header().Set("Allow", allow)
		h.fail(w, r, &apiError{status: http.StatusMethodNotAllowed, code: "method_not_allowed",
			message: r.Method + " is not allowed here; use " + rt.method})
		return
	}
	act := rt.action
	if act == actionFromPath {
		if _, err := action.Parse(p.action); err != nil {
			h.fail(w, r, &apiError{status: http.StatusNotFound, code: "not_found", message: "no action " + p.action})
			return
		}
		act = p.action
	}
	if rt.mutating() {
		if h.cfg.readOnly {
			h.fail(w, r, &apiError{status: http.StatusForbidden, code: "read_only", message: "the view is read-only"})
			return
		}
		if !h.cfg.acts.enabled[act] {
			h.fail(w, r, &apiError{status: http.StatusForbidden, code: "action_disabled", message: "the action " + act + " is not enabled"})
			return
		}
		if err := crossSite(r); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	if err := checkParams(params{id: p.id, task: p.task}); err != nil {
		h.fail(w, r, err)
		return
	}
	if rt.resource != nil {
		if err := h.cfg.authorize(r, act, rt.resource(p)); err != nil {
			h.fail(w, r, &apiError{status: http.StatusForbidden, code: "forbidden", message: err.Error()})
			return
		}
	}
	rt.serve(h, w, r, p)
}

// redirectToMount answers a request for the mount point without its
// trailing slash ("/ops/plait" mounted with StripPrefix("/ops/plait")) with
// a redirect to it with one, relative to the request, so the pages'
// relative URLs resolve under it.
func (h *handler) redirectToMount(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
		p = u.Path
	}
	last := p[strings.LastIndex(p, "/")+1:]
	target := (&url.URL{Path: last + "/"}).EscapedPath()
	if last == "" {
		target = "./"
	}
	if strings.Contains(last, ":") {
		target = "./" + target // a colon would read as a scheme
	}
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	w.Header().Set("Location", target)
	w.WriteHeader(http.StatusMovedPermanently)
}

// servePage answers index.html with its base set to the way back to the
// mount point: "./" for "/" and "/runs", one "../" per segment past the
// first otherwise.
func (h *handler) servePage(w http.ResponseWriter, r *http.Request, _ params) {
	depth := strings.Count(r.URL.EscapedPath(), "/") - 1
	base := "./"
	if depth > 0 {
		base = strings.Repeat("../", depth)
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "same-origin")
	hdr.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'self'")
	_, _ = w.Write(indexPage(base))
}

// serveAsset serves an embedded static file under /assets/.
func (h *handler) serveAsset(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if err := h.cfg.authorize(r, ActionRead, "asset"); err != nil {
		http.Error(w, "forbidden: "+err.Error(), http.StatusForbidden)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/") {
		http.NotFound(w, r) // no directory listings
		return
	}
	// Revalidated on every load (a 304 while the binary is the same), so
	// that a new version's modules never mix with an old one's.
	w.Header().Set("Cache-Control", "no-cache")
	if tag, ok := h.etags[r.URL.Path]; ok {
		w.Header().Set("ETag", tag)
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	h.assets.ServeHTTP(w, r)
}
