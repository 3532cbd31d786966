package redisstore

import (
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/internal/retention"
	"github.com/plaitdag/plait/store"
)

// Option defaults and bounds of this store alone; those of the options
// every store takes (retention, event cap, stats window, result and task
// log limits) are in package store, such as [store.RetentionDefault].
const (
	// PrefixDefault is the key prefix.
	PrefixDefault = "plait"
	// ShardsDefault is the number of hash-tag shards.
	ShardsDefault = 1
	// MaxShards bounds WithShards: Redis Cluster has 16384 slots, and a
	// shard is one slot.
	MaxShards = 16384
)

// Option configures a [Store].
//
// Every option checks its own value: [New] reports each one out of range
// as a [*store.OptionError] (which matches [store.ErrInvalidOption]), all of
// them joined, and returns no store; a nil option is an error too. The
// options every store takes (WithRetention, WithHistoryRetention,
// WithRetentionFor, WithEventCap, WithStats, WithMaxResultBytes,
// WithTaskLogLimit) refuse the same values as memstore's, checked by the
// Check functions of package store. Only an option that was not given
// takes its default; a value that was given is used as it is or refused,
// never silently replaced by the default.
type Option func(*config)

// config holds the settings of a Store. A zero config means all defaults:
// an option either sets its field to a valid value or records an error,
// so a field still zero after the options is one no option gave.
type config struct {
	// prefix starts every key.
	prefix string
	// shards is the number of hash-tag shards.
	shards int
	// clock, when set, replaces Redis TIME (tests only).
	clock store.Clock
	// retention is the TTL of a finished run's keys, unless a rule of
	// rules says otherwise; retain resolves them (built by withDefaults).
	retention time.Duration
	// history, when longer than a run's retention, is how long its
	// attempt records are kept after it ends (WithHistoryRetention).
	history time.Duration
	rules   []retentionRule
	retain  *retention.Table
	// logger receives warnings.
	logger *slog.Logger
	// strictEviction refuses to start unless maxmemory-policy is noeviction.
	strictEviction bool
	// existingPrefix refuses a prefix without a layout record (prefixes.go).
	existingPrefix bool
	// compress is the size from which payloads and results are compressed;
	// 0 turns compression off.
	compress int
	// maxResult is the largest result, in bytes as given.
	maxResult int
	// eventCap and statsWindow (0: stats off): see WithEventCap and
	// WithStats. The window is WithStats's until New has read the layout
	// record, then the prefix's: the recorded one when WithStats was not
	// given (layout.go).
	eventCap, statsWindow int
	// logLines and logBytes cap each task's stored log lines (tasklog.go).
	logLines, logBytes int
	// format is the format version of the runs this store creates
	// (WithFormatVersion).
	format byte
	// errs collects what the options rejected; New reports them all.
	errs []error
}

// reject records an option given out of range; the setting keeps its
// previous value.
func (c *config) reject(option, value, reason string) {
	c.errs = append(c.errs, &store.OptionError{Option: "redisstore." + option, Value: value, Reason: reason})
}

// withDefaults fills every setting no option gave.
func (c *config) withDefaults() {
	if c.prefix == "" {
		c.prefix = PrefixDefault
	}
	if c.shards == 0 {
		c.shards = ShardsDefault
	}
	if c.retention == 0 {
		c.retention = store.RetentionDefault
	}
	c.retain = retention.New(c.retention)
	for _, r := range c.rules {
		c.retain.Set(r.service, string(r.status), r.d)
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.maxResult == 0 {
		c.maxResult = store.MaxResultBytesDefault
	}
	if c.eventCap == 0 {
		c.eventCap = store.EventCapDefault
	}
	if c.logLines == 0 {
		c.logLines, c.logBytes = store.TaskLogLinesDefault, store.TaskLogBytesDefault
	}
	if c.format == 0 {
		c.format = FormatVersionNewest
	}
}

// err returns every rejected option, joined, or nil.
func (c *config) err() error { return errors.Join(c.errs...) }

// WithPrefix sets the string every key starts with, so that several
// independent plait deployments can share one Redis. Defaults to
// PrefixDefault. It must be a valid name, 1 to 128 bytes of
// [A-Za-z0-9._-]: ':' separates the parts of every key, so a prefix
// holding one could reach into another prefix's keys, and '{' '}' would
// change the hash slot of a key. The empty string and any other value are
// errors, whose message gives the rule and the first character it
// refuses. A prefix no store has used yet is recorded by the first New
// (see [WithExistingPrefix] for the processes that must not create one).
func WithPrefix(p string) Option {
	return func(c *config) {
		if err := ids.Check(p); err != nil {
			c.reject("WithPrefix", clip(p), prefixError(p, err))
			return
		}
		c.prefix = p
	}
}

// WithShards spreads runs and queues over n hash-tag shards (slots), the
// scale-out knob for Redis Cluster. Defaults to ShardsDefault. Every process
// sharing a prefix must use the same n, and n must not change while runs
// exist: a run's shard is its id modulo n. Zero, negative n and n above
// MaxShards are errors.
func WithShards(n int) Option {
	return func(c *config) {
		if n < 1 || n > MaxShards {
			c.reject("WithShards", strconv.Itoa(n), "want 1.."+strconv.Itoa(MaxShards))
			return
		}
		c.shards = n
	}
}

// WithClock makes the store pass "now" from clk to its scripts instead of
// using Redis TIME. For tests only: in production the server's clock is the
// one clock every process agrees on. Defaults to Redis TIME; nil keeps it.
func WithClock(clk store.Clock) Option { return func(c *config) { c.clock = clk } }

// WithRetention sets how long a finished run's keys are kept after it
// ends. Defaults to [store.RetentionDefault]. Zero (which would delete a
// run as it ends, before its caller could read it), negative d, and d
// below [store.RetentionMin] are errors; d is rounded down to the ms.
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
// run is gone (RunGet answers [store.ErrNotFound]), AttemptHistory still
// answers its records until then. The records are copied at the run's end
// into a key of their own, h:<run>, with the run's meta and task states
// (results, payloads and definitions are not kept), so it costs one read
// of the run hash and one write per finished run, and the key's memory
// for d. Zero, the default, keeps them with the run. A negative d is an
// error; d is rounded down to the ms. Deleting a run deletes them too.
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
// [store.RetentionMin] are errors; d is rounded down to the ms. A run's
// retention is settled when it is created, from the rules of the process
// creating it, and kept with the run (field q), so processes sharing a
// prefix should share their rules.
func WithRetentionFor(service string, status store.RunStatus, d time.Duration) Option {
	return func(c *config) {
		if err := store.CheckRetentionFor(service, status, d); err != nil {
			c.reject("WithRetentionFor", ids.Quote(service)+", "+ids.Quote(string(status))+", "+d.String(), err.Error())
			return
		}
		c.rules = append(c.rules, retentionRule{service, status, d})
	}
}

type retentionRule struct {
	service string
	status  store.RunStatus
	d       time.Duration
}

// WithLogger sets the logger for warnings. Defaults to slog.Default(); nil
// means the default.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithStrictEviction makes New fail with [ErrEvictionPolicy] unless the
// server reports maxmemory-policy noeviction. Without it New only logs a
// warning.
func WithStrictEviction() Option { return func(c *config) { c.strictEviction = true } }

// WithCompression compresses payloads and results of at least
// thresholdBytes bytes with DEFLATE (compress/flate) when that makes them
// smaller. It is transparent to callers: every stored value carries a flag
// byte, so values written with and without compression read alike, and
// processes sharing a prefix may differ in this option. Defaults to off;
// zero turns it off too; negative is an error.
func WithCompression(thresholdBytes int) Option {
	return func(c *config) {
		if thresholdBytes < 0 {
			c.reject("WithCompression", strconv.Itoa(thresholdBytes), "must not be negative")
			return
		}
		c.compress = thresholdBytes
	}
}

// WithMaxResultBytes sets the largest result the store keeps, in bytes as
// given (it is stored as one flag byte, then the result, compressed when
// WithCompression makes it smaller). A finish outcome with a larger result
// is answered [store.ErrResultTooLarge] on its own, before anything is
// sent: nothing applies for it, its lease still holds, and the rest of the
// batch applies as usual. Defaults to [store.MaxResultBytesDefault]; below
// 1 or above [store.MaxResultBytesMax] is an error.
//
// Redis refuses a whole call with an argument over its proto-max-bulk-len
// ("Protocol error: invalid bulk length"), and a stored result is one
// argument. So [New] reads proto-max-bulk-len with CONFIG GET (on a
// Cluster, from every master, the smallest) and, when it is below the
// limit set here plus the flag byte, lowers the limit to it less that
// byte, logging so once at Info. A server that refuses CONFIG (managed
// Redis, ACLs) keeps the limit set here; a result Redis still refuses
// fails its attempt all the same, after the Scheduler has sent the rest of
// its batch apart (see [store.ErrRejected]).
func WithMaxResultBytes(n int) Option {
	return func(c *config) {
		if err := store.CheckMaxResultBytes(n); err != nil {
			c.reject("WithMaxResultBytes", strconv.Itoa(n), err.Error())
			return
		}
		c.maxResult = n
	}
}
