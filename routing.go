package plait

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
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

// MaxCapabilities is the most capabilities a task may require and a
// process may declare: a process claims from one routed queue per subset of
// its capabilities, so 2^MaxCapabilities queues per queue it serves at most.
const MaxCapabilities = 5

// routeSep joins a queue name and the capabilities of a routed queue.
const routeSep = "+"

// RoutedQueue returns the queue a task on queue that requires the
// capabilities requires is kept on: queue itself when requires is empty,
// else queue and the capabilities, sorted and without repeats, each after a
// '+'. An empty queue means [DefaultQueue]. Stores implementing
// [ClaimRouter] use it to place tasks.
func RoutedQueue(queue string, requires []string) string {
	if queue == "" {
		queue = DefaultQueue
	}
	if len(requires) == 0 {
		return queue
	}
	caps := normalCaps(requires)
	return queue + routeSep + strings.Join(caps, routeSep)
}

// SplitRoutedQueue splits a queue name as [RoutedQueue] builds it into the
// queue and the capabilities it requires (nil for a plain queue). ok is
// false when a part is not a valid name, the capabilities are not sorted
// and distinct, or there are more than [MaxCapabilities]: no task is ever
// kept on such a queue.
func SplitRoutedQueue(name string) (queue string, requires []string, ok bool) {
	parts := strings.Split(name, routeSep)
	if len(parts)-1 > MaxCapabilities {
		return "", nil, false
	}
	for i, p := range parts {
		if ids.Check(p) != nil {
			return "", nil, false
		}
		if i > 1 && parts[i-1] >= p {
			return "", nil, false
		}
	}
	if len(parts) > 1 {
		requires = parts[1:]
	}
	return parts[0], requires, true
}

// claimQueues returns the queues a process serving queues with the
// capabilities caps claims from: each queue, then the routed queue of each
// non-empty subset of caps, in that order per queue. Plain queues come
// first so a claim visits them first within a priority.
func claimQueues(queues, caps []string) []string {
	if len(caps) == 0 {
		return queues
	}
	caps = normalCaps(caps)
	out := make([]string, 0, len(queues)<<len(caps))
	for _, q := range queues {
		out = append(out, q)
		for mask := 1; mask < 1<<len(caps); mask++ {
			var sub []string
			for i, c := range caps {
				if mask&(1<<i) != 0 {
					sub = append(sub, c)
				}
			}
			out = append(out, q+routeSep+strings.Join(sub, routeSep))
		}
	}
	return out
}

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
	if n := len(normalCaps(caps)); n > MaxCapabilities {
		errs = append(errs, fmt.Errorf("%d capabilities, at most %d", n, MaxCapabilities))
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

// ClaimRouter is the capability of routing tasks to the processes that can
// run them. A store that implements it
//
//   - keeps a task that requires capabilities on the queue [RoutedQueue]
//     names, and accepts routed names in [TaskClaimParams].Queues,
//     [ReadyWaitParams].Queues and wherever else a queue is named;
//   - honours [TaskClaimParams].Handlers: a claim never hands out a task
//     whose handler is not listed, and sets it aside instead (its
//     [TaskInstance.WaitingFor] names the handler), until a claim that
//     lists the handler takes it, ahead of the queues' other tasks;
//   - answers [TaskInstance.WaitingFor] for ready tasks that only some
//     processes may run.
//
// Without it the Scheduler refuses workflows with [Requires] and processes
// with [WithCapabilities] (an [*UnsupportedError]), and a process that
// claims a task whose handler it lacks hands the task back.
type ClaimRouter interface {
	// RoutesClaims does nothing; its presence says that the store routes
	// as the interface describes.
	RoutesClaims()
}

// routes reports whether the store routes claims.
func (s *Scheduler) routes() bool {
	_, err := capability[ClaimRouter](s.store, "ClaimRouter")
	return err == nil
}

// WaitingForCapability returns the [TaskInstance.WaitingFor] of a ready
// task on the routed queue named queue: "capability " and the capabilities
// it requires, comma separated; empty for a plain queue.
func WaitingForCapability(queue string) string {
	_, caps, ok := SplitRoutedQueue(queue)
	if !ok || len(caps) == 0 {
		return ""
	}
	return "capability " + strings.Join(caps, ",")
}

// WaitingForHandler returns the [TaskInstance.WaitingFor] of a task set
// aside because the claim that met it could not run its handler.
func WaitingForHandler(handler string) string { return "handler " + handler }
