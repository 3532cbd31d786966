// Package httptask is a plait handler that makes HTTP calls: a step of a
// workflow that posts to a web hook or fetches a document, without a Go
// handler for it. Nothing is sent unless the host registers the handler,
// and then only to the hosts it allows:
//
//	h, err := httptask.New(httptask.AllowHosts("api.example.com"))
//	s.Handle(httptask.HandlerName, h)
//	wf.Task("notify", httptask.HandlerName, httptask.Spec{URL: "https://api.example.com/hook", JSON: body})
//
// A task's payload is a [Spec]. The response body, capped
// ([WithMaxResponse]), is the task's result, stored as it is (a
// plait.Raw). The status code decides the rest: a success code succeeds; a
// retryable one (by default 408, 429 and 5xx) fails the attempt and the
// task's retry policy applies, except that a Retry-After header sets the
// delay before the next attempt (plait.RetryAfter); any other code fails
// the task at once. Network errors and timeouts are retried; a host outside
// the allow-list, a malformed spec and an oversized body fail at once.
//
// Every request carries an Idempotency-Key header: the task's
// [plait.Task.IdempotencyKey], "<run>/<task>". It is the same on every
// attempt of the task (a retry, a run again after a lost lease), so a server
// that deduplicates by it applies the call once however many times it is
// sent. A replay of the run ([plait.Scheduler.RunReplay],
// [plait.Scheduler.DeadLetterRequeue]) sends the same key again, since the
// run and the task keep their names: a server that still remembers the key
// answers the replayed call as it answered the first. An Idempotency-Key in
// the spec's Headers is sent instead.
package httptask

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/ids"
)

// HandlerName is the handler name workflow files give HTTP tasks: register
// the handler under it.
const HandlerName = "http"

// New returns the HTTP handler, configured by opts. Without [AllowHosts]
// it sends nothing: every task fails with a [NotAllowedError]. Each
// request it sends carries the Idempotency-Key header "<run>/<task>",
// unchanged across the task's attempts (see the package doc).
func New(opts ...Option) (plait.HandlerFunc, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return cfg.handle, nil
}

func (c *config) handle(ctx context.Context, t *plait.Task) (any, error) {
	var spec Spec
	if err := t.Decode(&spec); err != nil {
		// A decoder may echo the payload (a number, a field name): cut.
		return nil, plait.Permanent(fmt.Errorf("%w: %s", ErrInvalidSpec, ids.Cut(err.Error())))
	}
	if err := spec.Validate(); err != nil {
		return nil, plait.Permanent(err)
	}
	req, err := c.request(ctx, t, &spec)
	if err != nil {
		return nil, plait.Permanent(err)
	}
	if err := c.allow(req.URL.Host, req.URL.Scheme); err != nil {
		return nil, plait.Permanent(err)
	}
	timeout := c.timeout
	if spec.Timeout != "" {
		timeout, _ = time.ParseDuration(spec.Timeout) // Validate checked it
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := c.client.Do(req.WithContext(ctx))
	if err != nil {
		var na *NotAllowedError
		if errors.As(err, &na) {
			return nil, plait.Permanent(na)
		}
		return nil, newSendError(req.Method, req.URL.Redacted(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.maxResponse)+1))
	if err != nil {
		return nil, fmt.Errorf("httptask: read response: %w", err)
	}
	if len(body) > c.maxResponse {
		return nil, plait.Permanent(&ResponseTooLargeError{Limit: c.maxResponse})
	}
	switch spec.classify(resp.StatusCode) {
	case classSuccess:
		return plait.Raw(body), nil
	case classRetry:
		se := c.statusError(resp, body, true)
		if se.RetryAfter > 0 {
			return nil, plait.RetryAfter(se.RetryAfter, se)
		}
		return nil, se
	default:
		return nil, plait.Permanent(c.statusError(resp, body, false))
	}
}

// request builds the request the spec describes.
func (c *config) request(ctx context.Context, t *plait.Task, spec *Spec) (*http.Request, error) {
	var body []byte
	switch {
	case spec.Body != "":
		body = []byte(spec.Body)
	case len(spec.JSON) > 0:
		body = spec.JSON
	case spec.BodyFrom != "":
		// A parent that returned nothing stores no result: the body is
		// empty rather than the task failing.
		b, ok := t.ParentRaw(spec.BodyFrom)
		if !ok {
			t.Logger().Info("httptask: body_from names no parent result; the body is empty", "parent", spec.BodyFrom)
			b = []byte{}
		}
		body = b
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, spec.method(), spec.URL, r)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidSpec, urlReason(err))
	}
	for k, v := range spec.Headers {
		req.Header.Set(k, v)
	}
	if len(spec.JSON) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	// Downstream services can deduplicate retried calls by it.
	if req.Header.Get("Idempotency-Key") == "" {
		req.Header.Set("Idempotency-Key", t.IdempotencyKey())
	}
	return req, nil
}

func (c *config) statusError(resp *http.Response, body []byte, retryable bool) *StatusError {
	head := body
	if len(head) > BodyHeadBytes {
		head = head[:BodyHeadBytes]
	}
	se := &StatusError{Code: resp.StatusCode, Status: resp.Status, Retryable: retryable,
		BodyHead: strings.TrimSpace(strings.ToValidUTF8(string(head), "\uFFFD"))}
	if retryable {
		se.RetryAfter = retryAfter(resp.Header, c.maxRetryAfter)
	}
	return se
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date measured
// from the response's own Date header (so the two clocks agree) or, when
// the server sent none, from ours. The answer is capped at max; zero means
// none or unreadable.
func retryAfter(h http.Header, max time.Duration) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(max/time.Second) {
			return max
		}
		d = time.Duration(secs) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		now := time.Now()
		if date, err := http.ParseTime(h.Get("Date")); err == nil {
			now = date
		}
		d = at.Sub(now)
	}
	if d <= 0 {
		return 0
	}
	if d > max {
		return max
	}
	return d
}
