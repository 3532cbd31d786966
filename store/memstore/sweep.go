package memstore

import (
	"context"
	"fmt"

	"github.com/plaitdag/plait/store"
)

// deadError is the error recorded on a task that lost too many leases.
const deadError = "lease lost too many times"

// LeaseSweep recovers up to params.Limit running tasks whose lease deadline
// has passed, earliest deadline first. See [store.Store.LeaseSweep].
func (s *Store) LeaseSweep(ctx context.Context, params *store.LeaseSweepParams) (*store.LeaseSweepResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if params.Limit < 1 || params.CrashLimit < 0 {
		return nil, fmt.Errorf("memstore: sweep needs a limit >= 1 and a crash limit >= 0: %w", store.ErrInvalidArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	res := &store.LeaseSweepResult{}
	for n := 0; ; n++ {
		if len(s.leases) == 0 || !s.leases[0].leaseUntil.Before(now) {
			break
		}
		if n == params.Limit {
			res.More = true
			break
		}
		t := s.leases[0]
		s.unholdLocked(t)
		r := t.run
		lease := store.Lease{RunID: r.rec.ID, Task: t.inst.Name, Epoch: t.epoch}
		t.inst.Crashes++
		t.record(now, "crashed", "", 0)
		t.epoch++
		var err error
		if t.inst.Crashes > params.CrashLimit {
			t.inst.Error = deadError
			res.Dead = append(res.Dead, lease)
			err = s.failLocked(t, store.TaskDead, now)
		} else {
			res.Requeued = append(res.Requeued, lease)
			err = s.requeueLocked(t, now)
		}
		if err == nil {
			err = s.finishRunLocked(r, now)
		}
		if err != nil {
			res.Corrupt = append(res.Corrupt, err.Error())
		}
	}
	return res, nil
}
