// Package worker is plait's engine: what Scheduler.Run starts. A Pool
// claims tasks from the store, runs them on long-lived worker goroutines,
// keeps their leases, writes their outcomes in batches, and runs the
// services beside them (the lease sweeper, the index janitor and the node
// heartbeat).
//
// The seam with the root package is this file. The engine knows nothing of
// plait's Task, HandlerFunc, Middleware, Codec or Event: Config hands it
// the settings Run validated, a Handler lookup that runs a registered
// handler's chain for an Attempt, an encoder for results and an event sink.
// The root builds its Task around the *Attempt it is given, so a handler
// sees the types of the user API while the engine moves only the store's
// records ([store.ClaimedTask], [store.TaskOutcome]).
package worker

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plaitdag/plait/internal/clock"
	"github.com/plaitdag/plait/store"
)

// Causes of a handler context's cancellation. The root package re-exports
// them; context.Cause tells a handler which one applied.
var (
	ErrLeaseLost    = errors.New("plait: lease lost")
	ErrRunCancelled = errors.New("plait: run cancelled")
	ErrTimeout      = errors.New("plait: task timed out")
	ErrShutdown     = errors.New("plait: scheduler shutting down")
)

// Handler runs the registered handler's chain for one attempt and answers
// its result (encoded by Config.Encode) or its error.
type Handler func(ctx context.Context, a *Attempt) (any, error)

// Config is what a Pool runs with. Every duration and count has been
// validated and given its default by the root's options.
type Config struct {
	Store  store.Store
	Clock  clock.Clock
	Logger *slog.Logger
	// NodeID names this process in the records it writes; WorkerID is the
	// name it was given (WithWorkerID).
	NodeID, WorkerID string

	Concurrency, Prefetch int
	Queues, Capabilities  []string
	// Weights are the claim weights of the four priorities, urgent first;
	// nil claims in strict priority order.
	Weights *[4]int
	// Routes is set when the store implements ClaimRouter: claims then
	// list the handlers registered here.
	Routes bool

	LeaseDuration, SweepInterval, JanitorInterval time.Duration
	ShutdownTimeout, TimeoutGrace, IdleWait       time.Duration
	TaskLogFlush                                  time.Duration
	CrashLimit, InlineResults                     int
	// DefaultRetry is the retry policy with every field filled: a task's
	// own policy takes its zero fields from it.
	DefaultRetry store.RetryPolicy

	// NodeHeartbeat, NodeTTL and NodeHistory drive the node service.
	NodeHeartbeat, NodeTTL time.Duration
	NodeHistory            int

	// BaseContext gives the parent of every handler context from Run's.
	BaseContext func(run context.Context) context.Context
	// Handler finds the handler registered under name.
	Handler func(name string) (Handler, bool)
	// HandlerNames lists the registered handler names, sorted; nil when
	// none are registered.
	HandlerNames func() []string
	// Encode encodes a handler's result for the store.
	Encode func(v any) ([]byte, error)
	// Emit receives every event; nil drops them.
	Emit func(Event)
	// Metrics receives the metrics hooks; nil means none.
	Metrics Metrics
	// RunMetrics receives the ends of runs; nil means none, and then the
	// sweep reads no run back.
	RunMetrics RunMetrics
	// Shared is the state that outlives one Run of a Scheduler.
	Shared *Shared
	// Audits reports whether this process runs the lease audit on its
	// janitor passes (leaseAuditOnce): it reads every running task and
	// running run, which one process of a fleet does for all. nil: every
	// process audits.
	Audits func() bool
}

// Shared is the engine state of one Scheduler across its Runs.
type Shared struct {
	// Abandoned counts handlers given up on past their timeout that have
	// not returned yet.
	Abandoned atomic.Int64
	// unknown holds the handler names a claimed task named that are not
	// registered here, so each is logged once.
	unknown sync.Map
}

// Metrics is the engine's side of the root's Metrics hooks. Queue depth
// is not the engine's: the schedule leader samples it for the fleet.
type Metrics interface {
	TaskStarted(l Labels)
	TaskFinished(l Labels, o store.Outcome, d time.Duration)
	TaskRetried(l Labels, delay time.Duration)
	TaskDead(lease store.Lease)
	LeaseLost(l Labels)
}

// RunMetrics is the engine's side of the root's RunMetrics: the end of a
// run this process's finish or sweep brought, told once in the fleet.
type RunMetrics interface {
	// RunEnded gets the run's Workflow and Tenant in l.
	RunEnded(l Labels, status store.RunStatus)
}

// Labels name what a metric is about.
type Labels struct {
	Workflow string
	Task     string
	Handler  string
	Queue    string
	Tenant   string
}

// EventType names an event the engine emits, with the same value as the
// root package's constant of the same name.
type EventType string

// The events the engine emits.
const (
	EventTaskStarted   EventType = "task_started"
	EventTaskSucceeded EventType = "task_succeeded"
	EventTaskFailed    EventType = "task_failed"
	EventTaskRetrying  EventType = "task_retrying"
	EventTaskReleased  EventType = "task_released"
	EventTaskLeaseLost EventType = "task_lease_lost"
	EventRunFinished   EventType = "run_finished"
	EventLeasesSwept   EventType = "leases_swept"
	EventRunsPruned    EventType = "runs_pruned"
	EventNodeHeartbeat EventType = "node_heartbeat"
	EventNodeDraining  EventType = "node_draining"
)

// Event is one thing the engine did; the root turns it into its Event.
type Event struct {
	Type      EventType
	RunID     string
	Task      string
	Attempt   int
	Epoch     int64
	Err       error
	RetryIn   time.Duration
	RunStatus store.RunStatus
	Count     int
	Node      string
	// At is the scheduler's clock when the event happened, when the
	// engine read it anyway (a handler's start, a batch of outcomes
	// recorded); zero lets the sink read it.
	At time.Time
}

// emit hands e to the event sink.
func (p *pool) emit(e Event) {
	if p.cfg.Emit != nil {
		p.cfg.Emit(e)
	}
}

// Pool is one Run of a Scheduler.
type Pool struct{ p *pool }

// New makes the Pool of one Run.
func New(cfg *Config) *Pool { return &Pool{p: newPool(cfg)} }

// Run claims and runs tasks until ctx is done, then shuts down within
// the shutdown timeout and returns.
func (p *Pool) Run(ctx context.Context) error { return p.p.run(ctx) }

// StartNode starts the node service beside Run when the store keeps
// nodes: its heartbeat reports what this process serves and holds and
// calls drain when the fleet asks it to. stop ends it after Run returned.
func (p *Pool) StartNode(ctx context.Context, drain context.CancelFunc) (stop func()) {
	return p.p.startNode(ctx, drain)
}

// Health reports what the Pool last did, for Scheduler.Health.
func (p *Pool) Health() HealthSnapshot { return p.p.healthSnapshot() }

// Logger is the logger of the Pool's Scheduler.
func (p *Pool) Logger() *slog.Logger { return p.p.cfg.Logger }

// Bounds of the engine's store calls.
const (
	// SweepLimitDefault is the most leases one sweep call recovers.
	SweepLimitDefault = 500
	// JanitorBatch is the most runs one prune call removes.
	JanitorBatch = 500
	// JanitorPassMax is the most runs one pass of the janitor removes:
	// the bound on its work per interval.
	JanitorPassMax = 20 * JanitorBatch
	// taskLogBufferMax is how many lines an attempt holds unsent; more are
	// dropped (and counted) until the next flush, so a handler that logs
	// faster than the store takes lines cannot grow memory without bound.
	taskLogBufferMax = 10000
)

// CancelRun cancels the handlers running tasks of the run here, with
// ErrRunCancelled, and keeps the tasks of it claimed ahead from starting.
func (p *Pool) CancelRun(runID string) { p.p.cancelRun(runID, ErrRunCancelled) }
