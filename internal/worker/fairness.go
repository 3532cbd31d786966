package worker

import (
	"sync"

	"github.com/plaitdag/plait/store"
)

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

func newFairness(w [4]int) *fairness {
	f := &fairness{weights: w}
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
