package store

import (
	"slices"
	"sort"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
)

// MaxCapabilities is the most capabilities a task may require and a
// process may declare: a process claims from one routed queue per subset of
// its capabilities, so 2^MaxCapabilities queues per queue it serves at most.
const MaxCapabilities = 5

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
// aside because the claim that met it could not run its handler:
// "handler <name>". plait's Scheduler answers it too, when it reads a run,
// for a ready task whose handler no live node serving its queue has.
func WaitingForHandler(handler string) string { return WaitingForHandlerPrefix + handler }

// routeSep joins a queue name and the capabilities of a routed queue.
const routeSep = "+"

// normalCaps returns caps sorted and without repeats, as a new slice.
func normalCaps(caps []string) []string {
	out := append([]string(nil), caps...)
	sort.Strings(out)
	return slices.Compact(out)
}
