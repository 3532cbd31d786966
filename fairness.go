package plait

import (
	"fmt"
	"sync"

	"github.com/plaitdag/plait/store"
)

// Fair priorities. By default a claim is strict: every ready urgent task
// goes before any high one, and so on, so a constant stream of urgent work
// starves low-priority work for as long as it lasts. In the weighted mode
// ([WithWeightedPriorities]) each claim gives each priority level a share
// of its tasks in proportion to the level's weight, handed out by a smooth
// weighted round robin that runs across claims (so even claims of one task
// follow the weights), and fills what a level could not use in strict
// order, so no capacity is left idle. The claim also starts at the next of
// this process's queues each time, so no queue is always served first.

// PriorityWeights are the weights of the priority levels in the weighted
// mode: under saturation the levels' shares of the claims are in these
// proportions. Each weight is 1 to [PriorityWeightMax].
type PriorityWeights struct {
	Urgent, High, Normal, Low int
}

// PriorityWeightsDefault are the weights [WithWeightedPriorities] suggests:
// each level twice the next, so low-priority work still gets one claim in
// fifteen under a flood of urgent work.
var PriorityWeightsDefault = PriorityWeights{Urgent: 8, High: 4, Normal: 2, Low: 1}

// PriorityWeightMax bounds each weight.
const PriorityWeightMax = 1000

// ordered returns the weights in claim order, urgent first.
func (w PriorityWeights) ordered() [4]int { return [4]int{w.Urgent, w.High, w.Normal, w.Low} }

// String prints the weights as WithWeightedPriorities takes them.
func (w PriorityWeights) String() string {
	return fmt.Sprintf("{Urgent: %d, High: %d, Normal: %d, Low: %d}", w.Urgent, w.High, w.Normal, w.Low)
}

// WithWeightedPriorities turns on the weighted mode of claiming (see
// [FairClaimer]): priority levels share the claims in proportion to w, and
// queues take turns. Defaults to off: strict priority. A weight below 1 or
// above [PriorityWeightMax] is an error. The store must implement
// [FairClaimer]: New answers an [*UnsupportedError] otherwise.
func WithWeightedPriorities(w PriorityWeights) Option {
	return func(c *config) {
		for _, v := range w.ordered() {
			if v < 1 || v > PriorityWeightMax {
				c.reject("WithWeightedPriorities", w.String(), fmt.Sprintf("each weight must be 1 to %d", PriorityWeightMax))
				return
			}
		}
		c.weights = &w
	}
}

// fairness hands out the shares of the weighted mode: a smooth weighted
// round robin over the four levels, and the queue to start the next claim
// at. Both drivers of a pool share it.
type fairness struct {
	mu      sync.Mutex
	weights [4]int
	current [4]int
	total   int
	turn    int
}

func newFairness(w PriorityWeights) *fairness {
	f := &fairness{weights: w.ordered()}
	for _, v := range f.weights {
		f.total += v
	}
	return f
}

// shares returns how many of n tasks each level (urgent first) should get,
// picking n times by smooth weighted round robin: each pick adds every
// level's weight to its current value and takes the level with the
// highest, which then gives back the total. Over any run of picks each
// level's count stays within one of its exact share.
func (f *fairness) shares(n int) []int {
	out := make([]int, 4)
	f.mu.Lock()
	defer f.mu.Unlock()
	for ; n > 0; n-- {
		best := 0
		for i := range f.current {
			f.current[i] += f.weights[i]
			if f.current[i] > f.current[best] {
				best = i
			}
		}
		f.current[best] -= f.total
		out[best]++
	}
	return out
}

// rotate returns groups (each a queue followed by its routed queues)
// flattened, starting at the next group in turn; nil for none.
func (f *fairness) rotate(groups [][]string) []string {
	if len(groups) == 0 {
		return nil
	}
	f.mu.Lock()
	start := f.turn % len(groups)
	f.turn++
	f.mu.Unlock()
	var out []string
	for i := range groups {
		out = append(out, groups[(start+i)%len(groups)]...)
	}
	return out
}

// queueGroups splits the queues a claim asks for (claimQueues less the
// paused ones) into one group per configured queue: the queue and its
// routed queues.
func queueGroups(queues []string) [][]string {
	var groups [][]string
	for _, q := range queues {
		base, caps, _ := store.SplitRoutedQueue(q)
		if len(caps) == 0 || len(groups) == 0 {
			groups = append(groups, []string{q})
			continue
		}
		last := groups[len(groups)-1]
		if b, _, _ := store.SplitRoutedQueue(last[0]); b == base {
			groups[len(groups)-1] = append(last, q)
		} else {
			groups = append(groups, []string{q})
		}
	}
	return groups
}
