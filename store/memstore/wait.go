package memstore

import (
	"context"
	"time"

	"github.com/plaitdag/plait/internal/clock"
	"github.com/plaitdag/plait/store"
)

// ReadyWait returns at once when a task is ready (or due) on params.Queues,
// otherwise when work becomes ready anywhere, params.Timeout passes (zero
// means no timeout) or ctx is done. See [store.Store.ReadyWait].
func (s *Store) ReadyWait(ctx context.Context, params *store.ReadyWaitParams) error {
	names := params.Queues
	if len(names) == 0 {
		names = defaultQueues
	}
	s.mu.Lock()
	if s.hasWorkLocked(names) || s.hasAsideLocked(names, params.Handlers) {
		s.mu.Unlock()
		return nil
	}
	wake := s.wake
	s.waited = true
	s.mu.Unlock()

	var timeout <-chan time.Time
	if params.Timeout > 0 {
		t := clock.Real{}.NewTimer(params.Timeout)
		defer t.Stop()
		timeout = t.C()
	}
	select {
	case <-wake:
	case <-timeout:
	case <-ctx.Done():
	}
	return nil
}

// hasWorkLocked reports whether a claim on names would find a task.
func (s *Store) hasWorkLocked(names []string) bool {
	now := s.now()
	for _, name := range names {
		q := s.queues[name]
		if q == nil {
			continue
		}
		for p := range q.ready {
			if _, ok := q.ready[p].peek(); ok {
				return true
			}
		}
		if d, ok := q.delayed.peek(); ok && !d.due.After(now) {
			return true
		}
	}
	return false
}
