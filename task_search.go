package plait

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// TaskSearch answers one page of tasks across runs, filtered by status,
// queue, handler, node, tenant and service (see [store.TaskSearchStore]
// for what each filter reads and the bound per call): "what is running,
// where, until when", "what waits on this queue", "what failed for this
// tenant". Each running task carries its lease deadline and whether its
// node is alive (one node list read per call): a task still running on a
// node that is gone (a process killed, its heartbeats stopped past its
// TTL) is [TaskHit].Orphaned until the lease sweep gives it to another
// worker, at its lease deadline. A zero Limit means [QueryLimitDefault].
// It answers an [*UnsupportedError] when the store does not implement
// [TaskSearchStore]; without [NodeStore] no task is flagged.
func (s *Scheduler) TaskSearch(ctx context.Context, params TaskSearchParams) (*TaskSearchResult, error) {
	ts, err := capability[store.TaskSearchStore](s.store, "TaskSearchStore")
	if err != nil {
		return nil, err
	}
	if params.Limit == 0 {
		params.Limit = QueryLimitDefault
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	res, err := ts.TaskSearch(ctx, &params)
	if err != nil {
		return nil, err
	}
	out := &TaskSearchResult{NextCursor: res.NextCursor, Tasks: make([]TaskHit, len(res.Tasks))}
	var live map[string]bool
	for i, h := range res.Tasks {
		out.Tasks[i].TaskHit = h
		if h.Status != TaskRunning || h.Node == "" {
			continue
		}
		if live == nil {
			ns, ok := s.store.(store.NodeStore)
			if !ok {
				break
			}
			nl, err := ns.NodeList(ctx, &store.NodeListParams{})
			if err != nil {
				return nil, err
			}
			live = make(map[string]bool, len(nl.Nodes))
			for _, n := range nl.Nodes {
				live[n.ID] = true
			}
		}
		out.Tasks[i].NodeAlive = live[h.Node]
		out.Tasks[i].Orphaned = !live[h.Node]
	}
	return out, nil
}

type (
	// TaskSearchParams select a page of tasks: see [store.TaskSearchParams].
	TaskSearchParams = store.TaskSearchParams
)

// TaskSearchResult is what [Scheduler.TaskSearch] answers.
type TaskSearchResult struct {
	Tasks []TaskHit
	// NextCursor is the cursor of the next page; empty when this page is
	// the last.
	NextCursor string
}

// TaskHit is one task [Scheduler.TaskSearch] found: see [store.TaskHit],
// and for a running task whether its node is alive.
type TaskHit struct {
	store.TaskHit
	// NodeAlive reports that the node holding a running task is in the
	// live node list. False for a task in any other status.
	NodeAlive bool
	// Orphaned reports a running task whose node is gone: nothing runs it
	// until its lease ends and the sweep queues it again (or dead-letters
	// it past the crash limit). False for a task claimed outside a
	// Scheduler (no node recorded) and on a store without [NodeStore].
	Orphaned bool
}
