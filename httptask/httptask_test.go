package httptask_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/httptask"
)

func task(t *testing.T, spec httptask.Spec) *plait.Task {
	t.Helper()
	b, err := json.Marshal(spec)
	require.NoError(t, err)
	return &plait.Task{RunID: "r1", Name: "call", Handler: httptask.HandlerName, Attempt: 1, Payload: b}
}

// server starts a loopback test server and a handler allowed to call it.
func server(t *testing.T, fn http.HandlerFunc, opts ...httptask.Option) (*httptest.Server, plait.HandlerFunc) {
	t.Helper()
	srv := httptest.NewServer(fn)
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	h, err := httptask.New(append([]httptask.Option{httptask.AllowHosts(u.Host), httptask.WithClient(srv.Client())}, opts...)...)
	require.NoError(t, err)
	return srv, h
}

func TestHTTPSuccessReturnsTheBody(t *testing.T) {
	t.Parallel()
	type seen struct {
		method, contentType, token, key string
		body                            string
	}
	got := make(chan seen, 1)
	srv, h := server(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.Header.Get("Content-Type"), r.Header.Get("X-Token"), r.Header.Get("Idempotency-Key"), string(b)}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":7}`))
	})
	res, err := h(context.Background(), task(t, httptask.Spec{
		URL: srv.URL + "/orders", Headers: map[string]string{"X-Token": "s3cret"}, JSON: json.RawMessage(`{"sku":"a"}`),
	}))
	require.NoError(t, err)
	require.Equal(t, plait.Raw(`{"id":7}`), res, "the response body must be the result")
	s := <-got
	require.Equal(t, seen{"POST", "application/json", "s3cret", "r1/call", `{"sku":"a"}`}, s, "a JSON body defaults to POST with its content type")
}

func TestHTTPRetryableStatusHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name   string
		code   int
		header string
		want   time.Duration
	}{
		{"seconds", http.StatusServiceUnavailable, "7", 7 * time.Second},
		{"an HTTP date, from the server's Date", http.StatusTooManyRequests, date.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"capped", http.StatusTooManyRequests, "86400", 2 * time.Minute},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, h := server(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Date", date.Format(http.TimeFormat))
				w.Header().Set("Retry-After", c.header)
				w.WriteHeader(c.code)
				_, _ = w.Write([]byte("busy"))
			}, httptask.WithMaxRetryAfter(2*time.Minute))
			_, err := h(context.Background(), task(t, httptask.Spec{URL: srv.URL}))
			var se *httptask.StatusError
			require.ErrorAs(t, err, &se)
			require.Equal(t, c.code, se.Code)
			require.True(t, se.Retryable)
			require.Equal(t, "busy", se.BodyHead)
			require.False(t, plait.IsPermanent(err), "a retryable status must leave the task to its retry policy")
			d, ok := plait.RetryAfterDelay(err)
			require.True(t, ok, "Retry-After must set the next attempt's delay")
			require.Equal(t, c.want, d)
		})
	}
	srv, h := server(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	_, err := h(context.Background(), task(t, httptask.Spec{URL: srv.URL}))
	require.ErrorIs(t, err, httptask.ErrStatus)
	_, ok := plait.RetryAfterDelay(err)
	require.False(t, ok, "without Retry-After the policy's backoff applies")
	require.False(t, plait.IsPermanent(err))
}

func TestHTTPPermanentStatusFailsAtOnce(t *testing.T) {
	t.Parallel()
	srv, h := server(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	_, err := h(context.Background(), task(t, httptask.Spec{URL: srv.URL}))
	var se *httptask.StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusNotFound, se.Code)
	require.True(t, plait.IsPermanent(err), "a 404 must fail the task without retrying")

	// The spec can say otherwise.
	res, err := h(context.Background(), task(t, httptask.Spec{URL: srv.URL, Success: []int{404}}))
	require.NoError(t, err)
	require.Contains(t, string(res.(plait.Raw)), "not found")
	_, err = h(context.Background(), task(t, httptask.Spec{URL: srv.URL, Retry: []int{404}}))
	require.False(t, plait.IsPermanent(err))
}

func TestHTTPHostAllowList(t *testing.T) {
	t.Parallel()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("a host outside the allow-list was called") }))
	defer other.Close()
	srv, h := server(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, other.URL, http.StatusFound) })

	_, err := h(context.Background(), task(t, httptask.Spec{URL: other.URL}))
	var na *httptask.NotAllowedError
	require.ErrorAs(t, err, &na, "a host outside the allow-list must be refused")
	require.True(t, plait.IsPermanent(err))

	_, err = h(context.Background(), task(t, httptask.Spec{URL: srv.URL}))
	require.ErrorAs(t, err, &na, "a redirect to a host outside the allow-list must be refused")
	require.True(t, plait.IsPermanent(err))

	none, err := httptask.New()
	require.NoError(t, err)
	_, err = none(context.Background(), task(t, httptask.Spec{URL: srv.URL}))
	require.ErrorIs(t, err, httptask.ErrNotAllowed, "without AllowHosts nothing is sent")
}

func TestHTTPResponseOverTheCap(t *testing.T) {
	t.Parallel()
	srv, h := server(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("0123456789!")) }, httptask.WithMaxResponse(10))
	_, err := h(context.Background(), task(t, httptask.Spec{URL: srv.URL}))
	var big *httptask.ResponseTooLargeError
	require.ErrorAs(t, err, &big)
	require.Equal(t, 10, big.Limit)
	require.True(t, plait.IsPermanent(err))
}

func TestHTTPTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	srv, h := server(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	_, err := h(context.Background(), task(t, httptask.Spec{URL: srv.URL, Timeout: "20ms"}))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.False(t, plait.IsPermanent(err), "a timed-out call must be retried")
}

func TestHTTPInvalidSpec(t *testing.T) {
	t.Parallel()
	h, err := httptask.New(httptask.AllowHosts("example.invalid"))
	require.NoError(t, err)
	for _, s := range []httptask.Spec{
		{},
		{URL: "ftp://example.invalid/x"},
		{URL: "http://example.invalid", Timeout: "soon"},
		{URL: "http://example.invalid", Body: "a", BodyFrom: "p"},
		{URL: "http://example.invalid", Method: "GE T"},
		{URL: "http://example.invalid", Success: []int{42}},
	} {
		_, err := h(context.Background(), task(t, s))
		require.ErrorIs(t, err, httptask.ErrInvalidSpec, "%+v", s)
		require.True(t, plait.IsPermanent(err))
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	for _, o := range []httptask.Option{httptask.AllowHosts(""), httptask.AllowHosts("http://x"), httptask.WithClient(nil), httptask.WithTimeout(0), httptask.WithMaxResponse(-1), httptask.WithMaxRetryAfter(0), nil} {
		_, err := httptask.New(o)
		require.Error(t, err)
	}
}

// TestHTTPIdempotencyKeyIsTheSameOnEveryAttempt pins the header the package
// doc promises: "<run>/<task>" on every attempt, so a server can apply a
// retried call once, and a spec's own header instead when it sets one.
func TestHTTPIdempotencyKeyIsTheSameOnEveryAttempt(t *testing.T) {
	t.Parallel()
	keys := make(chan string, 3)
	srv, h := server(t, func(w http.ResponseWriter, r *http.Request) {
		keys <- r.Header.Get("Idempotency-Key")
	})
	for attempt := 1; attempt <= 2; attempt++ {
		tk := task(t, httptask.Spec{URL: srv.URL})
		tk.Attempt, tk.Epoch = attempt, int64(attempt)
		_, err := h(context.Background(), tk)
		require.NoError(t, err)
		require.Equal(t, "r1/call", <-keys, "attempt %d must send the task's idempotency key", attempt)
	}
	_, err := h(context.Background(), task(t, httptask.Spec{URL: srv.URL, Headers: map[string]string{"idempotency-key": "mine"}}))
	require.NoError(t, err)
	require.Equal(t, "mine", <-keys, "a key the spec sets is sent instead")
}
