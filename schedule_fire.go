package plait

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/plaitdag/plait/store"
)

// ScheduleTrigger fires the schedule now, outside its spec, paused or not:
// the run carries the time of the call as its instant. It does not move
// the schedule's next or last instant, and two calls fire two runs unless
// they fall on the same millisecond.
func (s *Scheduler) ScheduleTrigger(ctx context.Context, name string) (*Run, error) {
	_, _, d, err := s.loadSchedule(ctx, name)
	if err != nil {
		return nil, err
	}
	now := s.cfg.clock.Now()
	run, _, err := s.fireInstant(ctx, name, d, now, "t")
	return run, err
}

// ScheduleBackfill fires the schedule once for each of its instants in
// [from, to], oldest first, paused or not, and returns their runs. Each
// instant fires once however many times it is backfilled or fired by the
// leader: a second call answers the runs of the first. The runs are created
// in as few store calls as the store allows (on Redis, one round trip per
// 256); when one cannot be, the runs before it come back with the error,
// and calling again is safe. At most BackfillMax instants; more is a
// [*ScheduleError].
func (s *Scheduler) ScheduleBackfill(ctx context.Context, name string, from, to time.Time) ([]*Run, error) {
	_, _, d, err := s.loadSchedule(ctx, name)
	if err != nil {
		return nil, err
	}
	spec, err := s.parseDef(name, d, from.Add(-time.Nanosecond))
	if err != nil {
		return nil, err
	}
	var instants []time.Time
	for t := spec.Next(from.Add(-time.Nanosecond)); !t.IsZero() && !t.After(to); t = spec.Next(t) {
		if len(instants) == BackfillMax {
			return nil, &ScheduleError{Schedule: name, Field: "backfill range", Err: fmt.Errorf("holds more than %d instants", BackfillMax)}
		}
		instants = append(instants, t)
	}
	params := make([]*store.RunCreateParams, len(instants))
	for i, t := range instants {
		if params[i], err = s.runParams(name, d, t, ""); err != nil {
			return nil, err
		}
	}
	out, err := s.createRuns(ctx, params)
	if err != nil {
		return nil, err
	}
	runs := make([]*Run, 0, len(out))
	for i, o := range out {
		if o.Err != nil {
			return runs, fmt.Errorf("plait: schedule %s: backfill of %v: %w", quote(name), instants[i], o.Err)
		}
		runs = append(runs, o.Result.Run)
	}
	return runs, nil
}

// scheduleKey is the run key of one instant of a schedule: the record that
// makes the instant fire once. kind "" is a spec instant, "t" a trigger.
func scheduleKey(name string, instant time.Time, kind string) string {
	return "plait-sched" + kind + "." + name + "." + strconv.FormatInt(instant.UnixMilli(), 10)
}

// runParams builds the create of one instant's run.
func (s *Scheduler) runParams(name string, d *scheduleDef, instant time.Time, kind string) (*store.RunCreateParams, error) {
	params := &store.RunCreateParams{
		Key:     scheduleKey(name, instant, kind),
		Tenant:  d.Tenant,
		Service: d.Service,
	}
	md := make(map[string]string, len(d.Metadata)+2)
	for k, v := range d.Metadata {
		md[k] = v
	}
	md[MetadataSchedule] = name
	md[MetadataInstant] = instant.UTC().Format(time.RFC3339Nano)
	params.Metadata = md
	if d.Workflow != nil {
		params.Workflow = d.Workflow
		return params, nil
	}
	build := s.sched.builder(name)
	if build == nil {
		return nil, fmt.Errorf("plait: schedule %s: %w", quote(name), ErrNoWorkflow)
	}
	wf, err := build(instant)
	if err != nil {
		return nil, fmt.Errorf("plait: schedule %s: building the workflow of %v: %w", quote(name), instant, err)
	}
	p, err := s.createParams(wf, nil)
	if err != nil {
		return nil, err
	}
	params.Workflow = p.Workflow
	return params, nil
}

// fireInstant creates the run of one instant, or answers the run an
// earlier fire of the same instant created (existing true).
func (s *Scheduler) fireInstant(ctx context.Context, name string, d *scheduleDef, instant time.Time, kind string) (run *Run, existing bool, err error) {
	params, err := s.runParams(name, d, instant, kind)
	if err != nil {
		return nil, false, err
	}
	res, err := s.store.RunCreate(ctx, params)
	if err != nil {
		return nil, false, err
	}
	if !res.Existing {
		s.emit(Event{Type: EventRunSubmitted, RunID: res.Run.ID, RunStatus: res.Run.Status})
	}
	return res.Run, res.Existing, nil
}

// createRuns creates many instants' runs in as few store calls as the
// store allows and answers one outcome per params, in order.
func (s *Scheduler) createRuns(ctx context.Context, params []*store.RunCreateParams) ([]store.RunCreateOutcome, error) {
	start := s.cfg.clock.Now()
	out, err := s.store.RunCreateMany(ctx, params)
	if err == nil && len(out) != len(params) {
		err = fmt.Errorf("plait: store answered %d of %d creates", len(out), len(params))
	}
	s.submittedMany(params, nil, out, err, start)
	if err != nil {
		return nil, err
	}
	for _, o := range out {
		if o.Err == nil && !o.Result.Existing {
			s.emit(Event{Type: EventRunSubmitted, RunID: o.Result.Run.ID, RunStatus: o.Result.Run.Status})
		}
	}
	return out, nil
}
