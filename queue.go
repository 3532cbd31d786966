package plait

import (
	"context"
	"fmt"
	"sort"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// Priority orders ready tasks: see [store.Priority]. The zero value is
// PriorityNormal.
type Priority = store.Priority

// Priorities, lowest first, and the queue tasks go to unless [OnQueue]
// names another.
const (
	PriorityLow    = store.PriorityLow
	PriorityNormal = store.PriorityNormal
	PriorityHigh   = store.PriorityHigh
	PriorityUrgent = store.PriorityUrgent
	DefaultQueue   = store.DefaultQueue
)

// QueuePause stops every node of the fleet taking tasks from queue until
// [Scheduler.QueueResume]; tasks already claimed run on, and new tasks wait in
// the queue. Each node learns it at its next heartbeat. Pausing a paused
// queue changes nothing.
//
// A queue no live node serves is paused all the same, since its workers
// may not be deployed yet; but as the name may be a typo, the scheduler's
// logger gets a warning, once per queue, that names the queues the live
// nodes serve ([NodeRecord].Queues).
func (s *Scheduler) QueuePause(ctx context.Context, queue string) error {
	if err := s.queuePause(ctx, queue, false); err != nil {
		return err
	}
	s.warnUnserved(ctx, queue)
	return nil
}

// warnUnserved logs, once per queue, that queue was paused while no live
// node serves it. A node list that cannot be read warns of nothing.
func (s *Scheduler) warnUnserved(ctx context.Context, queue string) {
	if _, done := s.unservedWarned.Load(queue); done {
		return
	}
	nodes, err := s.NodeList(ctx)
	if err != nil {
		return
	}
	seen := map[string]bool{}
	var served []string
	for _, n := range nodes {
		for _, q := range n.Queues {
			if q == queue {
				return
			}
			if !seen[q] {
				seen[q] = true
				served = append(served, q)
			}
		}
	}
	if _, done := s.unservedWarned.LoadOrStore(queue, true); done {
		return
	}
	sort.Strings(served)
	list := quoteSome(served)
	if len(nodes) == 0 {
		list = "none: no node is live"
	}
	s.cfg.logger.Warn("plait: QueuePause: no live node serves this queue (a typo?); it is paused all the same",
		"queue", quote(queue), "served", list)
}

// QueueResume lets every node take tasks from queue again; each node learns it
// at its next heartbeat and claims at once.
func (s *Scheduler) QueueResume(ctx context.Context, queue string) error {
	return s.queuePause(ctx, queue, true)
}

func (s *Scheduler) queuePause(ctx context.Context, queue string, resume bool) error {
	ns, err := s.nodeStore()
	if err != nil {
		return err
	}
	if err := ids.Check(queue); err != nil {
		return fmt.Errorf("plait: queue %s: %w: %v", quote(queue), ErrInvalidID, err)
	}
	_, err = ns.QueuePause(ctx, &store.QueuePauseParams{Queue: queue, Resume: resume})
	return err
}

// QueueListPaused lists the queues paused for the fleet, sorted.
func (s *Scheduler) QueueListPaused(ctx context.Context) ([]string, error) {
	ns, err := s.nodeStore()
	if err != nil {
		return nil, err
	}
	res, err := ns.QueueListPaused(ctx, &store.QueueListPausedParams{})
	if err != nil {
		return nil, err
	}
	return res.Queues, nil
}

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
