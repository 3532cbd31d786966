package httptask

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/plaitdag/plait/internal/ids"
)

// Spec is the payload of an HTTP task: the request to make and how to read
// its answer. It is decoded from the task's payload with the scheduler's
// codec, so a workflow carries it as data.
type Spec struct {
	// Method is the HTTP method. Defaults to GET, or POST when the request
	// has a body.
	Method string `json:"method,omitempty"`
	// URL is the absolute http or https URL to call; its host must be in
	// the handler's allow-list (see [AllowHosts]).
	URL string `json:"url"`
	// Headers are added to the request. An Idempotency-Key here replaces
	// the one the handler sends ("<run>/<task>", the same on every
	// attempt).
	Headers map[string]string `json:"headers,omitempty"`
	// Body is sent as the request body, as it is.
	Body string `json:"body,omitempty"`
	// JSON is sent as the request body with Content-Type application/json
	// unless Headers set one.
	JSON json.RawMessage `json:"json,omitempty"`
	// BodyFrom names a parent task whose stored result is sent as the
	// body, as it is stored; a parent without a result gives an empty body.
	BodyFrom string `json:"body_from,omitempty"`
	// Timeout bounds the request, as a Go duration ("10s"). Defaults to
	// the handler's [WithTimeout]; the task's own timeout bounds it too.
	Timeout string `json:"timeout,omitempty"`
	// Success lists the status codes that count as success. Defaults to
	// 200 through 299.
	Success []int `json:"success,omitempty"`
	// Retry lists the status codes that fail the attempt and leave the
	// task to its retry policy, a Retry-After header setting the delay.
	// Defaults to 408, 429 and 500 through 599. Every other code fails the
	// task at once.
	Retry []int `json:"retry,omitempty"`
}

// ErrInvalidSpec is matched by the error a malformed [Spec] gets.
var ErrInvalidSpec = errors.New("httptask: invalid request spec")

// Validate reports what makes the spec impossible to send, joined, each
// wrapping [ErrInvalidSpec]. It does not consult the allow-list.
func (s *Spec) Validate() error {
	var errs []error
	bad := func(field, reason string) {
		errs = append(errs, fmt.Errorf("%w: %s: %s", ErrInvalidSpec, field, reason))
	}
	if s.URL == "" {
		bad("url", "missing")
	} else if u, err := url.Parse(s.URL); err != nil {
		bad("url", "does not parse: "+urlReason(err))
	} else if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("url", "not an absolute http or https URL")
	}
	if s.Method != "" && !validToken(s.Method) {
		bad("method", ids.Quote(s.Method)+" is not a method")
	}
	bodies := 0
	for _, set := range []bool{s.Body != "", len(s.JSON) > 0, s.BodyFrom != ""} {
		if set {
			bodies++
		}
	}
	if bodies > 1 {
		bad("body", "body, json and body_from exclude each other")
	}
	if len(s.JSON) > 0 && !json.Valid(s.JSON) {
		bad("json", "not valid JSON")
	}
	for k, v := range s.Headers {
		if !validToken(k) || strings.ContainsAny(v, "\r\n\x00") {
			bad("headers", "bad header "+ids.Quote(k))
		}
	}
	if s.Timeout != "" {
		if d, err := time.ParseDuration(s.Timeout); err != nil || d <= 0 {
			bad("timeout", ids.Quote(s.Timeout)+" is not a positive duration")
		}
	}
	for _, c := range append(append([]int(nil), s.Success...), s.Retry...) {
		if c < 100 || c > 999 {
			bad("success", fmt.Sprintf("%d is not a status code", c))
		}
	}
	return errors.Join(errs...)
}

// urlReason says why a URL does not parse without the URL, which
// url.Parse's error holds whole; what is left, which may hold a part of it
// (a port, say), is cut (see [ids.Cut]).
func urlReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return ids.Cut(err.Error())
}

// method answers the method to send.
func (s *Spec) method() string {
	switch {
	case s.Method != "":
		return strings.ToUpper(s.Method)
	case s.Body != "" || len(s.JSON) > 0 || s.BodyFrom != "":
		return http.MethodPost
	}
	return http.MethodGet
}

// class says what a status code means for the task.
type class uint8

const (
	classPermanent class = iota
	classSuccess
	classRetry
)

func (s *Spec) classify(code int) class {
	if len(s.Success) > 0 {
		if contains(s.Success, code) {
			return classSuccess
		}
	} else if code >= 200 && code <= 299 {
		return classSuccess
	}
	if len(s.Retry) > 0 {
		if contains(s.Retry, code) {
			return classRetry
		}
	} else if code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || (code >= 500 && code <= 599) {
		return classRetry
	}
	return classPermanent
}

func contains(codes []int, code int) bool {
	for _, c := range codes {
		if c == code {
			return true
		}
	}
	return false
}

// validToken reports whether s is an RFC 9110 token, as methods and
// header names are.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r > 0x7e || r <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}
