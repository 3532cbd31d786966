package plait

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/plaitdag/plait/internal/cronspec"
	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

func (s *Scheduler) scheduleStore() (store.ScheduleStore, error) {
	return capability[store.ScheduleStore](s.store, "ScheduleStore")
}

// checkScheduleName returns a *ScheduleError for a name that is too long
// or breaks the id rules. The length comes first: a schedule name's limit,
// ScheduleNameMax, is below the id rules' own.
func checkScheduleName(name string) error {
	if len(name) > ScheduleNameMax {
		return &ScheduleError{Schedule: name, Field: "Name", Err: fmt.Errorf("%w: is longer than %d bytes", ErrInvalidID, ScheduleNameMax)}
	}
	if err := ids.Check(name); err != nil {
		return &ScheduleError{Schedule: name, Field: "Name", Err: fmt.Errorf("%w: %v", ErrInvalidID, err)}
	}
	return nil
}

// parseDef parses a definition's spec at now.
func (s *Scheduler) parseDef(name string, d *scheduleDef, now time.Time) (*cronspec.Spec, error) {
	spec, err := cronspec.Parse(d.Spec, d.Zone, now)
	if err != nil {
		field := "Spec"
		if errors.Is(err, cronspec.ErrZone) {
			field = "TimeZone"
		}
		return nil, &ScheduleError{Schedule: name, Field: field, Err: err}
	}
	return spec, nil
}

// validate turns a Schedule into its definition and parsed spec.
func (s *Scheduler) validate(sc *Schedule, now time.Time) (*scheduleDef, *cronspec.Spec, error) {
	if sc == nil {
		return nil, nil, &ScheduleError{Field: "Schedule", Err: errors.New("is nil")}
	}
	if err := checkScheduleName(sc.Name); err != nil {
		return nil, nil, err
	}
	bad := func(field, reason string) error {
		return &ScheduleError{Schedule: sc.Name, Field: field, Err: errors.New(reason)}
	}
	d := &scheduleDef{
		Spec: sc.Spec, Zone: sc.TimeZone, Paused: sc.Paused, CatchUp: sc.CatchUp, Window: sc.CatchUpWindow,
		Overlap: sc.Overlap, Jitter: sc.Jitter, Tenant: sc.Tenant, Service: sc.Service, Metadata: sc.Metadata,
	}
	if d.Zone == "" {
		d.Zone = "UTC"
	}
	if d.CatchUp == "" {
		d.CatchUp = CatchUpSkip
	}
	if d.Overlap == "" {
		d.Overlap = OverlapAllow
	}
	switch d.CatchUp {
	case CatchUpSkip, CatchUpEach, CatchUpOnce:
	default:
		return nil, nil, bad("CatchUp", "is not skip, each or once")
	}
	switch d.Overlap {
	case OverlapAllow, OverlapSkip, OverlapBuffer, OverlapCancel:
	default:
		return nil, nil, bad("Overlap", "is not allow, skip, buffer or cancel")
	}
	if d.Window < 0 {
		return nil, nil, bad("CatchUpWindow", "is negative")
	}
	if d.Jitter < 0 {
		return nil, nil, bad("Jitter", "is negative")
	}
	for field, v := range map[string]string{"Tenant": d.Tenant, "Service": d.Service} {
		if v != "" && ids.Check(v) != nil {
			return nil, nil, &ScheduleError{Schedule: sc.Name, Field: field, Err: fmt.Errorf("%w: %v", ErrInvalidID, ids.Check(v))}
		}
	}
	spec, err := s.parseDef(sc.Name, d, now)
	if err != nil {
		return nil, nil, err
	}
	if min := s.cfg.sched.minInterval(); spec.Kind() != cronspec.KindOnce {
		if gap := spec.MinGap(now); gap > 0 && gap < min {
			return nil, nil, &ScheduleError{Schedule: sc.Name, Field: "Spec", Err: fmt.Errorf("fires every %v, below the minimum interval %v", gap, min)}
		}
	}
	switch {
	case (sc.Workflow == nil) == (sc.Build == nil):
		return nil, nil, bad("Workflow", "exactly one of Workflow and Build must be set")
	case sc.Workflow != nil:
		ws, err := sc.Workflow.Spec(s.cfg.codec, s.cfg.limits)
		if err != nil {
			return nil, nil, err
		}
		if _, err := s.createParams(sc.Workflow, nil); err != nil {
			return nil, nil, err
		}
		d.Workflow = ws
	}
	return d, spec, nil
}

// ScheduleSave creates the schedule sc.Name or updates it, and answers it
// as stored. Saving a schedule whose spec, time zone and pause are
// unchanged keeps its next instant, so every process can save its
// schedules at start-up without moving them; a changed spec takes effect
// from its first instant after now. Every problem is a [*ScheduleError]
// (or, for the workflow, a [*ValidationError]), found before anything is
// written. It returns an [*UnsupportedError] on a store without
// [ScheduleStore].
func (s *Scheduler) ScheduleSave(ctx context.Context, sc *Schedule) (*ScheduleInfo, error) {
	ss, err := s.scheduleStore()
	if err != nil {
		return nil, err
	}
	now := s.cfg.clock.Now()
	d, spec, err := s.validate(sc, now)
	if err != nil {
		return nil, err
	}
	def, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	next := time.Time{}
	if !d.Paused {
		next = spec.Next(now)
	}
	old, err := ss.ScheduleGet(ctx, &store.ScheduleGetParams{Name: sc.Name})
	switch {
	case err == nil:
		var od scheduleDef
		if json.Unmarshal(old.Definition, &od) == nil && od.Spec == d.Spec && od.Zone == d.Zone && od.Paused == d.Paused {
			next = old.NextFire
		}
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	s.sched.setBuilder(sc.Name, sc.Build)
	rec, err := ss.ScheduleSave(ctx, &store.ScheduleSaveParams{Name: sc.Name, Definition: def, NextFire: next})
	if err != nil {
		return nil, err
	}
	return s.scheduleInfo(ctx, rec)
}

// scheduleInfo decodes a record and reads its last run's status.
func (s *Scheduler) scheduleInfo(ctx context.Context, rec *store.ScheduleRecord) (*ScheduleInfo, error) {
	var d scheduleDef
	if err := json.Unmarshal(rec.Definition, &d); err != nil {
		return nil, fmt.Errorf("plait: schedule %s has an unreadable definition: %w", quote(rec.Name), err)
	}
	info := &ScheduleInfo{
		Name: rec.Name, Spec: d.Spec, TimeZone: d.Zone, Paused: d.Paused, CatchUp: d.CatchUp, CatchUpWindow: d.Window,
		Overlap: d.Overlap, Jitter: d.Jitter, Tenant: d.Tenant, Service: d.Service, Metadata: d.Metadata,
		NextFire: rec.NextFire, LastFire: rec.LastFire, LastRunID: rec.LastRunID, Version: rec.Version, UpdatedAt: rec.UpdatedAt,
	}
	if rec.LastRunID != "" {
		run, err := s.store.RunGet(ctx, &store.RunGetParams{ID: rec.LastRunID})
		switch {
		case err == nil:
			info.LastRunStatus = run.Status
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
	}
	return info, nil
}
