package plait

import (
	"context"
	"fmt"
	"runtime/debug"
	"sort"

	"github.com/plaitdag/plait/internal/ids"
)

// Middleware wraps a handler, in the style of net/http middleware: it
// returns a [HandlerFunc] that does its own work around a call of next
// (logging, tracing, metrics, recovery, a context value) or instead of it.
//
// # Order
//
// A handler registered with [Scheduler.HandleWith] runs inside this chain,
// outermost first:
//
//  1. the scheduler's base middleware: [DefaultMiddleware] ([Recover], then
//     [EnforceTimeout]), or what [WithBaseMiddleware] put in its place;
//  2. the middleware of [WithMiddleware], in the order given (options given
//     twice add to the end);
//  3. the middleware given to HandleWith for that handler, in order;
//  4. the handler.
//
// The outermost middleware sees the call first and its return last. Chains
// are built once, when the handler is registered, so a call pays for the
// middleware it runs and nothing more.
type Middleware func(next HandlerFunc) HandlerFunc

// Chain returns the middleware that applies mw in order, the first one
// outermost. Nil elements are skipped.
func Chain(mw ...Middleware) Middleware {
	mw = append([]Middleware(nil), mw...)
	return func(next HandlerFunc) HandlerFunc {
		for i := len(mw) - 1; i >= 0; i-- {
			if mw[i] != nil {
				next = mw[i](next)
			}
		}
		return next
	}
}

// DefaultMiddleware returns the base middleware a scheduler wraps every
// handler in unless [WithBaseMiddleware] replaces it: [Recover], then
// [EnforceTimeout].
func DefaultMiddleware() []Middleware { return []Middleware{Recover(), EnforceTimeout()} }

// Recover returns the middleware that turns a panic of what it wraps into a
// [*PanicError] carrying the stack, which the attempt records as its error
// (a panic is retried as any error is). It is part of [DefaultMiddleware].
// A chain without it still does not crash the process: the worker turns a
// panic that reaches it into the same error, as a last resort.
func Recover() Middleware {
	return func(next HandlerFunc) HandlerFunc {
		return func(ctx context.Context, t *Task) (result any, err error) {
			defer func() {
				if r := recover(); r != nil {
					result, err = nil, &PanicError{Value: r, Stack: string(debug.Stack())}
				}
			}()
			return next(ctx, t)
		}
	}
}

// EnforceTimeout returns the middleware that enforces a task's Timeout (see
// [Task.Timeout]): when it passes, on the scheduler's clock, the handler's
// context is cancelled with the cause [ErrTimeout], and a handler still
// running [WithTimeoutGrace] later is given up on (see
// [Scheduler.AbandonedHandlers]). It is part of [DefaultMiddleware]; a
// chain without it lets handlers run past their Timeout. On a [Task] built
// by hand, outside a scheduler, it cancels the context with
// context.WithTimeoutCause on the system clock and has no grace.
func EnforceTimeout() Middleware {
	return func(next HandlerFunc) HandlerFunc {
		return func(ctx context.Context, t *Task) (any, error) {
			d := t.Timeout()
			if d <= 0 {
				return next(ctx, t)
			}
			if t.exec != nil {
				t.exec.GuardTimeout()
				return next(ctx, t)
			}
			ctx, cancel := context.WithTimeoutCause(ctx, d, ErrTimeout)
			defer cancel()
			return next(ctx, t)
		}
	}
}

// WithMiddleware adds middleware that wraps every handler of the scheduler,
// inside the base middleware and outside each handler's own (see
// [Middleware] for the order). Each call adds to the end; a nil element is
// an error. Handlers registered before New returns do not exist, so every
// handler gets the chain.
func WithMiddleware(mw ...Middleware) Option {
	mw = append([]Middleware(nil), mw...)
	return func(c *config) {
		for i, m := range mw {
			if m == nil {
				c.reject("WithMiddleware", fmt.Sprintf("element %d", i), "is nil")
				return
			}
		}
		c.hooks.middleware = append(c.hooks.middleware, mw...)
	}
}

// WithBaseMiddleware replaces the scheduler's base middleware,
// [DefaultMiddleware], with mw: the outermost part of every handler's chain.
// Give it to replace the built-in recovery or timeout with your own, for
// instance Recover-then-report or a timeout on another clock;
// WithBaseMiddleware() with nothing drops both (a panic is then still
// caught by the worker, see [Recover]). Given twice, the last one counts; a
// nil element is an error.
func WithBaseMiddleware(mw ...Middleware) Option {
	mw = append([]Middleware{}, mw...)
	return func(c *config) {
		for i, m := range mw {
			if m == nil {
				c.reject("WithBaseMiddleware", fmt.Sprintf("element %d", i), "is nil")
				return
			}
		}
		c.hooks.base, c.hooks.baseSet = mw, true
	}
}

// HandleWith registers fn as the handler named name, wrapped in mw (the
// first outermost) inside the scheduler's own middleware; see [Middleware]
// for the whole order. Each name is registered once: a name already
// registered is refused with an error wrapping [ErrDuplicateHandler], and
// the first handler stays. It returns an error wrapping [ErrInvalidID] for
// a bad name, or [ErrInvalidOption] for a nil fn or a nil middleware.
func (s *Scheduler) HandleWith(name string, fn HandlerFunc, mw ...Middleware) error {
	if err := ids.Check(name); err != nil {
		return fmt.Errorf("plait: handler name %s: %w: %v", quote(name), ErrInvalidID, err)
	}
	if fn == nil {
		return fmt.Errorf("%w: nil handler %s", ErrInvalidOption, quote(name))
	}
	for i, m := range mw {
		if m == nil {
			return fmt.Errorf("%w: middleware %d of handler %s is nil", ErrInvalidOption, i, quote(name))
		}
	}
	wrapped := s.wrap(fn, mw)
	s.mu.Lock()
	if _, ok := s.handlers[name]; ok {
		s.mu.Unlock()
		return fmt.Errorf("%w %s: a handler of that name is already registered", ErrDuplicateHandler, quote(name))
	}
	s.handlers[name] = wrapped
	s.runners[name] = s.runner(wrapped)
	names := make([]string, 0, len(s.handlers))
	for n := range s.handlers {
		names = append(names, n)
	}
	sort.Strings(names)
	s.handlerNames.Store(&names)
	s.mu.Unlock()
	return nil
}

// wrap builds a handler's chain: base, scheduler, then the handler's own.
func (s *Scheduler) wrap(fn HandlerFunc, own []Middleware) HandlerFunc {
	base := s.cfg.hooks.base
	if !s.cfg.hooks.baseSet {
		base = DefaultMiddleware()
	}
	all := make([]Middleware, 0, len(base)+len(s.cfg.hooks.middleware)+len(own))
	all = append(append(append(all, base...), s.cfg.hooks.middleware...), own...)
	return Chain(all...)(fn)
}

// call runs the handler's chain. A panic that no middleware recovered is
// turned into a *PanicError here, so a chain without [Recover] cannot take
// the process down.
func call(ctx context.Context, fn HandlerFunc, t *Task) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, &PanicError{Value: r, Stack: string(debug.Stack())}
		}
	}()
	return fn(ctx, t)
}

// hookConfig holds the settings of handler middleware, the handlers' base
// context and the metrics hooks.
type hookConfig struct {
	// middleware wraps every handler inside base.
	middleware []Middleware
	// base replaces DefaultMiddleware when baseSet.
	base    []Middleware
	baseSet bool
	// baseContext gives the values every handler context inherits; nil
	// means those of Run's context.
	baseContext func() context.Context
	// metrics receives the metrics hooks; nil means none.
	metrics Metrics
}
