package inspector

import (
	"net/http"
	"net/url"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/apijson"
	"github.com/plaitdag/plait/store"
)

// deadLetterJSON is a dead letter as the API answers it.
type deadLetterJSON struct {
	RunID    string        `json:"runId"`
	Task     string        `json:"task"`
	Workflow string        `json:"workflow,omitempty"`
	Tenant   string        `json:"tenant,omitempty"`
	Service  string        `json:"service,omitempty"`
	Queue    string        `json:"queue,omitempty"`
	Handler  string        `json:"handler,omitempty"`
	Status   string        `json:"status"`
	Error    string        `json:"error,omitempty"`
	At       apijson.Stamp `json:"at,omitzero"`
}

func letterOf(l *plait.DeadLetter) deadLetterJSON {
	return deadLetterJSON{RunID: l.RunID, Task: l.Task, Workflow: l.Workflow, Tenant: l.Tenant, Service: l.Service,
		Queue: l.Queue, Handler: l.Handler, Status: string(l.Status), Error: l.Error, At: apijson.Stamp(l.At)}
}

// letterFilter is the dead-letter filter of the query parameters.
type letterFilter struct {
	runID, workflow, task, tenant, service, queue, handler, errorPrefix, errorKey string
	since, until                                                                  time.Time
}

func letterFilterOf(q url.Values) (letterFilter, error) {
	f := letterFilter{runID: q.Get("runId"), workflow: q.Get("workflow"), task: q.Get("task"), tenant: q.Get("tenant"),
		service: q.Get("service"), queue: q.Get("queue"), handler: q.Get("handler"), errorPrefix: q.Get("error"),
		errorKey: q.Get("errorKey")}
	for _, v := range []string{f.runID, f.workflow, f.task, f.tenant, f.service, f.queue, f.handler} {
		if err := checkParams(params{id: v}); err != nil {
			return f, err
		}
	}
	for _, t := range []struct {
		name string
		to   *time.Time
	}{{"since", &f.since}, {"until", &f.until}} {
		if v := q.Get(t.name); v != "" {
			at, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return f, errBadRequest("%s %q is not an RFC 3339 time", t.name, v)
			}
			*t.to = at
		}
	}
	return f, nil
}

// serveDeadLetters answers one page of dead letters: GET
// /api/v1/dead-letters.
func (h *handler) serveDeadLetters(w http.ResponseWriter, r *http.Request, _ params) {
	q := r.URL.Query()
	f, err := letterFilterOf(q)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	limit, err := intParam(q, "limit", runsLimitDefault, 1, store.DeadLetterPageMax)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.s.DeadLetterList(r.Context(), plait.DeadLetterListParams{
		RunID: f.runID, Workflow: f.workflow, Task: f.task, Tenant: f.tenant, Service: f.service, Queue: f.queue,
		Handler: f.handler, ErrorPrefix: f.errorPrefix, Since: f.since, Until: f.until, Cursor: q.Get("cursor"), Limit: limit,
	})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := struct {
		Letters    []deadLetterJSON `json:"letters"`
		NextCursor string           `json:"nextCursor,omitempty"`
	}{Letters: make([]deadLetterJSON, 0, len(res.Letters)), NextCursor: res.NextCursor}
	for i := range res.Letters {
		if f.errorKey != "" && plait.DeadLetterErrorKey(res.Letters[i].Error) != f.errorKey {
			continue
		}
		out.Letters = append(out.Letters, letterOf(&res.Letters[i]))
	}
	writeJSON(w, r, http.StatusOK, out)
}

// serveDeadLetterGroups answers the letters of a window grouped by
// error: GET /api/v1/dead-letters/groups.
func (h *handler) serveDeadLetterGroups(w http.ResponseWriter, r *http.Request, _ params) {
	q := r.URL.Query()
	f, err := letterFilterOf(q)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	window, err := intParam(q, "window", deadLetterWindow, 1, store.DeadLetterGroupsWindowMax)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.s.DeadLetterGroups(r.Context(), plait.DeadLetterGroupsParams{
		RunID: f.runID, Workflow: f.workflow, Task: f.task, Tenant: f.tenant, Service: f.service, Queue: f.queue,
		Handler: f.handler, ErrorPrefix: f.errorPrefix, Since: f.since, Until: f.until, Cursor: q.Get("cursor"), Window: window,
	})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	type group struct {
		groupJSON
		Sample deadLetterJSON `json:"sample"`
	}
	out := struct {
		Groups     []group `json:"groups"`
		Letters    int     `json:"letters"`
		Truncated  bool    `json:"truncated"`
		NextCursor string  `json:"nextCursor,omitempty"`
	}{Groups: make([]group, len(res.Groups)), Letters: res.Letters, Truncated: res.Truncated, NextCursor: res.NextCursor}
	for i, g := range res.Groups {
		out.Groups[i] = group{groupJSON{Key: g.Key, Count: g.Count, Oldest: apijson.Stamp(g.Oldest), Newest: apijson.Stamp(g.Newest)}, letterOf(&g.Sample)}
	}
	writeJSON(w, r, http.StatusOK, out)
}
