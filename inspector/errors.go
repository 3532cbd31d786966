package inspector

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
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
	writeJSON(w, r, ae.status, body)
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	w.Header().Set("Cache-Control", "no-store")
	b, err := json.Marshal(v)
	if err != nil {
		// Every answer is built from plain records; a failure is a bug.
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"encoding the answer failed"}}`)
	}
	writeBody(w, r, status, "application/json; charset=utf-8", b)
}

// gzipFrom is the size past which an answer is compressed for a client
// that accepts gzip: a 10,000-task run is about 2 MB of JSON and 60 kB
// compressed, while a small answer is not worth the work.
const gzipFrom = 8 << 10

// writeBody answers b with status and content type, compressed with gzip
// when it is large and the client accepts it.
func writeBody(w http.ResponseWriter, r *http.Request, status int, contentType string, b []byte) {
	hdr := w.Header()
	hdr.Set("Content-Type", contentType)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Add("Vary", "Accept-Encoding")
	if len(b) < gzipFrom || !acceptsGzip(r) {
		hdr.Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(status)
		_, _ = w.Write(b)
		return
	}
	hdr.Set("Content-Encoding", "gzip")
	w.WriteHeader(status)
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed) // a valid level: no error
	_, _ = zw.Write(b)
	_ = zw.Close()
}

// acceptsGzip reports whether r's Accept-Encoding lists gzip with a
// non-zero weight.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		return !ok || (q != "0" && q != "0.0" && q != "0.00" && q != "0.000")
	}
	return false
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
