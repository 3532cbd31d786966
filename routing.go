package plait

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// Routing by capability. A task that [Requires] capabilities is queued on a
// routed queue: its queue's name, then each required capability, sorted,
// each after a '+' ("render+gpu+region-eu"). No queue or capability name
// holds a '+', so routed names never collide with plain ones, and to a
// store a routed queue is a queue like any other: created into, claimed
// from, waited on. A process claims from its queues and from the routed
// queue of every set of capabilities it has, so it never pops a task it
// cannot run and never has to put one back; a process without capabilities
// claims exactly as before. What a task waits for is in its routed queue's
// name, which is how a store answers [TaskInstance.WaitingFor].

// normalCaps returns caps sorted and without repeats, as a new slice.
func normalCaps(caps []string) []string {
	out := append([]string(nil), caps...)
	sort.Strings(out)
	return slices.Compact(out)
}

// checkCaps reports why a set of capabilities cannot be routed on, or nil.
func checkCaps(caps []string) error {
	var errs []error
	for _, c := range caps {
		if err := ids.Check(c); err != nil {
			errs = append(errs, fmt.Errorf("capability %s %w", quote(c), err))
		}
	}
	if n := len(normalCaps(caps)); n > store.MaxCapabilities {
		errs = append(errs, fmt.Errorf("%d capabilities, at most %d", n, store.MaxCapabilities))
	}
	return errors.Join(errs...)
}

// WithCapabilities declares the capabilities (such as "gpu" or "region-eu")
// this process has: it runs tasks that [Requires] any subset of them, and
// only those among the tasks that require some. Defaults to none: the
// process runs only tasks that require nothing. Each name follows the rules
// of task names (see [ErrInvalidID]); repeats count once; more than
// [MaxCapabilities] is an error. The store must implement [ClaimRouter]
// when any capability is given: New answers an [*UnsupportedError]
// otherwise.
func WithCapabilities(caps ...string) Option {
	caps = append([]string(nil), caps...)
	return func(c *config) {
		if err := checkCaps(caps); err != nil {
			c.reject("WithCapabilities", quoteAll(caps), err.Error())
			return
		}
		c.capabilities = normalCaps(caps)
	}
}

// routes reports whether the store routes claims.
func (s *Scheduler) routes() bool {
	_, err := capability[store.ClaimRouter](s.store, "ClaimRouter")
	return err == nil
}
