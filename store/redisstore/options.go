package redisstore

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/ids"
)

// Option defaults.
const (
	// PrefixDefault is the key prefix.
	PrefixDefault = "plait"
	// ShardsDefault is the number of hash-tag shards.
	ShardsDefault = 1
	// RetentionDefault is how long a finished run's keys are kept.
	RetentionDefault = 24 * time.Hour
	// MaxShards bounds WithShards.
	MaxShards = 16384
)

// Option configures a [Store].
type Option func(*config)

// config holds the settings of a Store. A zero config means all defaults.
type config struct {
	// prefix starts every key. Defaults to PrefixDefault.
	prefix string
	// shards is the number of hash-tag shards. Defaults to ShardsDefault.
	shards int
	// clock, when set, replaces Redis TIME (tests only).
	clock plait.Clock
	// retention is the TTL of a finished run's keys. Defaults to
	// RetentionDefault.
	retention time.Duration
	// logger receives warnings. Defaults to slog.Default().
	logger *slog.Logger
	// strictEviction refuses to start unless maxmemory-policy is noeviction.
	strictEviction bool
	// compress is the size from which payloads and results are compressed;
	// 0 turns compression off.
	compress int
}

// WithPrefix sets the key prefix. Defaults to PrefixDefault. It must be a
// non-empty name without braces; New rejects it otherwise.
func WithPrefix(p string) Option { return func(c *config) { c.prefix = p } }

// WithShards spreads runs and queues over n hash-tag shards (slots), the
// scale-out knob for Redis Cluster. Defaults to ShardsDefault. Every process
// sharing a prefix must use the same n, and n must not change while runs
// exist: a run's shard is its id modulo n. Below 1 or above MaxShards is
// an error.
func WithShards(n int) Option { return func(c *config) { c.shards = n } }

// WithClock makes the store pass "now" from clk to its scripts instead of
// using Redis TIME. For tests only: in production the server's clock is the
// one clock every process agrees on. Nil keeps Redis TIME.
func WithClock(clk plait.Clock) Option { return func(c *config) { c.clock = clk } }

// WithRetention sets how long a finished run's keys are kept. Defaults to
// RetentionDefault; zero means the default; negative is an error.
func WithRetention(d time.Duration) Option { return func(c *config) { c.retention = d } }

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
// processes sharing a prefix may differ in this option. Zero (the default)
// turns compression off; negative is an error.
func WithCompression(thresholdBytes int) Option {
	return func(c *config) { c.compress = thresholdBytes }
}

func (c *config) withDefaults() {
	if c.prefix == "" {
		c.prefix = PrefixDefault
	}
	if c.shards == 0 {
		c.shards = ShardsDefault
	}
	if c.retention == 0 {
		c.retention = RetentionDefault
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
}

func (c *config) validate() error {
	var errs []error
	if err := ids.Check(c.prefix); err != nil {
		errs = append(errs, fmt.Errorf("redisstore: prefix %q %v: %w", c.prefix, err, plait.ErrInvalidOption))
	}
	if c.shards < 1 || c.shards > MaxShards {
		errs = append(errs, fmt.Errorf("redisstore: %d shards, want 1..%d: %w", c.shards, MaxShards, plait.ErrInvalidOption))
	}
	if c.compress < 0 {
		errs = append(errs, fmt.Errorf("redisstore: compression threshold %d is negative: %w", c.compress, plait.ErrInvalidOption))
	}
	if c.retention < time.Millisecond {
		errs = append(errs, fmt.Errorf("redisstore: retention %s is below 1ms: %w", c.retention, plait.ErrInvalidOption))
	}
	return errors.Join(errs...)
}
