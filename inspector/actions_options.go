package inspector

import (
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/plaitdag/plait/internal/action"
)

// The actions the handler serves, the authorizer's action names for the
// mutating routes: those of the engine the plait command uses too.
const (
	ActionRunCancel         = string(action.RunCancel)
	ActionRunReplay         = string(action.RunReplay)
	ActionRunDelete         = string(action.RunDelete)
	ActionRunNote           = string(action.RunNote)
	ActionDeadLetterRequeue = string(action.DeadLetterRequeue)
	ActionDeadLetterPurge   = string(action.DeadLetterPurge)
	ActionTaskRunNow        = string(action.TaskRunNow)
	ActionTaskSkip          = string(action.TaskSkip)
	ActionTaskCancel        = string(action.TaskCancel)
	ActionQueuePause        = string(action.QueuePause)
	ActionQueueResume       = string(action.QueueResume)
	ActionNodeDrain         = string(action.NodeDrain)
	ActionSchedulePause     = string(action.SchedulePause)
	ActionScheduleResume    = string(action.ScheduleResume)
	ActionScheduleTrigger   = string(action.ScheduleTrigger)
	ActionScheduleBackfill  = string(action.ScheduleBackfill)
)

// Actions answers every action name the handler knows, in a fixed order.
func Actions() []string {
	out := make([]string, len(action.Actions))
	for i, a := range action.Actions {
		out[i] = string(a)
	}
	return out
}

// Bounds of the action options.
const (
	// ActionMaxDefault is the most items one action acts on when
	// [WithActionMax] is not given.
	ActionMaxDefault = 10_000
	// ActionStartsBurstDefault and ActionStartsEveryDefault are the
	// default of [WithActionStarts].
	ActionStartsBurstDefault = 10
	ActionStartsEveryDefault = time.Second
)

// actionConfig is what the action options set.
type actionConfig struct {
	enabled map[string]bool
	rate    float64
	max     int
	burst   int
	every   time.Duration
	actor   func(r *http.Request) string
}

func actionDefaults() actionConfig {
	enabled := map[string]bool{}
	for _, a := range Actions() {
		enabled[a] = true
	}
	return actionConfig{
		enabled: enabled,
		rate:    action.RateDefault,
		max:     ActionMaxDefault,
		burst:   ActionStartsBurstDefault,
		every:   ActionStartsEveryDefault,
		actor:   func(r *http.Request) string { return "inspector " + r.RemoteAddr },
	}
}

// WithActions sets the actions the handler serves when it is not
// read-only (every one of [Actions] by default); another answers 403
// "action_disabled". An unknown name is an error.
func WithActions(names ...string) Option {
	return func(c *config) {
		enabled := map[string]bool{}
		for _, n := range names {
			if !slices.Contains(Actions(), n) {
				c.reject("WithActions", "names an unknown action "+n)
				return
			}
			enabled[n] = true
		}
		c.acts.enabled = enabled
	}
}

// WithActionRate sets the pace of an action in items per second, and the
// most a request's rate may ask: 0.1 to 1000, 50 by default.
func WithActionRate(perSecond float64) Option {
	return func(c *config) {
		if math.IsNaN(perSecond) || perSecond < 0.1 || perSecond > action.RateMax {
			c.reject("WithActionRate", "wants 0.1 to 1000 items per second")
			return
		}
		c.acts.rate = perSecond
	}
}

// WithActionMax sets the most items one action acts on (a target of more
// answers 422 "too_many"): 1 to 100,000, [ActionMaxDefault] by default.
func WithActionMax(n int) Option {
	return func(c *config) {
		if n < 1 || n > action.QueryMax {
			c.reject("WithActionMax", "wants 1 to 100000")
			return
		}
		c.acts.max = n
	}
}

// WithActionStarts sets how fast one client (by its remote address) may
// start actions and dry runs: burst at once, then one more per every; past
// that the handler answers 429 "rate_limited" with Retry-After. Behind a
// proxy every client shares the proxy's address: give the proxy's
// address the budget of all.
func WithActionStarts(burst int, every time.Duration) Option {
	return func(c *config) {
		if burst < 1 || every <= 0 {
			c.reject("WithActionStarts", "wants a burst of at least 1 and a positive interval")
			return
		}
		c.acts.burst, c.acts.every = burst, every
	}
}

// WithActor sets who acts, as the audit record and the run notes name
// them: the host's user, say (cut to 100 bytes). The default is
// "inspector" and the client's remote address.
func WithActor(fn func(r *http.Request) string) Option {
	return func(c *config) {
		if fn == nil {
			c.reject("WithActor", "needs a function")
			return
		}
		c.acts.actor = fn
	}
}
