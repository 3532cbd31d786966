package inspector

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/apijson"
	"github.com/plaitdag/plait/store"
)

// fleetQueueJSON is a queue as the queues answer has it: the overview's
// with its ready tasks per priority, its limit and its nodes.
type fleetQueueJSON struct {
	queueJSON
	Urgent int      `json:"urgent"`
	High   int      `json:"high"`
	Normal int      `json:"normal"`
	Low    int      `json:"low"`
	Limit  int      `json:"limit"`
	Nodes  []string `json:"nodes"`
}

// unservedWarning is the warning of a queue no live node serves.
func unservedWarning(q *plait.QueueInfo) string {
	w := "queue " + q.Name + ": no live node serves it"
	if len(q.Requires) > 0 {
		w += " (one with capabilities " + strings.Join(q.Requires, ",") + ", claiming from " + q.Queue + ")"
	}
	return w
}

// serveQueues answers a page of queues: GET /api/v1/queues.
func (h *handler) serveQueues(w http.ResponseWriter, r *http.Request, _ params) {
	q := r.URL.Query()
	limit, err := intParam(q, "limit", store.QueueListPageMax, 1, store.QueueListPageMax)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.s.QueueList(r.Context(), plait.QueueListParams{Cursor: q.Get("cursor"), Limit: limit})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	now := h.now()
	out := struct {
		Items         []fleetQueueJSON `json:"items"`
		NextCursor    string           `json:"nextCursor,omitempty"`
		RunningCapped bool             `json:"runningCapped"`
		Warnings      []string         `json:"warnings"`
	}{Items: make([]fleetQueueJSON, 0, len(res.Queues)), NextCursor: res.NextCursor, RunningCapped: res.RunningCapped, Warnings: []string{}}
	for i := range res.Queues {
		qi := &res.Queues[i]
		j := fleetQueueJSON{
			queueJSON: queueJSON{Name: qi.Name, Queue: qi.Queue, Requires: qi.Requires, Ready: qi.Ready, Delayed: qi.Delayed,
				Running: qi.Running, SetAside: qi.SetAside, Limited: qi.Limited, Paused: qi.Paused, Unserved: qi.Unserved,
				OldestReadyAt: apijson.Stamp(qi.OldestReadyAt), OldestReadyAgeMs: apijson.Span(qi.OldestReadyAt, now)},
			Urgent: qi.Urgent, High: qi.High, Normal: qi.Normal, Low: qi.Low, Limit: qi.Limit, Nodes: qi.Nodes,
		}
		if j.Nodes == nil {
			j.Nodes = []string{}
		}
		out.Items = append(out.Items, j)
		if qi.Unserved {
			out.Warnings = append(out.Warnings, unservedWarning(qi))
		}
	}
	writeJSON(w, r, http.StatusOK, out)
}

type heldJSON struct {
	RunID     string        `json:"runId"`
	Task      string        `json:"task"`
	Attempt   int           `json:"attempt"`
	StartedAt apijson.Stamp `json:"startedAt,omitzero"`
}

type fleetNodeJSON struct {
	nodeJSON
	PID            int           `json:"pid,omitempty"`
	Version        string        `json:"version,omitempty"`
	Capabilities   []string      `json:"capabilities"`
	Queues         []string      `json:"queues"`
	Handlers       []string      `json:"handlers"`
	Completed      int64         `json:"completed"`
	Failed         int64         `json:"failed"`
	DrainRequested bool          `json:"drainRequested"`
	HeartbeatAgeMs int64         `json:"heartbeatAgeMs"`
	ExpiresAt      apijson.Stamp `json:"expiresAt,omitzero"`
	Held           []heldJSON    `json:"held"`
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// serveNodes answers the live nodes and the queues none serves: GET
// /api/v1/nodes.
func (h *handler) serveNodes(w http.ResponseWriter, r *http.Request, _ params) {
	list, err := h.s.NodeList(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	warnings, err := h.unserved(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	now := h.now()
	out := struct {
		Items    []fleetNodeJSON `json:"items"`
		Live     int             `json:"live"`
		Warnings []string        `json:"warnings"`
	}{Items: make([]fleetNodeJSON, 0, len(list)), Live: len(list), Warnings: warnings}
	for _, n := range list {
		j := fleetNodeJSON{
			nodeJSON: nodeJSON{ID: n.ID, Name: n.Name, Host: n.Host, Capacity: n.Capacity, Load: n.Load,
				Draining: n.Draining, StartedAt: apijson.Stamp(n.StartedAt), HeartbeatAt: apijson.Stamp(n.HeartbeatAt)},
			PID: n.PID, Version: n.Version, Capabilities: orEmpty(n.Capabilities), Queues: orEmpty(n.Queues),
			Handlers: orEmpty(n.Handlers), Completed: n.Completed, Failed: n.Failed, DrainRequested: n.DrainRequested,
			HeartbeatAgeMs: apijson.Span(n.HeartbeatAt, now), ExpiresAt: apijson.Stamp(n.ExpiresAt), Held: []heldJSON{},
		}
		for _, t := range n.Tasks {
			j.Held = append(j.Held, heldJSON{RunID: t.RunID, Task: t.Task, Attempt: t.Attempt, StartedAt: apijson.Stamp(t.StartedAt)})
		}
		out.Items = append(out.Items, j)
	}
	writeJSON(w, r, http.StatusOK, out)
}

// unserved answers a warning per queue of the first page no live node
// serves; none on a store that does not list queues.
func (h *handler) unserved(ctx context.Context) ([]string, error) {
	res, err := h.s.QueueList(ctx, plait.QueueListParams{Limit: store.QueueListPageMax})
	if errors.Is(err, plait.ErrUnsupported) {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []string{}
	for i := range res.Queues {
		if res.Queues[i].Unserved {
			out = append(out, unservedWarning(&res.Queues[i]))
		}
	}
	return out, nil
}
