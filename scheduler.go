package plait

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/internal/worker"
	"github.com/plaitdag/plait/store"
)

// Scheduler registers handlers, submits workflows and, inside Run, works
// through ready tasks. It is safe for concurrent use.
type Scheduler struct {
	store store.Store
	cfg   config

	mu       sync.RWMutex
	handlers map[string]HandlerFunc
	// runners holds, by handler name, the engine's form of each handler
	// (attemptHandler), built once at registration rather than per task.
	runners map[string]worker.Handler
	// handlerNames lists the registered handler names, sorted, for claims
	// to a store that routes by handler; replaced whole on each Handle.
	handlerNames atomic.Pointer[[]string]

	running atomic.Bool
	// pool is the engine of the Run in progress, nil between Runs.
	pool atomic.Pointer[worker.Pool]
	// engine is the engine's state that outlives one Run: the abandoned
	// handlers and the handler names already reported missing.
	engine worker.Shared
	// leading reports whether this process held the schedule lease at the
	// leader's last pass: the process that runs the fleet's lease audit.
	leading atomic.Bool

	// sched holds the schedule Build functions and the leader state.
	sched scheduleState
	// nodeID names this process in the store's node registry.
	nodeID string
	// fleet keeps the live nodes' handlers for WithHandlerCheck.
	fleet fleetHandlers
	// unservedWarned holds the queues QueuePause warned no live node
	// serves, each warned once.
	unservedWarned sync.Map
	// counts keeps recent RunCount answers (runcount.go).
	counts *countCache
	// depth is the queue depth sampling of the schedule leader.
	depth depthState
}

// New returns a scheduler over the store st. Every option is checked: each one out
// of range is reported as an [*OptionError], all of them joined, and each
// matches [ErrInvalidOption]; a nil store or a nil option is an error too.
// Options not given take their defaults.
func New(st store.Store, opts ...Option) (*Scheduler, error) {
	var cfg config
	if st == nil {
		cfg.errs = append(cfg.errs, fmt.Errorf("%w: New needs a store, got nil", ErrInvalidOption))
	}
	for i, o := range opts {
		if o == nil {
			cfg.errs = append(cfg.errs, fmt.Errorf("%w: option %d is nil", ErrInvalidOption, i))
			continue
		}
		o(&cfg)
	}
	if err := cfg.err(); err != nil {
		return nil, err
	}
	cfg.withDefaults()
	cfg.node.validate(&cfg)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	s := &Scheduler{store: st, cfg: cfg, handlers: map[string]HandlerFunc{}, runners: map[string]worker.Handler{}, nodeID: newNodeID(cfg.workerID),
		counts: newCountCache(cfg.count)}
	s.fleet.sem = make(chan struct{}, 1)
	if cfg.handlerCheck {
		if _, err := s.nodeStore(); err != nil {
			return nil, fmt.Errorf("plait: WithHandlerCheck: %w", err)
		}
	}
	if len(cfg.capabilities) > 0 && !s.routes() {
		return nil, fmt.Errorf("plait: WithCapabilities: %w", &UnsupportedError{Capability: "ClaimRouter"})
	}
	if cfg.weights != nil {
		if _, err := capability[store.FairClaimer](st, "FairClaimer"); err != nil {
			return nil, fmt.Errorf("plait: WithWeightedPriorities: %w", err)
		}
	}
	return s, nil
}

// Handle registers fn as the handler named name. Each name is registered
// once: a name already registered is refused with an error wrapping
// [ErrDuplicateHandler] that names it, and the first handler stays, so two
// packages that pick the same name are told at start-up instead of one
// silently running the other's tasks. It returns an error wrapping
// [ErrInvalidID] for a bad name, or [ErrInvalidOption] for a nil fn.
// The handler runs inside the scheduler's middleware (see [Middleware]).
func (s *Scheduler) Handle(name string, fn HandlerFunc) error {
	return s.HandleWith(name, fn)
}

func (s *Scheduler) handler(name string) (HandlerFunc, bool) {
	s.mu.RLock()
	fn, ok := s.handlers[name]
	s.mu.RUnlock()
	return fn, ok
}

// SubmitOption configures one [Scheduler.Submit] call (or one
// [Submission] of [Scheduler.SubmitMany]). Each prints itself as written.
type SubmitOption interface {
	applySubmit(*store.RunCreateParams)
	String() string
}

type submitOption struct {
	text  string
	apply func(*store.RunCreateParams)
}

func (o submitOption) applySubmit(p *store.RunCreateParams) { o.apply(p) }
func (o submitOption) String() string                       { return o.text }

// WithRunKey makes the submit idempotent: submitting again with the same key
// returns the existing run instead of starting a second one.
func WithRunKey(key string) SubmitOption {
	return submitOption{"WithRunKey(" + quote(key) + ")", func(p *store.RunCreateParams) { p.Key = key }}
}

// ForTenant records the user (tenant) the run belongs to.
func ForTenant(tenant string) SubmitOption {
	return submitOption{"ForTenant(" + quote(tenant) + ")", func(p *store.RunCreateParams) { p.Tenant = tenant }}
}

// ForService records the service the run belongs to.
func ForService(service string) SubmitOption {
	return submitOption{"ForService(" + quote(service) + ")", func(p *store.RunCreateParams) { p.Service = service }}
}

// WithMetadata attaches free-form metadata to the run, replacing what an
// earlier WithMetadata of the same submit attached.
func WithMetadata(md map[string]string) SubmitOption {
	return submitOption{fmt.Sprintf("WithMetadata(%d keys)", len(md)), func(p *store.RunCreateParams) {
		p.Metadata = make(map[string]string, len(md))
		for k, v := range md {
			p.Metadata[k] = v
		}
	}}
}

// Submit validates wf and stores it as a new run, whose ready tasks any
// running scheduler on the same store may claim. Every problem with wf is
// reported before anything is written, as joined [*ValidationError]s, and
// [*UnknownHandlerError]s for handlers not registered here (or, under
// [WithHandlerCheck], by any live node).
func (s *Scheduler) Submit(ctx context.Context, wf *Workflow, opts ...SubmitOption) (*Run, error) {
	start := s.cfg.clock.Now()
	res, err := s.submit(ctx, wf, opts)
	if rm := s.runMetrics(); rm != nil {
		s.submitted(rm, submitLabels(wf, opts), res, err, start)
	}
	if err != nil {
		return nil, err
	}
	return res.Run, nil
}

// submit is Submit, answering the store's result.
func (s *Scheduler) submit(ctx context.Context, wf *Workflow, opts []SubmitOption) (*store.RunCreateResult, error) {
	params, err := s.createParams(wf, opts)
	if err != nil {
		return nil, err
	}
	checked, err := s.checkHandlers(ctx, []*store.RunCreateParams{params})
	if err == nil && checked != nil {
		err = checked[0]
	}
	if err != nil {
		return nil, err
	}
	res, err := s.store.RunCreate(ctx, params)
	if err != nil {
		return nil, err
	}
	if !res.Existing {
		s.emit(Event{Type: EventRunSubmitted, RunID: res.Run.ID, RunStatus: res.Run.Status})
	}
	return res, nil
}

// createParams validates a workflow and its submit options into what the
// store creates.
func (s *Scheduler) createParams(wf *Workflow, opts []SubmitOption) (*store.RunCreateParams, error) {
	if wf == nil {
		return nil, fmt.Errorf("%w: nil workflow", ErrInvalidWorkflow)
	}
	spec, err := wf.Spec(s.cfg.codec, s.cfg.limits)
	if err != nil {
		return nil, err
	}
	s.cfg.applyQueueLimits(spec)
	params := &store.RunCreateParams{Workflow: spec}
	for _, o := range opts {
		if o != nil {
			o.applySubmit(params)
		}
	}
	var errs []error
	for field, v := range map[string]string{"run key": params.Key, "tenant": params.Tenant, "service": params.Service} {
		if v == "" {
			continue
		}
		if err := ids.Check(v); err != nil {
			errs = append(errs, &ValidationError{Workflow: spec.Name, Field: field, Err: ErrInvalidID, Reason: err.Error()})
		}
	}
	if !s.cfg.remoteHandlers && !s.cfg.handlerCheck {
		for _, t := range spec.Tasks {
			if _, ok := s.handler(t.Handler); !ok {
				var local []string
				if names := s.handlerNames.Load(); names != nil {
					local = *names
				}
				errs = append(errs, &UnknownHandlerError{Workflow: spec.Name, Task: t.Name, Handler: t.Handler, Near: nearest(t.Handler, local)})
			}
		}
	}
	if _, err := capability[store.Limiter](s.store, "Limiter"); err != nil {
		for _, t := range spec.Tasks {
			if len(t.Limits) > 0 {
				errs = append(errs, fmt.Errorf("plait: workflow %s task %s has limits: %w", quote(spec.Name), quote(t.Name), err))
			}
		}
	}
	if !s.routes() {
		for _, t := range spec.Tasks {
			if len(t.Requires) > 0 {
				errs = append(errs, fmt.Errorf("plait: workflow %s task %s requires %s: %w", quote(spec.Name), quote(t.Name), quoteAll(t.Requires), &UnsupportedError{Capability: "ClaimRouter"}))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return params, nil
}

// RunWait blocks until the run finishes and returns its final state, with every
// task's status and result, or returns ctx's error.
func (s *Scheduler) RunWait(ctx context.Context, runID string) (*Run, error) {
	return s.store.RunWait(ctx, &store.RunWaitParams{ID: runID})
}

// RunCancel cancels the run: tasks that have not finished are cancelled, and
// handlers running them (in any process) see their context cancelled, here at
// once and elsewhere at their next heartbeat.
func (s *Scheduler) RunCancel(ctx context.Context, runID string) (*Run, error) {
	before := s.runBeforeCancel(ctx, runID)
	run, err := s.store.RunCancel(ctx, &store.RunCancelParams{ID: runID, Reason: "run cancelled"})
	if err != nil {
		return nil, err
	}
	s.cancelled(before, run)
	if p := s.pool.Load(); p != nil {
		p.CancelRun(runID)
	}
	s.emit(Event{Type: EventRunCancelled, RunID: runID, RunStatus: run.Status})
	return run, nil
}

// Run works through ready tasks until ctx is done: it claims tasks, runs
// their handlers on up to the configured concurrency, keeps their leases
// alive and recovers expired leases of crashed workers. Once ctx is done it
// stops claiming, lets running handlers finish for up to the shutdown
// timeout, then cancels the rest and puts their tasks back to ready at once.
// Its last writes get half a second past the shutdown timeout; on a store
// that hangs, Run returns then all the same, and the tasks whose outcomes
// it could not write come back when their leases expire. A handler that
// ignores its context is not waited for.
// It returns nil after a shutdown, or ErrAlreadyRunning.
func (s *Scheduler) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer s.running.Store(false)
	p := worker.New(s.workerConfig())
	s.pool.Store(p)
	defer s.pool.Store(nil)
	// work ends with ctx, or earlier when the node is told to drain; the
	// node service outlives it, reporting what the stopping Run holds.
	work, drain := context.WithCancel(ctx)
	defer drain()
	stopNode := p.StartNode(ctx, drain)
	defer stopNode()
	leading := s.startScheduleLeader(work)
	defer leading.Wait()
	return p.Run(work)
}

func (s *Scheduler) emit(e Event) {
	if len(s.cfg.observers) == 0 {
		return
	}
	if e.At.IsZero() {
		// The engine stamps the events of its hot path with a reading it
		// made anyway; every other event is stamped here.
		e.At = s.cfg.clock.Now()
	}
	for _, fn := range s.cfg.observers {
		fn(e)
	}
}

// AbandonedHandlers reports how many handlers, over every Run of this
// scheduler, are still running after their attempts were finished as timed
// out: each ignored its context for [WithTimeoutGrace] past its task's
// Timeout. Their results will be ignored; a count that keeps growing names
// handlers that need to honour their context.
func (s *Scheduler) AbandonedHandlers() int { return int(s.engine.Abandoned.Load()) }
