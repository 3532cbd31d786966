package httptask

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/plaitdag/plait/internal/ids"
)

// Sentinels matched by this package's typed errors with errors.Is.
var (
	// ErrNotAllowed: the request, or a redirect, went to a host the
	// handler's allow-list does not hold. The task fails without retrying.
	ErrNotAllowed = errors.New("httptask: host not allowed")
	// ErrStatus: the server answered a status code that is not a success.
	ErrStatus = errors.New("httptask: unsuccessful status")
	// ErrResponseTooLarge: the response body was larger than the cap.
	ErrResponseTooLarge = errors.New("httptask: response too large")
)

// NotAllowedError names the host a request was refused for.
type NotAllowedError struct {
	// Host is the URL's host, with its port when the URL has one.
	Host string
}

// Error implements error.
func (e *NotAllowedError) Error() string {
	return "httptask: host " + ids.Quote(e.Host) + " is not in the allow-list"
}

// Unwrap returns [ErrNotAllowed].
func (e *NotAllowedError) Unwrap() error { return ErrNotAllowed }

// sendError is a request that got no answer. Its message names the method
// and the URL once, each cut (see [ids.Cut]), then the cause without the
// URL that net/http repeats in it; it unwraps to net/http's error.
type sendError struct {
	msg string
	err error
}

func newSendError(method, rawURL string, err error) *sendError {
	cause := err
	var ue *url.Error
	if errors.As(err, &ue) {
		cause = ue.Err
	}
	return &sendError{msg: "httptask: " + ids.Cut(method) + " " + ids.Cut(rawURL) + ": " + ids.Cut(cause.Error()), err: err}
}

func (e *sendError) Error() string { return e.msg }
func (e *sendError) Unwrap() error { return e.err }

// StatusError is an answer whose status code is not a success. The handler
// wraps a retryable one with plait.RetryAfter when the server sent
// Retry-After, and a permanent one with plait.Permanent.
type StatusError struct {
	// Code is the status code, Status its line ("503 Service Unavailable").
	Code   int
	Status string
	// Retryable says the code is one of the spec's Retry codes.
	Retryable bool
	// RetryAfter is the delay the server asked for, capped (see
	// [WithMaxRetryAfter]); zero when it asked for none.
	RetryAfter time.Duration
	// BodyHead is the start of the response body (see [BodyHeadBytes]).
	BodyHead string
}

// Error implements error; the head of the body is included so it lands in
// the task's error record.
func (e *StatusError) Error() string {
	msg := "httptask: status " + e.Status
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	if e.BodyHead != "" {
		msg += ": " + e.BodyHead
	}
	return msg
}

// Unwrap returns [ErrStatus].
func (e *StatusError) Unwrap() error { return ErrStatus }

// ResponseTooLargeError reports a response body past the cap.
type ResponseTooLargeError struct {
	// Limit is the cap, in bytes (see [WithMaxResponse]).
	Limit int
}

// Error implements error.
func (e *ResponseTooLargeError) Error() string {
	return fmt.Sprintf("httptask: response body larger than %d bytes (the cap)", e.Limit)
}

// Unwrap returns [ErrResponseTooLarge].
func (e *ResponseTooLargeError) Unwrap() error { return ErrResponseTooLarge }
