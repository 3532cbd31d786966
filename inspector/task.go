package inspector

import (
	"encoding/base64"
	"net/http"
	"unicode/utf8"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/apijson"
)

// ShownBytesMax is the most bytes of a payload or a result the task answer
// carries; the rest is cut (and "truncated" set), so that one large result
// does not make the page unusable.
const ShownBytesMax = 64 << 10

// dataJSON is a payload or a result as shown.
type dataJSON struct {
	Encoding  string `json:"encoding"` // "text" or "base64"
	Data      string `json:"data"`
	Size      int    `json:"size"`
	Truncated bool   `json:"truncated"`
	Redacted  bool   `json:"redacted"`
}

// shown passes data through the redactor and encodes it for the page: as
// text when it is UTF-8, else as base64, cut past ShownBytesMax. nil data
// answers nil.
func (h *handler) shown(kind, runID, task string, data []byte) *dataJSON {
	if data == nil {
		return nil
	}
	red := h.cfg.redact(kind, runID, task, data)
	if red == nil {
		return &dataJSON{Encoding: "text", Redacted: true}
	}
	out := &dataJSON{Encoding: "text", Size: len(red)}
	if len(red) > ShownBytesMax {
		red, out.Truncated = red[:ShownBytesMax], true
		// Do not cut a UTF-8 sequence in two: back up to its start.
		for i := 0; i < utf8.UTFMax && len(red) > 0 && !utf8.Valid(red); i++ {
			red = red[:len(red)-1]
		}
	}
	if utf8.Valid(red) {
		out.Data = string(red)
	} else {
		out.Encoding, out.Data = "base64", base64.StdEncoding.EncodeToString(red)
	}
	return out
}

// logsJSON is the log lines of one attempt.
type logsJSON struct {
	Attempt int        `json:"attempt"`
	Lines   []lineJSON `json:"lines"`
	Dropped int        `json:"dropped"`
}

type lineJSON struct {
	Time    apijson.Stamp `json:"time,omitzero"`
	Level   string        `json:"level"`
	Text    string        `json:"text"`
	Attempt int           `json:"attempt"`
}

// taskDetail is the answer of GET /api/v1/runs/{id}/tasks/{task}.
type taskDetail struct {
	RunID    string            `json:"runId"`
	Task     taskJSON          `json:"task"`
	Attempts []apijson.Attempt `json:"attempts"`
	Logs     *logsJSON         `json:"logs"`
	Payload  *dataJSON         `json:"payload"`
	Result   *dataJSON         `json:"result"`
	Notices  []notice          `json:"notices"`
}

// serveTask answers one task with its attempts, the log lines of its
// latest attempt, its payload and its result.
func (h *handler) serveTask(w http.ResponseWriter, r *http.Request, p params) {
	ctx := r.Context()
	run, err := h.s.RunGet(ctx, p.id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	t := run.Task(p.task)
	if t == nil {
		h.fail(w, r, &apiError{status: http.StatusNotFound, code: "not_found", message: "run " + p.id + " has no task " + p.task})
		return
	}
	out := taskDetail{RunID: run.ID, Notices: []notice{}}
	addNotice := func(section string, err error) bool {
		n, err := h.noticeOf(r, section, err)
		if err != nil {
			h.fail(w, r, err)
			return false
		}
		out.Notices = append(out.Notices, *n)
		return true
	}
	var spec *plait.TaskSpec
	res, err := h.s.RunSpecGet(ctx, p.id, plait.RunSpecPayloads, plait.RunSpecResults)
	if err != nil {
		if !addNotice("payload", err) {
			return
		}
	} else {
		spec = specIndex(res)[p.task]
		for _, d := range res.PayloadsDropped {
			if d == p.task {
				out.Notices = append(out.Notices, notice{Section: "payload", Code: "dropped", Message: "the store no longer keeps this payload"})
			}
		}
		if spec != nil {
			out.Payload = h.shown("payload", run.ID, p.task, spec.Payload)
		}
		if t.Status == plait.TaskSucceeded {
			data := res.Results[p.task]
			if data == nil {
				data = t.Result
			}
			out.Result = h.shown("result", run.ID, p.task, data)
		}
	}
	out.Task = taskOf(t, spec)
	out.Task.Attempts = nil
	hist, err := h.s.TaskHistory(ctx, p.id, p.task)
	switch {
	case err == nil:
		out.Attempts = attemptsOf(hist)
	case !addNotice("attempts", err):
		return
	default:
		out.Attempts = attemptsOf(t.Attempts)
	}
	if t.Attempt > 0 {
		logs, err := h.s.TaskLogRead(ctx, p.id, p.task, t.Attempt)
		if err != nil {
			if !addNotice("logs", err) {
				return
			}
		} else {
			out.Logs = &logsJSON{Attempt: t.Attempt, Lines: make([]lineJSON, len(logs.Lines)), Dropped: logs.Dropped}
			for i, l := range logs.Lines {
				out.Logs.Lines[i] = lineJSON{Time: apijson.Stamp(l.Time), Level: l.Level.String(), Text: l.Text, Attempt: l.Attempt}
			}
		}
	}
	writeJSON(w, r, http.StatusOK, out)
}
