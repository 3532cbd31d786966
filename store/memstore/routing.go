package memstore

import (
	"slices"
	"sort"
	"time"

	"github.com/plaitdag/plait/store"
)

// Routing (see [store.ClaimRouter]): a task that requires capabilities is
// kept on its routed queue (task.route), which only claims naming that
// queue visit. A claim listing its handlers sets aside each task it meets
// whose handler it lacks, in its queue's aside FIFO for that handler, and
// takes tasks set aside for its own handlers before anything else: they
// have waited longest.

// RoutesClaims declares that the store routes claims; see
// [store.ClaimRouter].
func (s *Store) RoutesClaims() {}

var _ store.ClaimRouter = (*Store)(nil)

// runsHere reports whether a claim listing handlers (nil: any) may take t.
func runsHere(t *task, handlers []string) bool {
	return handlers == nil || slices.Contains(handlers, t.spec().Handler)
}

// setAsideLocked keeps t, just popped from a ready FIFO of q, in q's aside
// FIFO of its handler until a claim that has the handler takes it. It stays
// ready under the same queue sequence, so a cancel or a new queueing makes
// the aside entry stale like any other.
func (s *Store) setAsideLocked(q *queue, e entry, now time.Time) {
	h := e.t.spec().Handler
	if q.aside == nil {
		q.aside = map[string]*fifo{}
	}
	f := q.aside[h]
	if f == nil {
		f = &fifo{}
		q.aside[h] = f
	}
	f.push(e)
	e.t.asideFor = h
	s.waitingEventLocked(e.t, store.WaitingForHandler(h), now)
}

// claimAsideLocked claims, into res, tasks set aside on q for the handlers
// listed (all of them for a claim that runs any handler), up to limit in
// all.
func (s *Store) claimAsideLocked(q *queue, params *store.TaskClaimParams, res *store.TaskClaimResult, now, until time.Time) {
	if len(q.aside) == 0 {
		return
	}
	handlers := params.Handlers
	if handlers == nil {
		for h := range q.aside {
			handlers = append(handlers, h)
		}
		sort.Strings(handlers)
	}
	for _, h := range handlers {
		f := q.aside[h]
		if f == nil {
			continue
		}
		for len(res.Tasks) < params.Limit {
			e, ok := f.peek()
			if !ok {
				delete(q.aside, h)
				break
			}
			f.drop()
			e.t.asideFor = ""
			if !s.admitLocked(e, now) {
				continue
			}
			if ct := s.claimLocked(e.t, params.WorkerID, params.InlineResultsMax, now, until); ct != nil {
				res.Tasks = append(res.Tasks, ct)
			}
		}
	}
}

// hasAsideLocked reports whether a task of the queues names is set aside
// for one of handlers (none when handlers is nil: a ReadyWait that names
// no handlers wakes for ready work only).
func (s *Store) hasAsideLocked(names, handlers []string) bool {
	for _, name := range names {
		q := s.queues[name]
		if q == nil || len(q.aside) == 0 {
			continue
		}
		for _, h := range handlers {
			if f := q.aside[h]; f != nil {
				if _, ok := f.peek(); ok {
					return true
				}
			}
		}
	}
	return false
}

// waitingFor is the task's [store.TaskInstance.WaitingFor].
func (t *task) waitingFor() string {
	if t.status != store.TaskReady {
		return ""
	}
	if t.asideFor != "" {
		return store.WaitingForHandler(t.asideFor)
	}
	if t.limitedBy != "" {
		return store.WaitingForLimit(t.limitedBy)
	}
	return store.WaitingForCapability(t.route)
}
