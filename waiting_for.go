package plait

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// What holds a ready task back, named when a run is read. A store answers
// TaskInstance.WaitingFor from what it keeps: the capabilities a task
// requires, the handler a claim set it aside for, the limit it waits on.
// What the fleet does to a task the store has nothing to say about is
// known only from the paused queues and the live nodes, which change
// without any write to the run; so it is computed when the run is read,
// not stored, and costs nothing on the claim path.

// fleetView is what the fleet holds tasks back by, read once per call.
type fleetView struct {
	paused map[string]bool
	// nodes is false when no node record is live: workers that do not
	// heartbeat, or none running, say nothing of what is served.
	nodes bool
	// handlers holds, for each queue a live node not draining claims
	// from, the handlers those nodes have.
	handlers map[string]map[string]bool
}

// explainWaiting sets, in the tasks of lists, the WaitingFor of every
// ready task the store gave none: "queue <q> paused" when its queue is
// paused ([store.WaitingForQueuePaused]), else "queue <q> not served" when
// no live node that is not draining claims from it
// ([store.WaitingForQueueNotServed]), else "handler <h>" when none of
// those has its handler ([store.WaitingForHandler]). The paused queues and
// the live nodes are read once, and only when such a task is there; a
// store without [store.NodeStore] leaves every WaitingFor as it was, and
// so does a fleet that cannot be read (the caller gets the run it asked
// for, and the logger a warning). With no live node record at all, only
// paused queues are named.
func (s *Scheduler) explainWaiting(ctx context.Context, lists ...[]TaskInstance) {
	if !anyUnexplained(lists) {
		return
	}
	ns, ok := s.store.(store.NodeStore)
	if !ok {
		return
	}
	f, err := readFleetView(ctx, ns)
	if err != nil {
		s.cfg.logger.Warn("plait: WaitingFor left as the store answered it: the fleet could not be read", "err", err)
		return
	}
	for _, tasks := range lists {
		for i := range tasks {
			t := &tasks[i]
			if t.Status == TaskReady && t.WaitingFor == "" {
				t.WaitingFor = f.reason(t.Queue, t.Handler)
			}
		}
	}
}

// anyUnexplained reports whether lists hold a ready task without a
// WaitingFor.
func anyUnexplained(lists [][]TaskInstance) bool {
	for _, tasks := range lists {
		for i := range tasks {
			if tasks[i].Status == TaskReady && tasks[i].WaitingFor == "" {
				return true
			}
		}
	}
	return false
}

// readFleetView reads the paused queues and the live nodes.
func readFleetView(ctx context.Context, ns store.NodeStore) (*fleetView, error) {
	paused, err := ns.QueueListPaused(ctx, &store.QueueListPausedParams{})
	if err != nil {
		return nil, err
	}
	nodes, err := ns.NodeList(ctx, &store.NodeListParams{})
	if err != nil {
		return nil, err
	}
	f := &fleetView{paused: make(map[string]bool, len(paused.Queues)), nodes: len(nodes.Nodes) > 0, handlers: map[string]map[string]bool{}}
	for _, q := range paused.Queues {
		f.paused[q] = true
	}
	for _, n := range nodes.Nodes {
		if n.Draining || n.DrainRequested {
			continue // it takes nothing new
		}
		for _, q := range n.Queues {
			hs := f.handlers[q]
			if hs == nil {
				hs = map[string]bool{}
				f.handlers[q] = hs
			}
			for _, h := range n.Handlers {
				hs[h] = true
			}
		}
	}
	return f, nil
}

// reason is what holds a ready task of queue and handler back, or "".
func (f *fleetView) reason(queue, handler string) string {
	switch {
	case queue == "":
		return "" // a store that does not answer the queue
	case f.paused[queue]:
		return store.WaitingForQueuePaused(queue)
	case !f.nodes:
		return ""
	case f.handlers[queue] == nil:
		return store.WaitingForQueueNotServed(queue)
	case !f.handlers[queue][handler]:
		return store.WaitingForHandler(handler)
	}
	return ""
}
