package inspector

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/apijson"
)

// runsLimitDefault is the page size of the runs list when none is asked.
const runsLimitDefault = 50

// filterOf reads a RunFilter from the query parameters (see
// docs/inspector.md); the store validates what it reads.
func filterOf(q url.Values) (plait.RunFilter, error) {
	f := plait.RunFilter{
		Workflow:    q.Get("workflow"),
		Service:     q.Get("service"),
		Tenant:      q.Get("tenant"),
		ErrorPrefix: q.Get("error"),
	}
	for _, v := range q["status"] {
		for s := range strings.SplitSeq(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				f.Statuses = append(f.Statuses, plait.RunStatus(s))
			}
		}
	}
	for _, t := range []struct {
		name string
		to   *time.Time
	}{{"createdFrom", &f.CreatedFrom}, {"createdTo", &f.CreatedTo}, {"endedFrom", &f.EndedFrom}, {"endedTo", &f.EndedTo}} {
		v := q.Get(t.name)
		if v == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return f, errBadRequest("%s %q is not an RFC 3339 time", t.name, v)
		}
		*t.to = at
	}
	if err := f.Validate(); err != nil {
		return f, err
	}
	return f, nil
}

// intParam reads an integer query parameter in [least, most], def when
// absent.
func intParam(q url.Values, name string, def, least, most int) (int, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < least || n > most {
		return 0, errBadRequest("%s %q, want a number from %d to %d", name, v, least, most)
	}
	return n, nil
}

// serveRuns answers one page of runs: GET /api/v1/runs.
func (h *handler) serveRuns(w http.ResponseWriter, r *http.Request, _ params) {
	q := r.URL.Query()
	f, err := filterOf(q)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	limit, err := intParam(q, "limit", runsLimitDefault, 1, plait.QueryLimitMax)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.s.RunList(r.Context(), plait.RunListParams{Filter: f, Cursor: q.Get("cursor"), Limit: limit})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := struct {
		Runs       []apijson.Run `json:"runs"`
		NextCursor string        `json:"nextCursor,omitempty"`
	}{Runs: make([]apijson.Run, 0, len(res.Runs)), NextCursor: res.NextCursor}
	for _, run := range res.Runs {
		if run != nil {
			out.Runs = append(out.Runs, runOf(run, false))
		}
	}
	writeJSON(w, r, http.StatusOK, out)
}

// serveRunCount answers the runs per status: GET /api/v1/runs/count.
func (h *handler) serveRunCount(w http.ResponseWriter, r *http.Request, _ params) {
	q := r.URL.Query()
	f, err := filterOf(q)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	limit, err := intParam(q, "limit", 0, 0, plait.RunCountLimitMax)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.s.RunCount(r.Context(), plait.RunCountParams{Filter: f, Limit: limit})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := struct {
		Counts map[string]int64 `json:"counts"`
		Total  int64            `json:"total"`
		Capped bool             `json:"capped"`
	}{Counts: make(map[string]int64, len(res.Counts)), Capped: res.Capped}
	for st, n := range res.Counts {
		out.Counts[string(st)] = n
		out.Total += n
	}
	writeJSON(w, r, http.StatusOK, out)
}

// runDetail is the answer of GET /api/v1/runs/{id}.
type runDetail struct {
	Run             apijson.Run `json:"run"`
	Tasks           []taskJSON  `json:"tasks"`
	PayloadsDropped []string    `json:"payloadsDropped,omitempty"`
	// EventCursor is the end of the run's event stream read before the
	// run: the events stream resumed after it misses no change since.
	EventCursor string   `json:"eventCursor,omitempty"`
	Notices     []notice `json:"notices"`
}

// runAndSpec reads the run and its definition; a store without
// RunSpecStore answers the run with a nil spec and a notice.
func (h *handler) runAndSpec(r *http.Request, id string) (*plait.Run, *plait.RunSpecGetResult, *notice, error) {
	run, err := h.s.RunGet(r.Context(), id)
	if err != nil {
		return nil, nil, nil, err
	}
	spec, err := h.s.RunSpecGet(r.Context(), id)
	if err != nil {
		n, err := h.noticeOf(r, "deps", err)
		return run, nil, n, err
	}
	return run, spec, nil, nil
}

// serveRun answers a run with its tasks: GET /api/v1/runs/{id}.
func (h *handler) serveRun(w http.ResponseWriter, r *http.Request, p params) {
	// The end of the stream is read first, so that a change between the
	// two reads is streamed again rather than missed.
	var cursor plait.EventCursor
	if sub, err := h.s.Subscribe(r.Context(), &plait.SubscribeFilter{RunID: p.id, FromNow: true}); err == nil {
		cursor = sub.Cursor()
	} else if !errors.Is(err, plait.ErrUnsupported) {
		h.fail(w, r, err)
		return
	}
	run, spec, n, err := h.runAndSpec(r, p.id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := runDetail{Run: runOf(run, true), Tasks: make([]taskJSON, len(run.Tasks)), EventCursor: string(cursor), Notices: []notice{}}
	specs := specIndex(spec)
	for i := range run.Tasks {
		out.Tasks[i] = taskOf(&run.Tasks[i], specs[run.Tasks[i].Name])
	}
	if spec != nil {
		out.PayloadsDropped = spec.PayloadsDropped
	}
	if n != nil {
		out.Notices = append(out.Notices, *n)
	}
	writeJSON(w, r, http.StatusOK, out)
}

// specIndex maps a run's task names to their definitions; nil for no spec.
func specIndex(spec *plait.RunSpecGetResult) map[string]*plait.TaskSpec {
	if spec == nil || spec.Spec == nil {
		return nil
	}
	m := make(map[string]*plait.TaskSpec, len(spec.Spec.Tasks))
	for i := range spec.Spec.Tasks {
		m[spec.Spec.Tasks[i].Name] = &spec.Spec.Tasks[i]
	}
	return m
}
