package memstore

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// LeaseExtend moves the deadlines of held leases to now plus
// params.Duration. See [store.Store.LeaseExtend].
func (s *Store) LeaseExtend(ctx context.Context, params *store.LeaseExtendParams) ([]store.LeaseExtendResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if params.Duration <= 0 {
		return nil, fmt.Errorf("memstore: lease extend needs a positive duration: %w", store.ErrInvalidArgument)
	}
	out := make([]store.LeaseExtendResult, len(params.Leases))
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	until := now.Add(ceilDur(params.Duration))
	for i, l := range params.Leases {
		t, err := s.leasedLocked(l)
		if err != nil {
			out[i].Err = err
			continue
		}
		s.holdLocked(t, until)
		out[i].Until = until
	}
	return out, nil
}

// leasedLocked returns the running task the lease still holds, or
// ErrNotFound (no such run or task) or ErrStaleEpoch.
func (s *Store) leasedLocked(l store.Lease) (*task, error) {
	if t := s.held.find(l); t != nil {
		return t, nil
	}
	r, err := s.liveRunLocked(l.RunID)
	if err != nil {
		return nil, err
	}
	i, ok := r.find(l.Task)
	if !ok {
		return nil, fmt.Errorf("memstore: run %s has no task %s: %w", ids.Quote(l.RunID), ids.Quote(l.Task), store.ErrNotFound)
	}
	t := &r.tasks[i]
	if t.status != store.TaskRunning || t.epoch != l.Epoch {
		return nil, store.ErrStaleEpoch
	}
	return t, nil
}
