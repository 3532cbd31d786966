package memstore

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// schedules is the store's side of [store.ScheduleStore]: the records by
// name and the one leader lease. The leader lists due schedules by scanning
// them all; a memory store holds few enough for that to be cheap.
type schedules struct {
	byName map[string]*store.ScheduleRecord
	lease  store.LeaderLease
	// epochs is the last epoch handed out; it only grows.
	epochs int64
}

func checkName(name string) error {
	if err := ids.Check(name); err != nil {
		return fmt.Errorf("memstore: schedule name %s %v: %w", ids.Quote(name), err, store.ErrInvalidArgument)
	}
	return nil
}

// copyRecord returns a copy the caller may keep.
func copyRecord(r *store.ScheduleRecord) *store.ScheduleRecord {
	c := *r
	c.Definition = append([]byte(nil), r.Definition...)
	return &c
}

// ScheduleSave creates or updates a schedule. See
// [store.ScheduleStore.ScheduleSave].
func (s *Store) ScheduleSave(ctx context.Context, params *store.ScheduleSaveParams) (*store.ScheduleRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkName(params.Name); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sched.byName == nil {
		s.sched.byName = map[string]*store.ScheduleRecord{}
	}
	r := s.sched.byName[params.Name]
	if r == nil {
		r = &store.ScheduleRecord{Name: params.Name}
		s.sched.byName[params.Name] = r
	}
	r.Definition = append([]byte(nil), params.Definition...)
	r.NextFire = ms(params.NextFire)
	r.Version++
	r.UpdatedAt = s.now()
	return copyRecord(r), nil
}

// ScheduleGet returns one schedule. See [store.ScheduleStore.ScheduleGet].
func (s *Store) ScheduleGet(_ context.Context, params *store.ScheduleGetParams) (*store.ScheduleRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.sched.byName[params.Name]
	if r == nil {
		return nil, fmt.Errorf("memstore: schedule %s: %w", ids.Quote(params.Name), store.ErrNotFound)
	}
	return copyRecord(r), nil
}

// ScheduleList lists schedules by name or by next instant. See
// [store.ScheduleStore.ScheduleList].
func (s *Store) ScheduleList(_ context.Context, params *store.ScheduleListParams) (*store.ScheduleListResult, error) {
	if params.Limit < 1 {
		return nil, fmt.Errorf("memstore: schedule list limit %d: %w", params.Limit, store.ErrInvalidArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []*store.ScheduleRecord
	due := !params.DueBy.IsZero()
	for _, r := range s.sched.byName {
		switch {
		case due && (r.NextFire.IsZero() || r.NextFire.After(params.DueBy)):
		case !due && r.Name <= params.After:
		default:
			all = append(all, r)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if due && !all[i].NextFire.Equal(all[j].NextFire) {
			return all[i].NextFire.Before(all[j].NextFire)
		}
		return all[i].Name < all[j].Name
	})
	res := &store.ScheduleListResult{}
	if len(all) > params.Limit {
		all, res.More = all[:params.Limit], true
	}
	for _, r := range all {
		res.Schedules = append(res.Schedules, copyRecord(r))
	}
	return res, nil
}

// ScheduleDelete removes a schedule. See [store.ScheduleStore.ScheduleDelete].
func (s *Store) ScheduleDelete(ctx context.Context, params *store.ScheduleDeleteParams) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sched.byName[params.Name] == nil {
		return fmt.Errorf("memstore: schedule %s: %w", ids.Quote(params.Name), store.ErrNotFound)
	}
	delete(s.sched.byName, params.Name)
	return nil
}

// leaseHeldLocked reports whether epoch is the unexpired lease's.
func (s *Store) leaseHeldLocked(epoch int64) bool {
	l := s.sched.lease
	return epoch != 0 && l.Epoch == epoch && s.now().Before(l.Until)
}

// ScheduleRecordFire records a leader's fire, fenced by its epoch. See
// [store.ScheduleStore.ScheduleRecordFire].
func (s *Store) ScheduleRecordFire(ctx context.Context, params *store.ScheduleRecordFireParams) (*store.ScheduleRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.leaseHeldLocked(params.LeaderEpoch) {
		return nil, fmt.Errorf("memstore: leader epoch %d: %w", params.LeaderEpoch, store.ErrStaleEpoch)
	}
	r := s.sched.byName[params.Name]
	if r == nil {
		return nil, fmt.Errorf("memstore: schedule %s: %w", ids.Quote(params.Name), store.ErrNotFound)
	}
	if r.Version == params.Version {
		r.NextFire = ms(params.NextFire)
	}
	if !params.LastFire.IsZero() {
		r.LastFire = ms(params.LastFire)
		r.LastRunID = params.LastRunID
	}
	return copyRecord(r), nil
}

// LeaderAcquire takes or renews the leader lease. See
// [store.ScheduleStore.LeaderAcquire].
func (s *Store) LeaderAcquire(ctx context.Context, params *store.LeaderAcquireParams) (*store.LeaderAcquireResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if params.Holder == "" || params.TTL < time.Millisecond {
		return nil, fmt.Errorf("memstore: leader acquire needs a holder and a TTL of at least 1ms: %w", store.ErrInvalidArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	l := &s.sched.lease
	free := l.Epoch == 0 || !now.Before(l.Until)
	mine := !free && l.Holder == params.Holder
	switch {
	case mine:
	case free:
		s.sched.epochs++
		l.Holder, l.Epoch = params.Holder, s.sched.epochs
	default:
		return &store.LeaderAcquireResult{Lease: *l}, nil
	}
	l.Until = now.Add(ceilDur(params.TTL))
	return &store.LeaderAcquireResult{Acquired: true, Lease: *l}, nil
}

// LeaderRelease gives the lease up. See [store.ScheduleStore.LeaderRelease].
func (s *Store) LeaderRelease(ctx context.Context, params *store.LeaderReleaseParams) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leaseHeldLocked(params.Epoch) && s.sched.lease.Holder == params.Holder {
		s.sched.lease = store.LeaderLease{}
	}
	return nil
}
