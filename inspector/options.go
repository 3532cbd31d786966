package inspector

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// ErrInvalidOption is the category of the errors [New] answers for an
// option out of range, a nil function or a nil scheduler.
var ErrInvalidOption = errors.New("inspector: invalid option")

// Refresh bounds of [WithMinRefresh].
const (
	// MinRefreshDefault is the pages' polling floor when no option sets it.
	MinRefreshDefault = 2 * time.Second
	// MinRefreshLeast is the lowest floor an option may set: below it a
	// page left open costs the store more than it shows.
	MinRefreshLeast = 500 * time.Millisecond
)

// Actions an authorizer is asked about.
const (
	// ActionRead is every request that changes nothing: pages, assets and
	// the read routes of the API.
	ActionRead = "read"
	// ActionCancel cancels a run ([ActionRunCancel]).
	ActionCancel = ActionRunCancel
	// ActionReplay replays the failed tasks of a finished run
	// ([ActionRunReplay]).
	ActionReplay = ActionRunReplay
)

// Authorizer decides whether request r may do action ([ActionRead] or
// one of [Actions]) on resource (see docs/inspector.md for the resource
// names: "page", "asset", "config", "overview", "runs", "run:<id>",
// "task:<id>/<task>", "dead_letters", "dead_letter:<id>/<task>", "queues",
// "queue:<name>", "nodes", "node:<id>", "schedules", "schedule:<name>",
// "events"). An error refuses the request with 403 and the error's text.
type Authorizer func(r *http.Request, action, resource string) error

// Redactor rewrites a payload (kind "payload") or a result (kind "result")
// of a task before the view shows it; answering nil hides it.
type Redactor func(kind, runID, task string, data []byte) []byte

// Option configures [New].
type Option func(*config)

type config struct {
	readOnly   bool
	authorize  Authorizer
	redact     Redactor
	minRefresh time.Duration
	logger     *slog.Logger
	loggerSet  bool // the audit records go to slog.Default() otherwise
	errs       []error
	acts       actionConfig // see actions_options.go
}

func (c *config) reject(option, why string) {
	c.errs = append(c.errs, fmt.Errorf("%w: %s %s", ErrInvalidOption, option, why))
}

func defaults() config {
	return config{
		readOnly:   true,
		authorize:  func(*http.Request, string, string) error { return nil },
		redact:     func(_, _, _ string, data []byte) []byte { return data },
		minRefresh: MinRefreshDefault,
		logger:     slog.New(slog.DiscardHandler),
		acts:       actionDefaults(),
	}
}

// WithReadOnly sets whether the mutating routes are refused (403
// "read_only"). The view is read-only by default: a host opts in to
// actions.
func WithReadOnly(readOnly bool) Option {
	return func(c *config) { c.readOnly = readOnly }
}

// WithAuthorizer plugs the host's authorization in: fn is called for every
// request the handler routes, reads included, before anything is read.
func WithAuthorizer(fn Authorizer) Option {
	return func(c *config) {
		if fn == nil {
			c.reject("WithAuthorizer", "needs a function")
			return
		}
		c.authorize = fn
	}
}

// WithRedactor sets what a payload or a result goes through before it is
// shown. The default shows it as it is (as text when it is UTF-8, else as
// base64, cut past [ShownBytesMax]).
func WithRedactor(fn Redactor) Option {
	return func(c *config) {
		if fn == nil {
			c.reject("WithRedactor", "needs a function")
			return
		}
		c.redact = fn
	}
}

// WithMinRefresh sets the floor of the pages' polling: the run page polls
// at that interval when the store keeps no events, and the other pages
// never refresh faster. Defaults to [MinRefreshDefault]; below
// [MinRefreshLeast] is an error.
func WithMinRefresh(d time.Duration) Option {
	return func(c *config) {
		if d < MinRefreshLeast {
			c.reject("WithMinRefresh", d.String()+" is below "+MinRefreshLeast.String())
			return
		}
		c.minRefresh = d
	}
}

// WithLogger sets where store errors answered as 500 are logged (they are
// discarded by default) and where the actions' audit records go
// (slog.Default() by default, so that they are never lost).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l == nil {
			c.reject("WithLogger", "needs a logger")
			return
		}
		c.logger = l
		c.loggerSet = true
	}
}
