package memstore

import (
	"slices"
	"sort"
	"time"

	"github.com/plaitdag/plait"
)

// Routing (see [plait.ClaimRouter]): a task that requires capabilities is
// kept on its routed queue (task.route), which only claims naming that
// queue visit. A claim listing its handlers sets aside each task it meets
// whose handler it lacks, in its queue's aside FIFO for that handler, and
// takes tasks set aside for its own handlers before anything else: they
// have waited longest.

// RoutesClaims declares that the store routes claims; see
// [plait.ClaimRouter].
func (s *Store) RoutesClaims() {}

var _ plait.ClaimRouter = (*Store)(nil)

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
	s.waitingEventLocked(e.t, plait.WaitingForHandler(h), now)
}

// claimAsideLocked claims, into res, tasks set aside on q for the handlers
// listed (all of them for a claim that runs any handler), up to limit in
// all.
func (s *Store) claimAsideLocked(q *queue, params *plait.TaskClaimParams, res *plait.TaskClaimResult, now, until time.Time) {
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

// waitingFor is the task's [plait.TaskInstance.WaitingFor].
func (t *task) waitingFor() string {
	if t.status != plait.TaskReady {
		return ""
	}
	if t.asideFor != "" {
		return plait.WaitingForHandler(t.asideFor)
	}
	if t.limitedBy != "" {
		return plait.WaitingForLimit(t.limitedBy)
	}
	return plait.WaitingForCapability(t.route)
}
