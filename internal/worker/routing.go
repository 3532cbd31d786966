package worker

import (
	"slices"
	"sort"
	"strings"
)

// routeSep joins a queue name and the capabilities of a routed queue.
const routeSep = "+"

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
