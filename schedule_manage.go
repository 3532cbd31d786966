package plait

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/plaitdag/plait/store"
)

// ScheduleGet returns the schedule named name with its next and last
// instants and its last run's status; ErrNotFound when there is none.
func (s *Scheduler) ScheduleGet(ctx context.Context, name string) (*ScheduleInfo, error) {
	ss, err := s.scheduleStore()
	if err != nil {
		return nil, err
	}
	if err := checkScheduleName(name); err != nil {
		return nil, err
	}
	rec, err := ss.ScheduleGet(ctx, &store.ScheduleGetParams{Name: name})
	if err != nil {
		return nil, err
	}
	return s.scheduleInfo(ctx, rec)
}

// loadSchedule finds the schedule store, checks name and reads the
// schedule's record and definition.
func (s *Scheduler) loadSchedule(ctx context.Context, name string) (store.ScheduleStore, *store.ScheduleRecord, *scheduleDef, error) {
	ss, err := s.scheduleStore()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkScheduleName(name); err != nil {
		return nil, nil, nil, err
	}
	rec, err := ss.ScheduleGet(ctx, &store.ScheduleGetParams{Name: name})
	if err != nil {
		return nil, nil, nil, err
	}
	var d scheduleDef
	if err := json.Unmarshal(rec.Definition, &d); err != nil {
		return nil, nil, nil, fmt.Errorf("plait: schedule %s has an unreadable definition: %w", quote(name), err)
	}
	return ss, rec, &d, nil
}

// ScheduleList returns every schedule, by name. It reads them a page at a
// time; a schedule saved or deleted meanwhile may or may not be listed.
func (s *Scheduler) ScheduleList(ctx context.Context) ([]*ScheduleInfo, error) {
	ss, err := s.scheduleStore()
	if err != nil {
		return nil, err
	}
	var out []*ScheduleInfo
	after := ""
	for {
		res, err := ss.ScheduleList(ctx, &store.ScheduleListParams{After: after, Limit: 500})
		if err != nil {
			return nil, err
		}
		for _, rec := range res.Schedules {
			info, err := s.scheduleInfo(ctx, rec)
			if err != nil {
				return nil, err
			}
			out = append(out, info)
			after = rec.Name
		}
		if !res.More || len(res.Schedules) == 0 {
			return out, nil
		}
	}
}

// ScheduleDelete removes the schedule; ErrNotFound when there is none. The
// runs it fired stay.
func (s *Scheduler) ScheduleDelete(ctx context.Context, name string) error {
	ss, err := s.scheduleStore()
	if err != nil {
		return err
	}
	if err := checkScheduleName(name); err != nil {
		return err
	}
	s.sched.setBuilder(name, nil)
	return ss.ScheduleDelete(ctx, &store.ScheduleDeleteParams{Name: name})
}

// SchedulePause stops the schedule from firing until ScheduleResume; the
// instants passing meanwhile are not fired later.
func (s *Scheduler) SchedulePause(ctx context.Context, name string) (*ScheduleInfo, error) {
	return s.setPaused(ctx, name, true)
}

// ScheduleResume lets a paused schedule fire again, from its first instant
// after now.
func (s *Scheduler) ScheduleResume(ctx context.Context, name string) (*ScheduleInfo, error) {
	return s.setPaused(ctx, name, false)
}

func (s *Scheduler) setPaused(ctx context.Context, name string, paused bool) (*ScheduleInfo, error) {
	ss, rec, d, err := s.loadSchedule(ctx, name)
	if err != nil {
		return nil, err
	}
	if d.Paused == paused {
		return s.scheduleInfo(ctx, rec)
	}
	d.Paused = paused
	next := time.Time{}
	if !paused {
		now := s.cfg.clock.Now()
		spec, err := s.parseDef(name, d, now)
		if err != nil {
			return nil, err
		}
		next = spec.Next(now)
	}
	def, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	rec, err = ss.ScheduleSave(ctx, &store.ScheduleSaveParams{Name: name, Definition: def, NextFire: next})
	if err != nil {
		return nil, err
	}
	return s.scheduleInfo(ctx, rec)
}
