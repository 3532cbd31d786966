package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/plaitdag/plait"
)

// bodyMax is the largest request body a mutating route reads.
const bodyMax = 64 << 10

// serveCancel cancels a run: POST /api/v1/runs/{id}/cancel.
func (h *handler) serveCancel(w http.ResponseWriter, r *http.Request, p params) {
	if err := h.runExists(r.Context(), p.id); err != nil {
		h.fail(w, r, err)
		return
	}
	run, err := h.s.RunCancel(r.Context(), p.id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.cfg.logger.InfoContext(r.Context(), "inspector: run cancelled", "run", p.id)
	writeJSON(w, r, http.StatusOK, struct {
		Run runJSON `json:"run"`
	}{runOf(run, false)})
}

// replayRequest is the body of POST /api/v1/runs/{id}/replay.
type replayRequest struct {
	Generation *int64   `json:"generation"`
	Tasks      []string `json:"tasks"`
}

// serveReplay replays tasks of a finished run: POST
// /api/v1/runs/{id}/replay.
func (h *handler) serveReplay(w http.ResponseWriter, r *http.Request, p params) {
	var req replayRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, bodyMax))
	if err != nil {
		h.fail(w, r, errBadRequest("reading the body: %v", err))
		return
	}
	if len(body) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			h.fail(w, r, errBadRequest("the body is not a replay request: %v", err))
			return
		}
	}
	run, err := h.s.RunGet(r.Context(), p.id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	for _, t := range req.Tasks {
		if err := checkParams(params{task: t}); err != nil {
			h.fail(w, r, err)
			return
		}
		if run.Task(t) == nil {
			h.fail(w, r, &apiError{status: http.StatusNotFound, code: "not_found", message: "run " + p.id + " has no task " + t})
			return
		}
	}
	gen := run.Generation
	if req.Generation != nil {
		gen = *req.Generation
	}
	replayed, err := h.s.RunReplay(r.Context(), p.id, gen, req.Tasks...)
	if err != nil {
		var re *plait.ReplayError
		if errors.As(err, &re) {
			h.fail(w, r, &apiError{status: http.StatusConflict, code: "conflict", message: err.Error()})
			return
		}
		h.fail(w, r, err)
		return
	}
	h.cfg.logger.InfoContext(r.Context(), "inspector: run replayed", "run", p.id, "generation", replayed.Generation)
	writeJSON(w, r, http.StatusOK, struct {
		Run runJSON `json:"run"`
	}{runOf(replayed, false)})
}
