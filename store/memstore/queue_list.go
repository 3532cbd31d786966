package memstore

import (
	"context"
	"maps"
	"time"

	"github.com/plaitdag/plait/store"
)

// QueueList answers one page of the queues the store knows; see
// [store.QueueLister]. The registry is the map of queues itself: a queue
// enters it with its first task and stays. The counts walk the page's
// queues and the running tasks, so they are exact and cost time in
// proportion to the tasks queued and running; OldestReadyAt reads the
// same heads a Redis store reads (the live ones of the first [store.QueueOldestScan]
// entries of each list), so both stores answer alike.
func (s *Store) QueueList(ctx context.Context, params *store.QueueListParams) (*store.QueueListResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	names, next := params.Page(maps.Keys(s.queues))
	res := &store.QueueListResult{NextCursor: next}
	if len(names) == 0 {
		return res, nil
	}
	running := make(map[string]int, len(names))
	for i, t := range s.leases {
		if i == store.QueueRunningScan {
			res.RunningCapped = true
			break
		}
		running[t.route]++
	}
	now := s.now()
	res.Queues = make([]store.QueueInfo, len(names))
	for i, name := range names {
		res.Queues[i] = s.queueInfoLocked(name, s.queues[name], running[name], now)
	}
	return res, nil
}

// queueInfoLocked counts queue q, kept under name.
func (s *Store) queueInfoLocked(name string, q *queue, running int, now time.Time) store.QueueInfo {
	qi := store.QueueInfo{Name: name, Running: running}
	qi.Queue, qi.Requires, _ = store.SplitRoutedQueue(name)
	qi.Paused = s.nodes.paused[qi.Queue]
	var oldest time.Time
	older := func(at time.Time) {
		if oldest.IsZero() || at.Before(oldest) {
			oldest = at
		}
	}
	counts := [numPriorities]*int{&qi.Urgent, &qi.High, &qi.Normal, &qi.Low}
	for p := range q.ready {
		f := &q.ready[p]
		for j, e := range f.items[f.head:] {
			if !e.live() {
				continue
			}
			*counts[p]++
			if j < store.QueueOldestScan {
				older(e.t.queuedAt)
			}
		}
		qi.Ready += *counts[p]
	}
	for _, f := range q.aside {
		for _, e := range f.items[f.head:] {
			if e.live() {
				qi.SetAside++
			}
		}
	}
	if len(qi.Requires) == 0 {
		if l := s.limits[store.QueueLimitKey(name)]; l != nil {
			for _, e := range l.waiting.items[l.waiting.head:] {
				if e.live() && e.t.limitedBy == store.QueueLimitKey(name) {
					qi.Limited++
				}
			}
		}
	}
	for _, d := range q.delayed {
		if !d.live() {
			continue
		}
		qi.Delayed++
		if !d.due.After(now) {
			older(d.due)
		}
	}
	qi.OldestReadyAt = oldest
	return qi
}

var _ store.QueueLister = (*Store)(nil)
