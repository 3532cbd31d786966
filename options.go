package plait

import (
	"errors"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/plaitdag/plait/internal/clock"
	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/internal/worker"
)

// Clock is the time source for everything time-based in plait. The zero
// configuration uses the system clock; tests inject a fake one with
// [WithClock]. It is the same interface the stores accept.
type Clock = clock.Clock

// Timer is a single-shot timer made by a [Clock].
type Timer = clock.Timer

// Scheduler option defaults and bounds. README, tests and code cite these
// names.
const (
	ConcurrencyDefault     = 16
	LeaseDurationDefault   = 15 * time.Second
	SweepIntervalDefault   = 5 * time.Second
	ShutdownTimeoutDefault = 10 * time.Second
	CrashLimitDefault      = 3
	SweepLimitDefault      = worker.SweepLimitDefault
	IdleWaitDefault        = time.Second
	PrefetchDefault        = 64
	TimeoutGraceDefault    = 5 * time.Second

	// ConcurrencyMax bounds WithConcurrency: each handler slot is a
	// goroutine started by Run, so the bound keeps a typo from starting
	// millions of them.
	ConcurrencyMax = 1 << 16
	// PrefetchMax bounds WithPrefetch: held tasks sit in a buffer sized up
	// front.
	PrefetchMax = 1 << 16
	// LeaseDurationMin is the shortest lease WithLeaseDuration accepts:
	// heartbeats go every third of it, and shorter leases would expire
	// between two store calls.
	LeaseDurationMin = 10 * time.Millisecond
	// IntervalMin is the shortest WithSweepInterval and WithIdleWait
	// accept: shorter ones turn a wait into polling.
	IntervalMin = time.Millisecond
)

// Option configures a [Scheduler]. Options are a different type from
// [TaskOption], so the compiler rejects a task option given to New.
//
// Every option checks its own value: [New] reports each one out of range
// as an [*OptionError], all of them joined. Only an option that was not
// given takes its default; a value that was given is used as it is, so
// WithShutdownTimeout(0) means no grace period rather than the default.
//
// # Options by role
//
// A Scheduler serves two roles: a client (Submit, SubmitMany, the queries
// and controls, ScheduleSave, ScheduleFireDue), which needs no Run, and a
// worker, which is what Run starts.
//
// Options that act on client calls, with or without Run: [WithClock],
// [WithLogger], [WithCodec], [WithLimits], [WithQueueLimit],
// [WithRemoteHandlers], [WithHandlerCheck], [WithObserver], [WithWorkerID]
// (the node id records carry), [WithScheduleMinInterval] (checked by
// ScheduleSave) and [WithLeaderLease] (also taken by ScheduleFireDue).
//
// Options that act only inside Run: [WithConcurrency], [WithPrefetch],
// [WithQueues], [WithCapabilities], [WithWeightedPriorities],
// [WithIdleWait], [WithLeaseDuration], [WithSweepInterval],
// [WithShutdownTimeout], [WithTimeoutGrace], [WithCrashLimit],
// [WithDefaultRetry], [WithInlineResults], [WithBaseContext],
// [WithMiddleware], [WithBaseMiddleware], [WithMetrics],
// [WithTaskLogFlush], [WithJanitorInterval], [WithNodeHeartbeat],
// [WithNodeTTL], [WithNodeHistory], [WithScheduleTick] and
// [WithoutScheduleLeader]. A client-only process may leave them out.
type Option func(*config)

// config is the one plain settings struct. A zero config means all defaults.
type config struct {
	// concurrency is how many handlers run at once. Zero until given.
	concurrency int
	// leaseDuration is how long a claim holds without a heartbeat.
	// Heartbeats go every third of it. Zero until given.
	leaseDuration time.Duration
	// sweepInterval is how often expired leases are recovered. Zero until
	// given.
	sweepInterval time.Duration
	// janitorInterval is how often expired runs' index entries are
	// pruned. Zero until given.
	janitorInterval time.Duration
	// shutdownTimeout bounds how long Run waits for running handlers once
	// its context is done. Zero is meaningful, so set tells it from unset.
	shutdownTimeout    time.Duration
	shutdownTimeoutSet bool
	// crashLimit is how many lost leases a task survives. Zero is
	// meaningful, so set tells it from unset.
	crashLimit    int
	crashLimitSet bool
	// timeoutGrace is how long a handler may run past its task's Timeout
	// before its attempt is finished without it. Zero is meaningful, so set
	// tells it from unset.
	timeoutGrace    time.Duration
	timeoutGraceSet bool
	// idleWait caps one blocking wait for work. Zero until given.
	idleWait time.Duration
	// prefetch is how many claimed tasks may wait for a free handler slot.
	// Zero (off) is meaningful, so set tells it from unset.
	prefetch    int
	prefetchSet bool
	// inlineResults is how many parents a task may have and still get
	// their results in its claim (parent_results.go). Zero is meaningful,
	// so set tells it from unset.
	inlineResults    int
	inlineResultsSet bool
	// queues are the queues this scheduler claims from. Nil until given.
	queues []string
	// capabilities are what this process declares it has (WithCapabilities),
	// sorted and distinct. Nil: none.
	capabilities []string
	// weights turns on the weighted mode of claiming (internal/worker/fairness.go). Nil:
	// strict priority.
	weights *PriorityWeights
	// queueLimits are the concurrency limits WithQueueLimit put on queues,
	// stamped on each task submitted. Nil: none.
	queueLimits map[string]int
	// workerID names this process in records. Empty until given.
	workerID string
	// taskLogFlush is the longest a task log line waits unsent. Zero until
	// given.
	taskLogFlush time.Duration
	// clock is the time source. Nil until given.
	clock Clock
	// logger receives operational logs. Nil until given.
	logger *slog.Logger
	// codec encodes payloads and results. Nil until given.
	codec Codec
	// limits caps workflow size. Zero fields take their defaults.
	limits Limits
	// defaultRetry fills the zero fields of each task's retry policy.
	defaultRetry RetryPolicy
	// remoteHandlers skips Submit's check that handlers are registered.
	remoteHandlers bool
	// handlerCheck checks handlers against the live nodes' (node.go).
	handlerCheck bool
	// observers receive every scheduler event, in order, synchronously.
	observers []func(Event)
	// hooks holds middleware, the base context and the metrics hooks.
	hooks hookConfig

	sched scheduleConfig
	node  nodeConfig
	count runCountConfig

	// errs collects what the options rejected; New reports them all.
	errs []error
}

// reject records an option given out of range; the setting keeps its
// previous value.
func (c *config) reject(option, value, reason string) {
	c.errs = append(c.errs, &OptionError{Option: option, Value: value, Reason: reason})
}

// err returns every rejected option, joined, or nil.
func (c *config) err() error { return errors.Join(c.errs...) }

// withDefaults fills every setting no option gave. A setting whose option
// was rejected is still unset here; New has returned the error by then.
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
	if c.janitorInterval == 0 {
		c.janitorInterval = JanitorIntervalDefault
	}
	if !c.shutdownTimeoutSet {
		c.shutdownTimeout = ShutdownTimeoutDefault
	}
	if !c.inlineResultsSet {
		c.inlineResults = InlineResultsDefault
	}
	if !c.crashLimitSet {
		c.crashLimit = CrashLimitDefault
	}
	if !c.timeoutGraceSet {
		c.timeoutGrace = TimeoutGraceDefault
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
	if c.taskLogFlush == 0 {
		c.taskLogFlush = TaskLogFlushDefault
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
	c.node.withDefaults()
}

// WithConcurrency sets how many handlers run at once in this process.
// Defaults to ConcurrencyDefault. Zero and negative n are errors (a
// scheduler that runs nothing is never what was meant), and so is n above
// ConcurrencyMax.
func WithConcurrency(n int) Option {
	return func(c *config) {
		switch {
		case n < 1:
			c.reject("WithConcurrency", strconv.Itoa(n), "must be at least 1")
		case n > ConcurrencyMax:
			c.reject("WithConcurrency", strconv.Itoa(n), "must be at most ConcurrencyMax ("+strconv.Itoa(ConcurrencyMax)+")")
		default:
			c.concurrency = n
		}
	}
}

// WithPrefetch sets how many claimed tasks this process may hold beyond its
// free handler slots, each waiting for a handler to return. Claiming ahead
// lets claims and completions travel to the store in larger batches, which
// is most of the cost of short tasks on Redis. A process claims ahead only
// while its handlers return faster, on average, than a store call takes, so
// while handlers are slow no work waits here that another process could
// start. When quick handlers turn slow (a quick task releases slow ones,
// say), a held task that has waited 20 ms for a slot goes back to the head
// of its queue at the next check, and checks come every 20 ms while tasks
// are held, so it waits from 20 ms up to about 40 ms; the process then
// stops claiming ahead until a handler returns quickly again. Held tasks
// keep their leases, start in claim order as slots free, and go back to
// their queues when Run stops; a task sent back never started, so it gets
// no attempt record. If the process dies, its held tasks come back when
// their leases expire, as its running ones do, and that lost lease counts
// toward WithCrashLimit for them too. Defaults to PrefetchDefault, about
// one full store batch. Zero turns claiming ahead off; negative n and n
// above PrefetchMax are errors.
func WithPrefetch(n int) Option {
	return func(c *config) {
		switch {
		case n < 0:
			c.reject("WithPrefetch", strconv.Itoa(n), "must not be negative")
		case n > PrefetchMax:
			c.reject("WithPrefetch", strconv.Itoa(n), "must be at most PrefetchMax ("+strconv.Itoa(PrefetchMax)+")")
		default:
			c.prefetch, c.prefetchSet = n, true
		}
	}
}

// WithLeaseDuration sets how long a claimed task stays leased without a
// heartbeat; a crashed worker's tasks run again within this plus the sweep
// interval. Heartbeats go every third of it. Defaults to
// LeaseDurationDefault. Below LeaseDurationMin, zero and negative included,
// is an error.
func WithLeaseDuration(d time.Duration) Option {
	return func(c *config) {
		if d < LeaseDurationMin {
			c.reject("WithLeaseDuration", d.String(), "must be at least LeaseDurationMin ("+LeaseDurationMin.String()+")")
			return
		}
		c.leaseDuration = d
	}
}

// WithSweepInterval sets how often this process recovers expired leases of
// crashed workers. Defaults to SweepIntervalDefault. Below IntervalMin,
// zero and negative included, is an error: recovery cannot be switched off,
// since a crashed worker's tasks would then never run again.
func WithSweepInterval(d time.Duration) Option {
	return func(c *config) {
		if d < IntervalMin {
			c.reject("WithSweepInterval", d.String(), "must be at least IntervalMin ("+IntervalMin.String()+")")
			return
		}
		c.sweepInterval = d
	}
}

// WithShutdownTimeout bounds how long Run lets running handlers finish once
// its context is done; handlers still running then have their context
// cancelled with [ErrShutdown], and their tasks go back to ready with an
// attempt record that says so. Those releases and any outcomes still
// queued are written under a deadline half a second past d, so Run returns
// by then even when the store hangs; what could not be written is left to
// the leases and the sweep. Defaults to ShutdownTimeoutDefault. Zero gives
// no grace: running handlers are cancelled as soon as Run stops. Negative d
// is an error.
func WithShutdownTimeout(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.reject("WithShutdownTimeout", d.String(), "must not be negative")
			return
		}
		c.shutdownTimeout, c.shutdownTimeoutSet = d, true
	}
}

// WithTimeoutGrace sets how long a handler may keep running after its
// task's Timeout cancelled its context. A handler that honours its context
// returns within it and its attempt is recorded as usual. One still running
// when the grace has passed is given up on: its attempt is finished as
// timed out (retried or failed as the task's retry policy says, with an
// error wrapping [ErrTimeout]), its lease is no longer extended, and its
// slot goes to other work. Go cannot stop a goroutine, so the handler runs
// on until it returns, and whatever it returns is ignored; it is logged,
// and counted by [Scheduler.AbandonedHandlers] meanwhile. Defaults to
// TimeoutGraceDefault. Zero gives up on the handler at the timeout itself;
// negative d is an error.
func WithTimeoutGrace(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.reject("WithTimeoutGrace", d.String(), "must not be negative")
			return
		}
		c.timeoutGrace, c.timeoutGraceSet = d, true
	}
}

// WithCrashLimit sets how many lost leases a task survives before it is
// dead-lettered as a poison pill; lost leases never use up retries.
// Defaults to CrashLimitDefault. Zero dead-letters a task at its first lost
// lease; negative n is an error.
func WithCrashLimit(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.reject("WithCrashLimit", strconv.Itoa(n), "must not be negative")
			return
		}
		c.crashLimit, c.crashLimitSet = n, true
	}
}

// WithQueues sets the queues this scheduler claims from, replacing the
// default. Defaults to DefaultQueue alone. Each name follows the rules of
// task names (see [ErrInvalidID]); no name at all, or a name given twice,
// is an error.
func WithQueues(queues ...string) Option {
	queues = append([]string(nil), queues...)
	return func(c *config) {
		if len(queues) == 0 {
			c.reject("WithQueues", "", "names no queue")
			return
		}
		ok := true
		seen := make(map[string]bool, len(queues))
		for _, q := range queues {
			if err := ids.Check(q); err != nil {
				c.reject("WithQueues", quote(q), "queue name "+err.Error())
				ok = false
			} else if seen[q] {
				c.reject("WithQueues", quote(q), "queue named twice")
				ok = false
			}
			seen[q] = true
		}
		if ok {
			c.queues = queues
		}
	}
}

// WithWorkerID names this process in task and attempt records. Defaults to
// the host name and process id. The id follows the rules of task names (see
// [ErrInvalidID]): it ends up in store records that operators read, so it
// may not be empty, longer than 128 bytes, or carry spaces, separators or
// control bytes.
func WithWorkerID(id string) Option {
	return func(c *config) {
		if err := ids.Check(id); err != nil {
			c.reject("WithWorkerID", quote(id), "worker id "+err.Error())
			return
		}
		c.workerID = id
	}
}

// WithClock sets the time source. Meant for tests (see package fakeclock):
// production code keeps the default system clock, and the store's clock
// decides due times and leases. Nil means the default.
func WithClock(clk Clock) Option { return func(c *config) { c.clock = clk } }

// WithLogger sets the logger. Defaults to slog.Default(); nil means the
// default.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithCodec sets the codec for payloads and results. Defaults to JSONCodec;
// nil means the default.
func WithCodec(codec Codec) Option { return func(c *config) { c.codec = codec } }

// WithLimits caps workflow sizes. Each field defaults to its Max…Default;
// a zero field means its default, and a negative field is an error.
func WithLimits(l Limits) Option {
	return func(c *config) {
		ok := true
		for _, f := range []struct {
			name string
			v    int
		}{{"MaxTasks", l.MaxTasks}, {"MaxDeps", l.MaxDeps}, {"MaxPayloadBytes", l.MaxPayloadBytes}} {
			if f.v < 0 {
				c.reject("WithLimits", f.name+"="+strconv.Itoa(f.v), "must not be negative")
				ok = false
			}
		}
		if ok {
			c.limits = l
		}
	}
}

// WithDefaultRetry fills the fields a task's retry policy leaves at zero.
// Defaults to MaxAttemptsDefault attempts in all (the first and two
// retries) with exponential backoff from InitialIntervalDefault to
// MaxIntervalDefault. Zero fields mean their defaults; a negative field, an
// unknown backoff kind, a NaN, or a jitter above 1 is an error.
func WithDefaultRetry(p RetryPolicy) Option {
	return func(c *config) {
		if err := p.Validate(); err != nil {
			c.reject("WithDefaultRetry", p.String(), err.Error())
			return
		}
		c.defaultRetry = p
	}
}

// WithRemoteHandlers lets Submit accept handler names this process has not
// registered, for processes that submit work other processes run; a typo
// then waits for a handler no one has ([WithHandlerCheck] refuses it).
func WithRemoteHandlers() Option { return func(c *config) { c.remoteHandlers = true } }

// WithObserver adds a function called with every scheduler event (task
// started, succeeded, failed, retrying, ...), synchronously and in order
// for each task. It must not block. Each call adds one more observer; a
// nil fn is an error.
func WithObserver(fn func(Event)) Option {
	return func(c *config) {
		if fn == nil {
			c.reject("WithObserver", "nil", "needs a function")
			return
		}
		c.observers = append(c.observers, fn)
	}
}

// WithIdleWait caps one blocking wait for new work, and is how long the
// scheduler pauses after a failed store call; a wake-up normally comes
// sooner. Defaults to IdleWaitDefault. Below IntervalMin, zero and negative
// included, is an error: a zero wait would turn idling into polling.
func WithIdleWait(d time.Duration) Option {
	return func(c *config) {
		if d < IntervalMin {
			c.reject("WithIdleWait", d.String(), "must be at least IntervalMin ("+IntervalMin.String()+")")
			return
		}
		c.idleWait = d
	}
}

// sanitizeID turns a host name into a valid worker id, so the default id
// never fails the rules WithWorkerID enforces.
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
