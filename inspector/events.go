package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/apijson"
)

// eventCursorMax is the longest event cursor a client may resume from.
const eventCursorMax = 256

// eventJSON is a store event as the stream's data carries it.
type eventJSON struct {
	Cursor     string            `json:"cursor"`
	Type       string            `json:"type"`
	RunID      string            `json:"runId"`
	Task       string            `json:"task,omitempty"`
	TaskStatus string            `json:"taskStatus,omitempty"`
	RunStatus  string            `json:"runStatus,omitempty"`
	Attempt    int               `json:"attempt,omitempty"`
	Generation int64             `json:"generation"`
	At         apijson.Stamp     `json:"at,omitzero"`
	DurationMs int64             `json:"durationMs,omitempty"`
	Error      string            `json:"error,omitempty"`
	WaitingFor string            `json:"waitingFor,omitempty"`
	Worker     string            `json:"worker,omitempty"`
	Node       string            `json:"node,omitempty"`
	Progress   *apijson.Progress `json:"progress,omitempty"`
	Note       string            `json:"note,omitempty"`
}

func eventOf(ev *plait.StoreEvent) eventJSON {
	return eventJSON{
		Cursor: string(ev.Cursor), Type: string(ev.Type), RunID: ev.RunID, Task: ev.Task,
		TaskStatus: string(ev.TaskStatus), RunStatus: string(ev.RunStatus), Attempt: ev.Attempt, Generation: ev.Generation, At: apijson.Stamp(ev.At),
		DurationMs: apijson.Millis(ev.Duration), Error: ev.Error, WaitingFor: ev.WaitingFor, Worker: ev.Worker, Node: ev.Node,
		Progress: apijson.ProgressOf(ev.Progress), Note: ev.Note,
	}
}

// resumeCursor is where a stream starts: after the Last-Event-ID header an
// EventSource resends on reconnect, else after the ?after= parameter, else
// at the oldest event the store keeps for the run.
func resumeCursor(r *http.Request) (plait.EventCursor, error) {
	c := r.Header.Get("Last-Event-ID")
	if c == "" {
		c = r.URL.Query().Get("after")
	}
	if len(c) > eventCursorMax || strings.ContainsAny(c, "\r\n\x00") {
		return "", errBadRequest("event cursor is not one the stream sent")
	}
	return plait.EventCursor(c), nil
}

// next is one answer of Subscription.Next.
type next struct {
	ev  *plait.StoreEvent
	err error
}

// serveEvents streams the run's events as server-sent events: GET
// /api/v1/runs/{id}/events.
func (h *handler) serveEvents(w http.ResponseWriter, r *http.Request, p params) {
	after, err := resumeCursor(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	sub, err := h.s.Subscribe(ctx, &plait.SubscribeFilter{RunID: p.id, After: after})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The run is checked once, before the stream starts: a stream of an
	// unknown run would wait forever.
	if err := h.runExists(ctx, p.id); err != nil {
		h.fail(w, r, err)
		return
	}
	h.stream(ctx, cancel, w, r, sub, "run "+p.id)
}

// stream writes sub's events to w as server-sent events until ctx or the
// client ends, or the store fails (then an error event). what names the
// stream in the log.
func (h *handler) stream(ctx context.Context, cancel context.CancelFunc, w http.ResponseWriter, r *http.Request, sub *plait.Subscription, what string) {
	rc := http.NewResponseController(w)
	// A stream outlives a server's WriteTimeout; where the writer cannot
	// lift it, the browser reconnects with Last-Event-ID.
	_ = rc.SetWriteDeadline(time.Time{})
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return // the headers alone: a stream has no length to give
	}
	if _, err := io.WriteString(w, "retry: "+strconv.FormatInt(h.cfg.minRefresh.Milliseconds(), 10)+"\n\n"); err != nil {
		return
	}
	if rc.Flush() != nil {
		return
	}

	events := make(chan next)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := sub.Next(ctx)
			select {
			case events <- next{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil && !errors.As(err, new(*plait.FellBehindError)) {
				return
			}
		}
	}()
	defer func() { cancel(); <-done }()

	tick := time.NewTicker(h.keepalive)
	defer tick.Stop()
	for {
		var frame string
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			frame = ": keepalive\n\n"
		case n := <-events:
			var fb *plait.FellBehindError
			switch {
			case n.err == nil:
				data, _ := json.Marshal(eventOf(n.ev))
				frame = "id: " + string(n.ev.Cursor) + "\nevent: " + string(n.ev.Type) + "\ndata: " + string(data) + "\n\n"
			case errors.As(n.err, &fb):
				frame = "event: fell_behind\ndata: {}\n\n"
			case ctx.Err() != nil:
				return
			default:
				// The stream ends; the browser reconnects after the
				// retry interval from the last id it saw.
				h.cfg.logger.WarnContext(ctx, "inspector: event stream", "stream", what, "err", n.err)
				data, _ := json.Marshal(map[string]any{"error": map[string]string{"code": "internal", "message": "the store failed; the stream resumes"}})
				_, _ = io.WriteString(w, "event: error\ndata: "+string(data)+"\n\n")
				_ = rc.Flush()
				return
			}
		}
		if _, err := io.WriteString(w, frame); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// runExists answers nil when the store knows run id: the running tasks
// read through the query index when the store has one (a small read for a
// large run), else the whole run.
func (h *handler) runExists(ctx context.Context, id string) error {
	_, err := h.s.TaskList(ctx, id, plait.TaskRunning)
	if errors.Is(err, plait.ErrUnsupported) {
		_, err = h.s.RunGet(ctx, id)
	}
	return err
}
