package plait

import (
	"context"
	"slices"

	"github.com/plaitdag/plait/store"
)

// QueueList answers one page of the queues the store knows: every queue
// that has or had tasks, a typo'd one no node serves included, by name,
// each with its ready tasks per priority, its delayed, set-aside and
// running tasks, when its oldest ready task became ready, whether it is
// paused, the limit this Scheduler puts on it ([WithQueueLimit]) and the
// live nodes serving it (one node list read per call). A
// routed queue ("render+gpu": tasks of queue render that require the
// capability gpu) is listed right after its queue, served by the live
// nodes that claim from the queue and have every capability. A zero Limit
// means [QueryLimitDefault]. It answers an [*UnsupportedError] when the
// store does not implement [QueueLister]; without [NodeStore] the nodes
// are not known and no queue is flagged unserved.
func (s *Scheduler) QueueList(ctx context.Context, params QueueListParams) (*QueueListResult, error) {
	l, err := capability[store.QueueLister](s.store, "QueueLister")
	if err != nil {
		return nil, err
	}
	if params.Limit == 0 {
		params.Limit = QueryLimitDefault
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	res, err := l.QueueList(ctx, &params)
	if err != nil {
		return nil, err
	}
	out := &QueueListResult{NextCursor: res.NextCursor, RunningCapped: res.RunningCapped, Queues: make([]QueueInfo, len(res.Queues))}
	var nodes []*NodeRecord
	ns, known := s.store.(store.NodeStore)
	if known {
		nl, err := ns.NodeList(ctx, &store.NodeListParams{})
		if err != nil {
			return nil, err
		}
		nodes = nl.Nodes
	}
	for i, q := range res.Queues {
		out.Queues[i].QueueInfo = q
		out.Queues[i].Limit = s.cfg.queueLimits[q.Queue]
		if !known {
			continue
		}
		for _, n := range nodes {
			if serves(n, q.Queue, q.Requires) {
				out.Queues[i].Nodes = append(out.Queues[i].Nodes, n.ID)
			}
		}
		out.Queues[i].Unserved = len(out.Queues[i].Nodes) == 0
	}
	return out, nil
}

// serves reports whether node n claims from queue with the capabilities
// requires: it lists the queue, has every capability and is not draining
// (a draining node takes nothing new).
func serves(n *NodeRecord, queue string, requires []string) bool {
	if n.Draining || n.DrainRequested || !slices.Contains(n.Queues, queue) {
		return false
	}
	for _, c := range requires {
		if !slices.Contains(n.Capabilities, c) {
			return false
		}
	}
	return true
}

type (
	// QueueListParams select a page of queues: see [store.QueueListParams].
	QueueListParams = store.QueueListParams
)

// QueueListResult is what [Scheduler.QueueList] answers.
type QueueListResult struct {
	Queues []QueueInfo
	// NextCursor is the cursor of the next page; empty when this page is
	// the last.
	NextCursor string
	// RunningCapped reports that the running counts are those of the
	// first [store.QueueRunningScan] leases of a shard.
	RunningCapped bool
}

// QueueInfo is one queue as [Scheduler.QueueList] answers it: what the
// store counts (see [store.QueueInfo]) and the live nodes serving it.
type QueueInfo struct {
	store.QueueInfo
	// Nodes are the ids of the live nodes that claim from the queue (for
	// a routed queue, those with every capability it requires), ordered by
	// id; a draining node takes nothing new and is left out.
	Nodes []string
	// Limit is the concurrency limit this Scheduler's [WithQueueLimit]
	// puts on the queue's tasks, 0 for none: the limit in force for the
	// tasks it submits (each task keeps the limit it was submitted with,
	// so tasks another process submitted may carry another). Limited
	// counts the tasks it holds back.
	Limit int
	// Unserved reports that no live node serves the queue: its tasks wait
	// until one comes (a typo'd queue name waits forever). Always false on
	// a store without [NodeStore].
	Unserved bool
}
