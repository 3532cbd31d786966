package plait

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/plaitdag/plait/internal/clock"
	"github.com/plaitdag/plait/internal/ids"
)

// Clock is the time source for everything time-based in plait. The zero
// configuration uses the system clock; tests inject a fake one with
// [WithClock]. It is the same interface the stores accept.
type Clock = clock.Clock

// Timer is a single-shot timer made by a [Clock].
type Timer = clock.Timer

// Scheduler option defaults. README, tests and code cite these names.
const (
	ConcurrencyDefault     = 16
	LeaseDurationDefault   = 15 * time.Second
	SweepIntervalDefault   = 5 * time.Second
	ShutdownTimeoutDefault = 10 * time.Second
	CrashLimitDefault      = 3
	SweepLimitDefault      = 500
	IdleWaitDefault        = time.Second
	PrefetchDefault        = 64
)

// Option configures a [Scheduler]. Options are a different type from
// [TaskOption], so the compiler rejects a task option given to New.
type Option func(*config)

// config is the one plain settings struct. A zero config means all defaults.
type config struct {
	// concurrency is how many handlers run at once. Defaults to
	// ConcurrencyDefault.
	concurrency int
	// leaseDuration is how long a claim holds without a heartbeat.
	// Defaults to LeaseDurationDefault; heartbeats go every third of it.
	leaseDuration time.Duration
	// sweepInterval is how often expired leases are recovered. Defaults to
	// SweepIntervalDefault.
	sweepInterval time.Duration
	// shutdownTimeout bounds how long Run waits for running handlers once
	// its context is done. Defaults to ShutdownTimeoutDefault.
	shutdownTimeout time.Duration
	// crashLimit is how many lost leases a task survives. Defaults to
	// CrashLimitDefault.
	crashLimit int
	// idleWait caps one blocking wait for work. Defaults to IdleWaitDefault.
	idleWait time.Duration
	// prefetch is how many claimed tasks may wait for a free handler slot.
	// Defaults to PrefetchDefault; prefetchSet tells an explicit zero (off)
	// from unset.
	prefetch    int
	prefetchSet bool
	// queues are the queues this scheduler claims from. Defaults to
	// [DefaultQueue].
	queues []string
	// workerID names this process in records. Defaults to host-pid.
	workerID string
	// clock is the time source. Defaults to the system clock.
	clock Clock
	// logger receives operational logs. Defaults to slog.Default().
	logger *slog.Logger
	// codec encodes payloads and results. Defaults to JSONCodec.
	codec Codec
	// limits caps workflow size. Zero fields take their defaults.
	limits Limits
	// defaultRetry fills the zero fields of each task's retry policy.
	defaultRetry RetryPolicy
	// remoteHandlers skips Submit's check that handlers are registered.
	remoteHandlers bool
	// observers receive every scheduler event, in order, synchronously.
	observers []func(Event)
}

func (c *config) withDefaults() {
	if c.concurrency == 0 {
		c.concurrency = ConcurrencyDefault
	}
	if c.leaseDuration == 0 {
		c.leaseDuration = LeaseDurationDefault
	}
	if c.sweepInterval == 0 {
		c.sweepInterval = SweepIntervalDefault
	}
	if c.shutdownTimeout == 0 {
		c.shutdownTimeout = ShutdownTimeoutDefault
	}
	if c.crashLimit == 0 {
		c.crashLimit = CrashLimitDefault
	}
	if c.idleWait == 0 {
		c.idleWait = IdleWaitDefault
	}
	if !c.prefetchSet {
		c.prefetch = PrefetchDefault
	}
	if len(c.queues) == 0 {
		c.queues = []string{DefaultQueue}
	}
	if c.workerID == "" {
		host, _ := os.Hostname()
		c.workerID = sanitizeID(host) + "-" + strconv.Itoa(os.Getpid())
	}
	if c.clock == nil {
		c.clock = clock.Real{}
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.codec == nil {
		c.codec = JSONCodec{}
	}
	c.limits = c.limits.withDefaults()
}

// validate reports every problem at once.
func (c *config) validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...))
	}
	if c.concurrency < 1 {
		bad("concurrency %d is below 1", c.concurrency)
	}
	if c.leaseDuration < 10*time.Millisecond {
		bad("lease duration %s is below 10ms", c.leaseDuration)
	}
	if c.sweepInterval <= 0 {
		bad("sweep interval %s is not positive", c.sweepInterval)
	}
	if c.shutdownTimeout < 0 {
		bad("shutdown timeout %s is negative", c.shutdownTimeout)
	}
	if c.crashLimit < 0 {
		bad("crash limit %d is negative", c.crashLimit)
	}
	if c.prefetch < 0 {
		bad("prefetch %d is negative", c.prefetch)
	}
	for _, q := range c.queues {
		if err := ids.Check(q); err != nil {
			bad("queue %q %v", q, err)
		}
	}
	if err := c.defaultRetry.validate(); err != nil {
		bad("default retry: %v", err)
	}
	return errors.Join(errs...)
}

// WithConcurrency sets how many handlers run at once in this process.
// Defaults to ConcurrencyDefault; below 1 is an error.
func WithConcurrency(n int) Option { return func(c *config) { c.concurrency = n } }

// WithPrefetch sets how many claimed tasks this process may hold beyond its
// free handler slots, each waiting for a handler to return. Claiming ahead
// lets claims and completions travel to the store in larger batches, which
// is most of the cost of short tasks on Redis. A process claims ahead only
// while its handlers return faster, on average, than a store call takes, so
// while handlers are slow no work waits here that another process could
// start. When quick handlers turn slow (a quick task releases slow ones,
// say), a held task waits for a slot at most about 40 ms, then goes back to
// the head of its queue, and the process stops claiming ahead until a
// handler returns quickly again. Held tasks keep their leases, start in
// claim order as slots free, and go back to their queues when Run stops; a
// task sent back never started, so it gets no attempt record. If the
// process dies, its held tasks come back when their leases expire, as its
// running ones do, and that lost lease counts toward WithCrashLimit for
// them too. Defaults to PrefetchDefault, about one full store batch; zero
// turns it off, and a negative n is an error.
func WithPrefetch(n int) Option {
	return func(c *config) { c.prefetch, c.prefetchSet = n, true }
}

// WithLeaseDuration sets how long a claimed task stays leased without a
// heartbeat; a crashed worker's tasks run again within this plus the sweep
// interval. Heartbeats go every third of it. Defaults to
// LeaseDurationDefault; below 10ms is an error.
func WithLeaseDuration(d time.Duration) Option { return func(c *config) { c.leaseDuration = d } }

// WithSweepInterval sets how often expired leases are recovered. Defaults
// to SweepIntervalDefault.
func WithSweepInterval(d time.Duration) Option { return func(c *config) { c.sweepInterval = d } }

// WithShutdownTimeout bounds how long Run lets running handlers finish once
// its context is done; unfinished tasks then go back to ready. Zero means
// the default, ShutdownTimeoutDefault.
func WithShutdownTimeout(d time.Duration) Option {
	return func(c *config) { c.shutdownTimeout = d }
}

// WithCrashLimit sets how many lost leases a task survives before it is
// dead-lettered as a poison pill. Defaults to CrashLimitDefault.
func WithCrashLimit(n int) Option { return func(c *config) { c.crashLimit = n } }

// WithQueues sets the queues this scheduler claims from. Defaults to
// DefaultQueue alone.
func WithQueues(queues ...string) Option {
	return func(c *config) { c.queues = append([]string(nil), queues...) }
}

// WithWorkerID names this process in task records. Defaults to the host
// name and process id.
func WithWorkerID(id string) Option { return func(c *config) { c.workerID = id } }

// WithClock sets the time source. Meant for tests: production code keeps the
// default system clock, and the store's clock decides due times and leases.
func WithClock(clk Clock) Option { return func(c *config) { c.clock = clk } }

// WithLogger sets the logger. Defaults to slog.Default(); nil means the
// default.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithCodec sets the codec for payloads and results. Defaults to JSONCodec;
// nil means the default.
func WithCodec(codec Codec) Option { return func(c *config) { c.codec = codec } }

// WithLimits caps workflow sizes; zero fields keep their defaults.
func WithLimits(l Limits) Option { return func(c *config) { c.limits = l } }

// WithDefaultRetry fills the fields a task's retry policy leaves at zero.
// Defaults to MaxAttemptsDefault attempts with exponential backoff from
// InitialIntervalDefault to MaxIntervalDefault.
func WithDefaultRetry(p RetryPolicy) Option { return func(c *config) { c.defaultRetry = p } }

// WithRemoteHandlers lets Submit accept handler names this process has not
// registered, for processes that submit work other processes run.
func WithRemoteHandlers() Option { return func(c *config) { c.remoteHandlers = true } }

// WithObserver adds a function called with every scheduler event (task
// started, succeeded, failed, retrying, ...), synchronously and in order
// for each task. It must not block.
func WithObserver(fn func(Event)) Option {
	return func(c *config) { c.observers = append(c.observers, fn) }
}

// WithIdleWait caps one blocking wait for new work; a wake-up normally
// comes sooner. Defaults to IdleWaitDefault.
func WithIdleWait(d time.Duration) Option { return func(c *config) { c.idleWait = d } }

func sanitizeID(s string) string {
	b := []byte(s)
	for i, c := range b {
		if ids.Check(string(c)) != nil {
			b[i] = '-'
		}
	}
	if len(b) == 0 {
		return "worker"
	}
	if len(b) > 100 {
		b = b[:100]
	}
	return string(b)
}
