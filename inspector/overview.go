package inspector

import (
	"errors"
	"net/http"
	"sort"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/action"
	"github.com/plaitdag/plait/internal/apijson"
	"github.com/plaitdag/plait/store"
)

// Bounds of the overview's reads.
const (
	// overviewHoursDefault is the series' span when none is asked, and
	// store.StatsSeriesKeep the longest.
	overviewHoursDefault = 3
	// overviewQueuesMax is the most queues the overview lists.
	overviewQueuesMax = 1000
	// deadLetterWindow is the most dead letters the overview reads for
	// its total and for its last hour.
	deadLetterWindow = 1000
	// deadLetterGroupsShown is the most error groups it answers.
	deadLetterGroupsShown = 20
	// notRunning is the problem Health names for a Scheduler that does not
	// run tasks: the inspector's is usually a client, so it is no warning.
	notRunning = "Run is not running"
)

// serveConfig answers what the pages need to know about the handler: GET
// /api/v1/config.
func (h *handler) serveConfig(w http.ResponseWriter, r *http.Request, _ params) {
	actions := map[string]bool{}
	for _, a := range action.Actions {
		actions[string(a)] = !h.cfg.readOnly && h.cfg.acts.enabled[string(a)] &&
			h.cfg.authorize(r, string(a), kindResource(a.Kind())) == nil
	}
	_, err := h.s.Subscribe(r.Context(), &plait.SubscribeFilter{})
	writeJSON(w, r, http.StatusOK, struct {
		Version      int             `json:"version"`
		ReadOnly     bool            `json:"readOnly"`
		MinRefreshMs int64           `json:"minRefreshMs"`
		Actions      map[string]bool `json:"actions"`
		ActionRate   float64         `json:"actionRate"`
		ActionMax    int             `json:"actionMax"`
		Events       bool            `json:"events"`
	}{1, h.cfg.readOnly, h.cfg.minRefresh.Milliseconds(), actions, h.cfg.acts.rate, h.cfg.acts.max,
		!errors.Is(err, plait.ErrUnsupported)})
}

type pointJSON struct {
	At             apijson.Stamp `json:"at"`
	TasksSucceeded int64         `json:"tasksSucceeded"`
	TasksFailed    int64         `json:"tasksFailed"`
	TasksRetried   int64         `json:"tasksRetried"`
	RunsCompleted  int64         `json:"runsCompleted"`
	RunsFailed     int64         `json:"runsFailed"`
}

type queueJSON struct {
	Name             string        `json:"name"`
	Queue            string        `json:"queue"`
	Requires         []string      `json:"requires,omitempty"`
	Ready            int           `json:"ready"`
	Delayed          int           `json:"delayed"`
	Running          int           `json:"running"`
	SetAside         int           `json:"setAside"`
	Limited          int           `json:"limited"`
	Paused           bool          `json:"paused"`
	Unserved         bool          `json:"unserved"`
	OldestReadyAt    apijson.Stamp `json:"oldestReadyAt,omitzero"`
	OldestReadyAgeMs int64         `json:"oldestReadyAgeMs,omitempty"`
}

type queuesJSON struct {
	Items            []queueJSON `json:"items"`
	Ready            int         `json:"ready"`
	Running          int         `json:"running"`
	OldestReadyAgeMs int64       `json:"oldestReadyAgeMs"`
	Truncated        bool        `json:"truncated"`
}

type nodeJSON struct {
	ID          string        `json:"id"`
	Name        string        `json:"name,omitempty"`
	Host        string        `json:"host,omitempty"`
	Capacity    int           `json:"capacity"`
	Load        int           `json:"load"`
	Draining    bool          `json:"draining"`
	StartedAt   apijson.Stamp `json:"startedAt,omitzero"`
	HeartbeatAt apijson.Stamp `json:"heartbeatAt,omitzero"`
}

type nodesJSON struct {
	Live  int        `json:"live"`
	Items []nodeJSON `json:"items"`
}

type groupJSON struct {
	Key    string        `json:"key"`
	Count  int           `json:"count"`
	Oldest apijson.Stamp `json:"oldest,omitzero"`
	Newest apijson.Stamp `json:"newest,omitzero"`
}

type deadLettersJSON struct {
	Total     int         `json:"total"`
	LastHour  int         `json:"lastHour"`
	Truncated bool        `json:"truncated"`
	Groups    []groupJSON `json:"groups"`
}

type healthJSON struct {
	Warnings []string `json:"warnings"`
}

// overview is the answer of GET /api/v1/overview.
type overview struct {
	Now         apijson.Stamp    `json:"now"`
	Hours       int              `json:"hours"`
	Series      []pointJSON      `json:"series"`
	Queues      *queuesJSON      `json:"queues"`
	Nodes       *nodesJSON       `json:"nodes"`
	DeadLetters *deadLettersJSON `json:"deadLetters"`
	Health      healthJSON       `json:"health"`
	Notices     []notice         `json:"notices"`
}

// serveOverview answers the fleet at a glance: GET /api/v1/overview. A
// part the store cannot answer is null with a notice.
func (h *handler) serveOverview(w http.ResponseWriter, r *http.Request, _ params) {
	hours, err := intParam(r.URL.Query(), "hours", overviewHoursDefault, 1, int(store.StatsSeriesKeep/time.Hour))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	now := h.now()
	out := overview{Now: apijson.Stamp(now), Hours: hours, Notices: []notice{}, Health: healthJSON{Warnings: []string{}}}
	parts := []struct {
		section string
		read    func() error
	}{
		{"series", func() (err error) { out.Series, err = h.series(r, now, hours); return }},
		{"queues", func() (err error) { out.Queues, err = h.queues(r, now); return }},
		{"nodes", func() (err error) { out.Nodes, err = h.nodes(r); return }},
		{"deadLetters", func() (err error) { out.DeadLetters, err = h.deadLetters(r, now); return }},
	}
	for _, part := range parts {
		if err := part.read(); err != nil {
			n, err := h.noticeOf(r, part.section, err)
			if err != nil {
				h.fail(w, r, err)
				return
			}
			out.Notices = append(out.Notices, *n)
		}
	}
	if _, err := h.s.Health(r.Context()); err != nil {
		var he *plait.HealthError
		if !errors.As(err, &he) {
			he = &plait.HealthError{Problems: []string{err.Error()}}
		}
		for _, p := range he.Problems {
			if p != notRunning {
				out.Health.Warnings = append(out.Health.Warnings, p)
			}
		}
	}
	writeJSON(w, r, http.StatusOK, out)
}

// series reads the minutes of the last hours.
func (h *handler) series(r *http.Request, now time.Time, hours int) ([]pointJSON, error) {
	to := now.Truncate(time.Minute).Add(time.Minute)
	params := plait.StatsSeriesParams{From: to.Add(-time.Duration(hours) * time.Hour), To: to}
	out := []pointJSON{}
	for {
		res, err := h.s.StatsSeries(r.Context(), params)
		if err != nil {
			return nil, err
		}
		for _, p := range res.Points {
			out = append(out, pointJSON{apijson.Stamp(p.At), p.TasksSucceeded, p.TasksFailed, p.TasksRetried, p.RunsCompleted, p.RunsFailed})
		}
		if res.NextCursor == "" {
			return out, nil
		}
		params.Cursor = res.NextCursor
	}
}

// queues reads the first overviewQueuesMax queues.
func (h *handler) queues(r *http.Request, now time.Time) (*queuesJSON, error) {
	res, err := h.s.QueueList(r.Context(), plait.QueueListParams{Limit: overviewQueuesMax})
	if err != nil {
		return nil, err
	}
	out := &queuesJSON{Items: make([]queueJSON, 0, len(res.Queues)), Truncated: res.NextCursor != ""}
	for _, q := range res.Queues {
		j := queueJSON{Name: q.Name, Queue: q.Queue, Requires: q.Requires, Ready: q.Ready, Delayed: q.Delayed,
			Running: q.Running, SetAside: q.SetAside, Limited: q.Limited, Paused: q.Paused, Unserved: q.Unserved,
			OldestReadyAt: apijson.Stamp(q.OldestReadyAt), OldestReadyAgeMs: apijson.Span(q.OldestReadyAt, now)}
		out.Items = append(out.Items, j)
		out.Ready += q.Ready
		out.Running += q.Running
		out.OldestReadyAgeMs = max(out.OldestReadyAgeMs, j.OldestReadyAgeMs)
	}
	return out, nil
}

// nodes reads the live nodes.
func (h *handler) nodes(r *http.Request) (*nodesJSON, error) {
	list, err := h.s.NodeList(r.Context())
	if err != nil {
		return nil, err
	}
	out := &nodesJSON{Live: len(list), Items: make([]nodeJSON, 0, len(list))}
	for _, n := range list {
		out.Items = append(out.Items, nodeJSON{ID: n.ID, Name: n.Name, Host: n.Host, Capacity: n.Capacity, Load: n.Load,
			Draining: n.Draining || n.DrainRequested, StartedAt: apijson.Stamp(n.StartedAt), HeartbeatAt: apijson.Stamp(n.HeartbeatAt)})
	}
	return out, nil
}

// deadLetters reads the newest deadLetterWindow letters grouped by error,
// and those of the last hour.
func (h *handler) deadLetters(r *http.Request, now time.Time) (*deadLettersJSON, error) {
	all, err := h.s.DeadLetterGroups(r.Context(), plait.DeadLetterGroupsParams{Window: deadLetterWindow})
	if err != nil {
		return nil, err
	}
	hour, err := h.s.DeadLetterGroups(r.Context(), plait.DeadLetterGroupsParams{Window: deadLetterWindow, Since: now.Add(-time.Hour)})
	if err != nil {
		return nil, err
	}
	groups := all.Groups
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].Count > groups[j].Count })
	if len(groups) > deadLetterGroupsShown {
		groups = groups[:deadLetterGroupsShown]
	}
	out := &deadLettersJSON{Total: all.Letters, LastHour: hour.Letters, Truncated: all.Truncated || all.NextCursor != "",
		Groups: make([]groupJSON, len(groups))}
	for i, g := range groups {
		out.Groups[i] = groupJSON{Key: g.Key, Count: g.Count, Oldest: apijson.Stamp(g.Oldest), Newest: apijson.Stamp(g.Newest)}
	}
	return out, nil
}
