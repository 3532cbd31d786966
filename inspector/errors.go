package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/plaitdag/plait"
)

// apiError is an error the API answers as
// {"error":{"code":...,"message":...}} with its status.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func errBadRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: "invalid_argument", message: fmt.Sprintf(format, args...)}
}

// idMax is the longest run id or task name the handler passes to the
// store; the store's own rules are stricter, this only keeps the junk of
// a hostile URL out of its queries and of the answers.
const idMax = 512

// checkParams refuses an id or task name no store could hold: too long,
// or holding control characters (they would break the event stream's
// lines and the logs).
func checkParams(p params) error {
	for _, v := range []struct{ what, s string }{{"run id", p.id}, {"task name", p.task}} {
		if len(v.s) > idMax {
			return errBadRequest("%s of %d bytes, want at most %d", v.what, len(v.s), idMax)
		}
		if !utf8.ValidString(v.s) {
			return errBadRequest("%s is not UTF-8", v.what)
		}
		for _, c := range v.s {
			if c < 0x20 || c == 0x7f {
				return errBadRequest("%s holds a control character", v.what)
			}
		}
	}
	return nil
}

// classify maps an error of the Scheduler to what the API answers: its
// status, code and message. A store failure is logged and answered with a
// generic message, since its text may name the store's internals.
func (h *handler) classify(r *http.Request, err error) *apiError {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, plait.ErrUnsupported):
		return &apiError{status: http.StatusNotImplemented, code: "unsupported", message: err.Error()}
	case errors.Is(err, plait.ErrNotFound):
		return &apiError{status: http.StatusNotFound, code: "not_found", message: err.Error()}
	case errors.Is(err, plait.ErrInvalidArgument):
		return &apiError{status: http.StatusBadRequest, code: "invalid_argument", message: err.Error()}
	case errors.Is(err, plait.ErrReplayConflict), errors.Is(err, plait.ErrRunActive), errors.Is(err, plait.ErrIllegalTransition):
		return &apiError{status: http.StatusConflict, code: "conflict", message: err.Error()}
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// The client went away: nobody reads the answer.
		return &apiError{status: 499, code: "canceled", message: "request canceled"}
	}
	h.cfg.logger.ErrorContext(r.Context(), "inspector: store error", "method", r.Method, "path", r.URL.Path, "err", err)
	return &apiError{status: http.StatusInternalServerError, code: "internal", message: "the store failed; the server log has the cause"}
}

// fail answers err as a JSON error.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	ae := h.classify(r, err)
	body := struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{}
	body.Error.Code, body.Error.Message = ae.code, ae.message
	writeJSON(w, ae.status, body)
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	b, err := json.Marshal(v)
	if err != nil {
		// Every answer is built from plain records; a failure is a bug.
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"encoding the answer failed"}}`)
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// notice is a part of an answer the store could not give, shown by the
// pages instead of failing the whole answer.
type notice struct {
	Section string `json:"section"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// noticeOf answers the notice of a failed part, or the error itself when it
// is not one a part may fail with (a store failure fails the answer).
func (h *handler) noticeOf(r *http.Request, section string, err error) (*notice, error) {
	switch {
	case errors.Is(err, plait.ErrUnsupported):
		return &notice{Section: section, Code: "unsupported", Message: err.Error()}, nil
	case errors.Is(err, plait.ErrNotFound):
		return &notice{Section: section, Code: "not_found", Message: err.Error()}, nil
	}
	return nil, err
}
