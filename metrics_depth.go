package plait

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/plaitdag/plait/internal/maintenance"
	"github.com/plaitdag/plait/store"
)

// Queue depth is a fact of the fleet, not of a process: every worker
// sampling it would export the same gauge once per process, and a sum over
// processes would count each waiting task as many times. So one process
// samples it, the one holding the schedule leader lease, on the leader's
// loop, and tells the [Metrics] of its own process only.

// depthState is this process's side of the queue depth samples.
type depthState struct {
	mu sync.Mutex
	// at is when the last sample was taken; zero until the first of a
	// term, so a new leader samples at its first pass.
	at time.Time
	// queues are the queues sampled in this term. They are kept for the
	// term, so a queue that no live node serves any more is still
	// reported, with the tasks stranded on it.
	queues map[string]struct{}
	// reported is set once the term reported a depth, so its end clears
	// them.
	reported bool
}

// queueDepthPass samples the depth of the fleet's queues and hands each to
// the metrics, when this process holds the leader lease, has metrics, the
// store counts queues, and a sweep interval passed since the last sample.
// The sample is taken under the lease (lead.Act), so the end of the term
// (queueDepthStop, from the leader's Changed) cannot come between the
// check and the hooks.
func (s *Scheduler) queueDepthPass(ctx context.Context, lead *maintenance.Leader) {
	m := s.cfg.hooks.metrics
	if m == nil {
		return
	}
	qd, err := capability[store.QueueDepther](s.store, "QueueDepther")
	if err != nil {
		return
	}
	now := s.cfg.clock.Now()
	s.depth.mu.Lock()
	due := s.depth.at.IsZero() || now.Sub(s.depth.at) >= s.cfg.sweepInterval
	s.depth.mu.Unlock()
	if !due {
		return
	}
	_, err = lead.Act(ctx, func(ctx context.Context, term maintenance.Term) error {
		if !term.Valid() {
			return nil
		}
		res, err := qd.QueueDepth(ctx, &store.QueueDepthParams{Queues: s.depthQueues(ctx)})
		if err != nil {
			return err
		}
		s.depth.mu.Lock()
		s.depth.at, s.depth.reported = now, true
		s.depth.mu.Unlock()
		for _, q := range res.Queues {
			m.QueueDepth(q.Queue, q.Ready, q.Delayed)
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		s.cfg.logger.Warn("plait: queue depth sample failed", "err", err)
	}
}

// depthQueues answers the queues to sample, sorted: this process's, every
// live node's (from a store that keeps nodes), and those sampled earlier
// in the term. A failed node list leaves the others.
func (s *Scheduler) depthQueues(ctx context.Context) []string {
	var nodes []*store.NodeRecord
	if ns, err := capability[store.NodeStore](s.store, "NodeStore"); err == nil {
		if res, err := ns.NodeList(ctx, &store.NodeListParams{}); err == nil {
			nodes = res.Nodes
		}
	}
	s.depth.mu.Lock()
	defer s.depth.mu.Unlock()
	if s.depth.queues == nil {
		s.depth.queues = make(map[string]struct{})
	}
	for _, q := range s.cfg.queues {
		s.depth.queues[q] = struct{}{}
	}
	for _, n := range nodes {
		for _, q := range n.Queues {
			s.depth.queues[q] = struct{}{}
		}
	}
	out := make([]string, 0, len(s.depth.queues))
	for q := range s.depth.queues {
		out = append(out, q)
	}
	slices.Sort(out)
	return out
}

// queueDepthStop ends this process's term of sampling: the leader lease
// was lost or given up. The metrics drop what the term reported, when
// they can ([QueueDepthClearer]), and the next term starts afresh.
func (s *Scheduler) queueDepthStop() {
	s.depth.mu.Lock()
	reported := s.depth.reported
	s.depth.at, s.depth.queues, s.depth.reported = time.Time{}, nil, false
	s.depth.mu.Unlock()
	if c, ok := s.cfg.hooks.metrics.(QueueDepthClearer); ok && reported {
		c.QueueDepthClear()
	}
}
