package httptask

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/plaitdag/plait/internal/ids"
)

// Option configures the handler [New] returns.
type Option func(*config) error

// Defaults of the handler's options.
const (
	// TimeoutDefault bounds a request whose spec sets no timeout: 30 s.
	TimeoutDefault = 30 * time.Second
	// MaxResponseDefault caps the response body, the task's result: 1 MiB.
	MaxResponseDefault = 1 << 20
	// MaxRetryAfterDefault caps the delay a server's Retry-After can ask
	// for: 10 minutes.
	MaxRetryAfterDefault = 10 * time.Minute
	// BodyHeadBytes is how much of an unsuccessful answer's body a
	// [StatusError] keeps.
	BodyHeadBytes = 512
	// maxRedirects is how many redirects a request follows.
	maxRedirects = 10
)

// config is what the options set.
type config struct {
	// hosts holds allowed hosts, lower-cased: "name" allows any port,
	// "name:port" that port only. Defaults to empty: no request is sent.
	hosts map[string]bool
	// client sends the requests. Defaults to one over
	// http.DefaultTransport.
	client *http.Client
	// timeout bounds a request. Defaults to TimeoutDefault.
	timeout time.Duration
	// maxResponse caps the body. Defaults to MaxResponseDefault.
	maxResponse int
	// maxRetryAfter caps Retry-After. Defaults to MaxRetryAfterDefault.
	maxRetryAfter time.Duration
}

// AllowHosts adds hosts requests may go to, redirects included: "name" (any
// port) or "name:port". Names match without regard to case; an IPv6
// address is written in brackets with a port ("[::1]:8080") or bare
// without. Without AllowHosts no request is sent.
func AllowHosts(hosts ...string) Option {
	return func(c *config) error {
		for _, h := range hosts {
			if h == "" || strings.ContainsAny(h, "/?#@ ") {
				return fmt.Errorf("AllowHosts(%s): not a host", ids.Quote(h))
			}
			if host, port, err := net.SplitHostPort(h); err == nil {
				if host == "" || port == "" {
					return fmt.Errorf("AllowHosts(%s): not a host", ids.Quote(h))
				}
			}
			c.hosts[strings.ToLower(h)] = true
		}
		return nil
	}
}

// WithClient sends requests with client's transport, cookie jar and
// timeout (the handler sets its own redirect policy, which checks every
// redirect against the allow-list). Defaults to http.DefaultTransport.
func WithClient(client *http.Client) Option {
	return func(c *config) error {
		if client == nil {
			return errors.New("WithClient(nil)")
		}
		c.client = client
		return nil
	}
}

// WithTimeout bounds a request whose spec sets no timeout. Defaults to
// TimeoutDefault; d must be positive.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("WithTimeout(%s): must be positive", d)
		}
		c.timeout = d
		return nil
	}
}

// WithMaxResponse caps the response body, the task's result, at n bytes; a
// larger one fails the task with a [ResponseTooLargeError]. Defaults to
// MaxResponseDefault; n must be positive.
func WithMaxResponse(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxResponse(%d): must be positive", n)
		}
		c.maxResponse = n
		return nil
	}
}

// WithMaxRetryAfter caps the delay a server's Retry-After can set before
// the next attempt. Defaults to MaxRetryAfterDefault; d must be positive.
func WithMaxRetryAfter(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("WithMaxRetryAfter(%s): must be positive", d)
		}
		c.maxRetryAfter = d
		return nil
	}
}

func newConfig(opts []Option) (*config, error) {
	c := &config{
		hosts:         map[string]bool{},
		client:        &http.Client{},
		timeout:       TimeoutDefault,
		maxResponse:   MaxResponseDefault,
		maxRetryAfter: MaxRetryAfterDefault,
	}
	var errs []error
	for _, o := range opts {
		if o == nil {
			errs = append(errs, errors.New("nil option"))
			continue
		}
		if err := o(c); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("httptask: %w", errors.Join(errs...))
	}
	// A copy, so the caller's client keeps its own redirect policy.
	client := *c.client
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("httptask: stopped after %d redirects", maxRedirects)
		}
		return c.allow(req.URL.Host, req.URL.Scheme)
	}
	c.client = &client
	return c, nil
}

// allow answers a [NotAllowedError] unless the allow-list holds host
// (as in a URL: "name", "name:port", "[v6]:port").
func (c *config) allow(host, scheme string) error {
	h := strings.ToLower(host)
	name, port, err := net.SplitHostPort(h)
	if err != nil {
		name, port = strings.Trim(h, "[]"), ""
	}
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	if c.hosts[name] || c.hosts[net.JoinHostPort(name, port)] {
		return nil
	}
	return &NotAllowedError{Host: host}
}
