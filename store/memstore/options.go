package memstore

import (
	"errors"
	"strconv"
	"time"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// Option configures a [Store].
//
// memstore takes the options redisstore takes, with the same meaning, and
// refuses the same values: each option checks its value with the Check
// function of package store, and [New] reports each one out of range as a
// [*store.OptionError] (which matches [store.ErrInvalidOption]), all of
// them joined, and returns no store. Only an option that was not given
// takes its default (the defaults are in package store too, such as
// [store.RetentionDefault]); a value that was given is used as it is or
// refused, never silently replaced by the default.
type Option func(*config)

// config holds the settings of a Store. A zero config means all defaults:
// an option either sets its field to a valid value or records an error,
// so a field still zero after the options is one no option gave.
type config struct {
	// clock, when set, replaces the system clock.
	clock store.Clock
	// retention is how long a finished run is kept unless a rule of rules
	// says otherwise (retention.go).
	retention time.Duration
	rules     []retentionRule
	// history, when longer than a run's retention, is how long its
	// attempt records are kept after it ends (history.go).
	history time.Duration
	// eventCap is how many events the stream keeps; statsWindow is the
	// duration window of each task name, 0 while stats are off.
	eventCap, statsWindow int
	// maxResult is the largest result a finish stores.
	maxResult int
	// logLines and logBytes cap each task's stored log lines (tasklog.go).
	logLines, logBytes int
	// errs collects what the options rejected; New reports them all.
	errs []error
}

// reject records an option given out of range; the setting keeps its
// previous value.
func (c *config) reject(option, value, reason string) {
	c.errs = append(c.errs, &store.OptionError{Option: "memstore." + option, Value: value, Reason: reason})
}

// withDefaults fills every setting no option gave.
func (c *config) withDefaults() {
	if c.retention == 0 {
		c.retention = store.RetentionDefault
	}
	if c.eventCap == 0 {
		c.eventCap = store.EventCapDefault
	}
	if c.maxResult == 0 {
		c.maxResult = store.MaxResultBytesDefault
	}
	if c.logLines == 0 {
		c.logLines, c.logBytes = store.TaskLogLinesDefault, store.TaskLogBytesDefault
	}
}

// err returns every rejected option, joined, or nil.
func (c *config) err() error { return errors.Join(c.errs...) }

// WithClock makes the store read time from clk instead of the system
// clock, so tests drive leases and due times with a fake clock. A nil clk
// keeps the system clock.
func WithClock(clk store.Clock) Option { return func(c *config) { c.clock = clk } }

// WithRetention sets how long a finished run (its tasks, results, attempt
// records, idempotency key and index entries) is kept after it ends; after
// that, RunGet answers [store.ErrNotFound], queries no longer list it and
// its memory is freed. Defaults to [store.RetentionDefault]. Zero (which
// would free a run as it ends, before its caller could read it), negative
// d and d below [store.RetentionMin] are errors, as on Redis: a test that
// wants finished runs kept gives a retention longer than it runs.
// [WithRetentionFor] overrides it per service and status.
func WithRetention(d time.Duration) Option {
	return func(c *config) {
		if err := store.CheckRetention(d); err != nil {
			c.reject("WithRetention", d.String(), err.Error())
			return
		}
		c.retention = d
	}
}

// WithHistoryRetention keeps the attempt records of a finished run for d
// after it ends when d is longer than the run's own retention: once the
// run is freed (RunGet answers [store.ErrNotFound]), AttemptHistory still
// answers its records until then. Only the records are kept, not the run.
// Zero, the default, keeps them with the run; a negative d is an error.
func WithHistoryRetention(d time.Duration) Option {
	return func(c *config) {
		if err := store.CheckHistoryRetention(d); err != nil {
			c.reject("WithHistoryRetention", d.String(), err.Error())
			return
		}
		c.history = d
	}
}

// WithRetentionFor keeps the finished runs of service that ended in status
// for d, overriding [WithRetention] for them. An empty service means every
// service, an empty status every terminal status; the most specific rule
// wins (service and status, then service, then status). A status that is
// not terminal, a service that is not a valid name, and d below
// [store.RetentionMin] are errors, as on Redis: such a rule could never
// apply. The retention of a run is settled when it ends.
func WithRetentionFor(service string, status store.RunStatus, d time.Duration) Option {
	return func(c *config) {
		if err := store.CheckRetentionFor(service, status, d); err != nil {
			c.reject("WithRetentionFor", ids.Quote(service)+", "+ids.Quote(string(status))+", "+d.String(), err.Error())
			return
		}
		c.rules = append(c.rules, retentionRule{service, status, d})
	}
}

// retentionRule is one WithRetentionFor.
type retentionRule struct {
	service string
	status  store.RunStatus
	d       time.Duration
}

// WithMaxResultBytes sets the largest result a finish stores; a larger one
// is refused for its outcome alone with [store.ErrResultTooLarge]. Defaults
// to [store.MaxResultBytesDefault], as on Redis, so a result too large for
// one store is too large for both; below 1 or above
// [store.MaxResultBytesMax] is an error.
func WithMaxResultBytes(n int) Option {
	return func(c *config) {
		if err := store.CheckMaxResultBytes(n); err != nil {
			c.reject("WithMaxResultBytes", strconv.Itoa(n), err.Error())
			return
		}
		c.maxResult = n
	}
}
