package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/action"
	"github.com/plaitdag/plait/internal/apijson"
)

// bodyMax is the largest request body a mutating route reads.
const bodyMax = 64 << 10

// readBody decodes r's JSON body into v, refusing unknown fields; an
// empty body leaves v as it is.
func readBody(w http.ResponseWriter, r *http.Request, v any, what string) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, bodyMax))
	if err != nil {
		return errBadRequest("reading the body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errBadRequest("the body is not %s: %v", what, err)
	}
	return nil
}

// runsQuery is a run query in an action's body: the runs list's filter.
type runsQuery struct {
	Status      []string `json:"status"`
	Workflow    string   `json:"workflow"`
	Service     string   `json:"service"`
	Tenant      string   `json:"tenant"`
	CreatedFrom string   `json:"createdFrom"`
	CreatedTo   string   `json:"createdTo"`
	EndedFrom   string   `json:"endedFrom"`
	EndedTo     string   `json:"endedTo"`
	Error       string   `json:"error"`
}

// filter reads the query as the runs list reads its parameters.
func (q *runsQuery) filter() (plait.RunFilter, error) {
	v := url.Values{"status": q.Status}
	for k, s := range map[string]string{"workflow": q.Workflow, "service": q.Service, "tenant": q.Tenant,
		"createdFrom": q.CreatedFrom, "createdTo": q.CreatedTo, "endedFrom": q.EndedFrom, "endedTo": q.EndedTo, "error": q.Error} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return filterOf(v)
}

// lettersQuery is a dead-letter query in an action's body.
type lettersQuery struct {
	RunID    string    `json:"runId"`
	Workflow string    `json:"workflow"`
	Task     string    `json:"task"`
	Tenant   string    `json:"tenant"`
	Service  string    `json:"service"`
	Queue    string    `json:"queue"`
	Handler  string    `json:"handler"`
	Error    string    `json:"error"`
	ErrorKey string    `json:"errorKey"`
	Since    time.Time `json:"since"`
	Until    time.Time `json:"until"`
}

// actionRequest is the body of POST /api/v1/actions/{action}.
type actionRequest struct {
	IDs         []string      `json:"ids"`
	Refs        []action.Ref  `json:"refs"`
	Runs        *runsQuery    `json:"runs"`
	DeadLetters *lettersQuery `json:"deadLetters"`
	From        time.Time     `json:"from"`
	To          time.Time     `json:"to"`
	Generation  *int64        `json:"generation"`
	DryRun      bool          `json:"dryRun"`
	Reason      string        `json:"reason"`
	Rate        float64       `json:"rate"`
	Max         int           `json:"max"`
}

// target answers the engine's target of the request, its ids checked for
// their form.
func (req *actionRequest) target() (action.Target, error) {
	t := action.Target{IDs: req.IDs, Refs: req.Refs, From: req.From, To: req.To, Generation: req.Generation}
	for _, id := range req.IDs {
		if err := checkParams(params{id: id}); err != nil {
			return t, err
		}
	}
	for _, ref := range req.Refs {
		if err := checkParams(params{id: ref.RunID, task: ref.Task}); err != nil {
			return t, err
		}
	}
	if req.Runs != nil {
		f, err := req.Runs.filter()
		if err != nil {
			return t, err
		}
		t.Runs = &f
	}
	if q := req.DeadLetters; q != nil {
		for _, id := range []string{q.RunID, q.Workflow, q.Task, q.Tenant, q.Service, q.Queue, q.Handler} {
			if err := checkParams(params{id: id}); err != nil {
				return t, err
			}
		}
		t.DeadLetters = &action.DeadLetterFilter{RunID: q.RunID, Workflow: q.Workflow, Task: q.Task, Tenant: q.Tenant,
			Service: q.Service, Queue: q.Queue, Handler: q.Handler, ErrorPrefix: q.Error, ErrorKey: q.ErrorKey,
			Since: q.Since, Until: q.Until}
	}
	return t, nil
}

// resources answers what the authorizer is asked about for a target: each
// item of a selection, or the collection a query reads.
func resources(a action.Action, t action.Target) []string {
	switch {
	case t.Runs != nil:
		return []string{"runs"}
	case t.DeadLetters != nil:
		return []string{"dead_letters"}
	}
	var out []string
	for _, ref := range t.Refs {
		switch a.Kind() {
		case action.KindTask:
			out = append(out, "task:"+ref.RunID+"/"+ref.Task)
		case action.KindDeadLetter:
			out = append(out, "dead_letter:"+ref.RunID+"/"+ref.Task)
		default:
			out = append(out, "run:"+ref.RunID)
		}
	}
	prefix := map[action.Kind]string{action.KindRun: "run:", action.KindQueue: "queue:",
		action.KindNode: "node:", action.KindSchedule: "schedule:"}[a.Kind()]
	for _, id := range t.IDs {
		out = append(out, prefix+id)
	}
	return out
}

// kindResource is the resource of an action's kind as a whole, which the
// config answer asks the authorizer about.
func kindResource(k action.Kind) string {
	return map[action.Kind]string{action.KindRun: "runs", action.KindTask: "runs", action.KindDeadLetter: "dead_letters",
		action.KindQueue: "queues", action.KindNode: "nodes", action.KindSchedule: "schedules"}[k]
}

// serveAction acts: POST /api/v1/actions/{action}. serveRoute has checked
// the method, the read-only switch, the action's own switch and the
// origin; the body's items are authorized here, each.
func (h *handler) serveAction(w http.ResponseWriter, r *http.Request, p params) {
	a := action.Action(p.action)
	var req actionRequest
	if err := readBody(w, r, &req, "an action request"); err != nil {
		h.fail(w, r, err)
		return
	}
	t, err := req.target()
	if err == nil {
		err = action.Check(a, t)
	}
	if err == nil && (req.Rate < 0 || req.Rate > h.cfg.acts.rate) {
		err = errBadRequest("rate %v, want at most %v items per second", req.Rate, h.cfg.acts.rate)
	}
	if err == nil && req.Max < 0 {
		err = errBadRequest("max %d is negative", req.Max)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	for _, res := range resources(a, t) {
		if err := h.cfg.authorize(r, string(a), res); err != nil {
			h.fail(w, r, &apiError{status: http.StatusForbidden, code: "forbidden", message: err.Error()})
			return
		}
	}
	if !h.admitStart(w, r) {
		return
	}
	if req.DryRun {
		c, err := action.Count(r.Context(), h.s, a, t)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		writeJSON(w, r, http.StatusOK, dryRunJSON{Action: string(a), DryRun: true, Count: c.N, Capped: c.Capped, Skipped: c.Skipped})
		return
	}
	rep, err := h.apply(r, a, t, req.Reason, req.Rate, req.Max)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, h.reportOf(r, rep))
}

// apply runs the engine for a request and answers, for a target of one
// item, the item's refusal or failure as the error of the answer.
func (h *handler) apply(r *http.Request, a action.Action, t action.Target, reason string, rate float64, most int) (*action.Report, error) {
	if rate == 0 {
		rate = h.cfg.acts.rate
	}
	if most == 0 || most > h.cfg.acts.max {
		most = h.cfg.acts.max
	}
	logger := h.cfg.logger
	if !h.cfg.loggerSet {
		logger = nil // the engine's default: slog.Default()
	}
	rep, err := action.Apply(r.Context(), h.s, a, t, action.Options{
		Reason: reason, Actor: cut(h.cfg.acts.actor(r), actorMax), Rate: rate, Max: most, Clock: h.clock, Logger: logger,
	})
	var tm *action.TooManyError
	if errors.As(err, &tm) {
		return nil, &apiError{status: http.StatusUnprocessableEntity, code: "too_many", message: err.Error()}
	}
	if err != nil {
		return nil, err
	}
	if !t.IsQuery() && rep.Total+len(rep.Skipped) == 1 {
		switch {
		case len(rep.Skipped) == 1:
			return rep, itemError(rep.Skipped[0].Err)
		case rep.Failed == 1:
			return rep, itemError(rep.Items[0].Err)
		}
	}
	return rep, nil
}

// actorMax is the longest actor name the engine takes, in bytes.
const actorMax = 100

// cut answers s cut to at most n bytes, at a character boundary, and
// made valid UTF-8.
func cut(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// itemError maps an item's error to the answer's: a state the action does
// not apply to is a conflict.
func itemError(err error) error {
	var tc *plait.TaskControlError
	if errors.Is(err, action.ErrNotApplicable) || errors.As(err, &tc) {
		return &apiError{status: http.StatusConflict, code: "conflict", message: err.Error()}
	}
	return err
}

type dryRunJSON struct {
	Action  string `json:"action"`
	DryRun  bool   `json:"dryRun"`
	Count   int    `json:"count"`
	Capped  bool   `json:"capped"`
	Skipped int    `json:"skipped"`
}

type errorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type itemJSON struct {
	ID    string     `json:"id,omitempty"`
	RunID string     `json:"runId,omitempty"`
	Task  string     `json:"task,omitempty"`
	Runs  []string   `json:"runs,omitempty"`
	Error *errorJSON `json:"error,omitempty"`
}

type reportJSON struct {
	Action           string     `json:"action"`
	DryRun           bool       `json:"dryRun"`
	Total            int        `json:"total"`
	Done             int        `json:"done"`
	Failed           int        `json:"failed"`
	Items            []itemJSON `json:"items"`
	Skipped          []itemJSON `json:"skipped"`
	Noted            int        `json:"noted"`
	NotesUnsupported bool       `json:"notesUnsupported"`
}

func (h *handler) itemsOf(r *http.Request, items []action.Item) []itemJSON {
	out := make([]itemJSON, len(items))
	for i, it := range items {
		out[i] = itemJSON{ID: it.ID, RunID: it.RunID, Task: it.Task, Runs: it.Runs}
		if it.Err != nil {
			ae := h.classify(r, itemError(it.Err))
			out[i].Error = &errorJSON{Code: ae.code, Message: ae.message}
		}
	}
	return out
}

func (h *handler) reportOf(r *http.Request, rep *action.Report) reportJSON {
	return reportJSON{Action: string(rep.Action), Total: rep.Total, Done: rep.Done, Failed: rep.Failed,
		Items: h.itemsOf(r, rep.Items), Skipped: h.itemsOf(r, rep.Skipped), Noted: rep.Noted, NotesUnsupported: rep.NotesUnsupported}
}

// serveCancel cancels a run: POST /api/v1/runs/{id}/cancel, a run.cancel
// of one run; a run that has finished is answered as it is.
func (h *handler) serveCancel(w http.ResponseWriter, r *http.Request, p params) {
	if !h.admitStart(w, r) {
		return
	}
	_, err := h.apply(r, action.RunCancel, action.Target{IDs: []string{p.id}}, "", 0, 0)
	var ae *apiError
	if errors.As(err, &ae) && ae.code == "conflict" {
		err = nil // finished already
	}
	h.answerRun(w, r, p.id, err)
}

// replayRequest is the body of POST /api/v1/runs/{id}/replay.
type replayRequest struct {
	Generation *int64   `json:"generation"`
	Tasks      []string `json:"tasks"`
}

// serveReplay replays tasks of a finished run: POST
// /api/v1/runs/{id}/replay, a run.replay of one run.
func (h *handler) serveReplay(w http.ResponseWriter, r *http.Request, p params) {
	var req replayRequest
	if err := readBody(w, r, &req, "a replay request"); err != nil {
		h.fail(w, r, err)
		return
	}
	t := action.Target{IDs: []string{p.id}, Generation: req.Generation}
	if len(req.Tasks) > 0 {
		t.IDs = nil
		for _, task := range req.Tasks {
			if err := checkParams(params{task: task}); err != nil {
				h.fail(w, r, err)
				return
			}
			t.Refs = append(t.Refs, action.Ref{RunID: p.id, Task: task})
		}
	}
	if !h.admitStart(w, r) {
		return
	}
	_, err := h.apply(r, action.RunReplay, t, "", 0, 0)
	h.answerRun(w, r, p.id, err)
}

// answerRun answers {"run": ...} as the run is now, or err.
func (h *handler) answerRun(w http.ResponseWriter, r *http.Request, id string, err error) {
	var run *plait.Run
	if err == nil {
		run, err = h.s.RunGet(r.Context(), id)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, struct {
		Run apijson.Run `json:"run"`
	}{runOf(run, false)})
}
