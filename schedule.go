package plait

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/plaitdag/plait/internal/cronspec"
	"github.com/plaitdag/plait/internal/ids"
)

// Schedules
//
// A schedule submits a workflow at each instant of its spec, in every
// process that shares the store exactly once per instant. Schedules live in
// the store ([ScheduleStore]); one process at a time, the leader, fires
// them from inside [Scheduler.Run]. See Schedule for the spec forms and the
// policies, and the README for the guarantees.

// ScheduleNameMax is the longest schedule name, in bytes: the name goes
// into the key of every run it fires, with the instant.
const ScheduleNameMax = 96

// ScheduleSpecMax is the longest spec, in bytes.
const ScheduleSpecMax = cronspec.MaxLen

// Metadata keys every run fired by a schedule carries.
const (
	// MetadataSchedule is the name of the schedule that fired the run.
	MetadataSchedule = "plait.schedule"
	// MetadataInstant is the instant the run was fired for, in RFC 3339
	// with nanoseconds, UTC. A run fired by [Scheduler.ScheduleTrigger]
	// carries the time of the call.
	MetadataInstant = "plait.instant"
)

// CatchUpWindowDefault is how late an instant may be fired when
// Schedule.CatchUpWindow is zero.
const CatchUpWindowDefault = time.Minute

// BackfillMax is the most instants one [Scheduler.ScheduleBackfill] call
// fires.
const BackfillMax = 10000

// catchUpScanMax bounds the instants one leader pass looks at for one
// schedule, so a schedule every second after a month of downtime costs a
// bounded pass.
const catchUpScanMax = 10000

// CatchUpPolicy says what the leader does with instants it reaches late:
// after downtime, or when no process was leader for a while. An instant is
// late once the time since it (plus its jitter) is more than the
// schedule's catch-up window.
type CatchUpPolicy string

// Catch-up policies.
const (
	// CatchUpSkip, the default: of the instants due, only the latest
	// fires, and only when it is within the catch-up window; the others
	// are skipped.
	CatchUpSkip CatchUpPolicy = "skip"
	// CatchUpEach: every due instant within the catch-up window fires
	// once, oldest first; older ones are skipped.
	CatchUpEach CatchUpPolicy = "each"
	// CatchUpOnce: when any instants are due, one run fires for the latest
	// of them, however late, standing for all of them.
	CatchUpOnce CatchUpPolicy = "once"
)

// OverlapPolicy says what the leader does at an instant when the previous
// run of the schedule has not finished.
type OverlapPolicy string

// Overlap policies.
const (
	// OverlapAllow, the default: the new run starts beside the previous.
	OverlapAllow OverlapPolicy = "allow"
	// OverlapSkip: the instant is skipped.
	OverlapSkip OverlapPolicy = "skip"
	// OverlapBuffer: the earliest waiting instant is held and fires as
	// soon as the previous run finishes; instants passing meanwhile are
	// skipped, so at most one run waits.
	OverlapBuffer OverlapPolicy = "buffer"
	// OverlapCancel: the previous run is cancelled and the new one starts.
	OverlapCancel OverlapPolicy = "cancel"
)

// ErrInvalidSchedule is the category of every [*ScheduleError].
var ErrInvalidSchedule = errors.New("plait: invalid schedule")

// ErrNoWorkflow is the cause of a schedule that cannot fire in this
// process: it was saved with a Build function that this process has not
// saved too.
var ErrNoWorkflow = errors.New("plait: schedule has no workflow in this process")

// ScheduleError says why a schedule was refused. It matches
// [ErrInvalidSchedule] and its Err with errors.Is.
type ScheduleError struct {
	// Schedule is the schedule's name, as given.
	Schedule string
	// Field is the field at fault, such as "Spec" or "TimeZone".
	Field string
	// Err is the reason: ErrInvalidID for a name, or the parse reason.
	Err error
}

// Error names the schedule, the field and the reason.
func (e *ScheduleError) Error() string {
	return "plait: schedule " + quote(e.Schedule) + " " + e.Field + ": " + e.Err.Error()
}

// Unwrap returns [ErrInvalidSchedule] and the reason.
func (e *ScheduleError) Unwrap() []error { return []error{ErrInvalidSchedule, e.Err} }

// Schedule is a named schedule as saved with [Scheduler.ScheduleSave].
type Schedule struct {
	// Name identifies the schedule: [A-Za-z0-9._-], at most
	// ScheduleNameMax bytes. Saving a name again updates the schedule.
	Name string
	// Spec is when the schedule fires, in one of three forms:
	//
	//   - a cron expression of five fields (minute hour day month
	//     weekday), or six with a seconds field first, or a descriptor
	//     (@yearly, @monthly, @weekly, @daily, @hourly), read in TimeZone;
	//   - "@every <duration>" such as "@every 5m": the multiples of the
	//     duration since the Unix epoch, so every process computes the
	//     same instants; elapsed time, not affected by DST;
	//   - "@at <time>", one instant, RFC 3339 ("@at 2030-01-02T15:04:05Z"),
	//     or without offset read in TimeZone. An instant already past when
	//     the schedule is first saved never fires (ScheduleTrigger fires a
	//     schedule now).
	//
	// In a time zone with DST, a cron wall-clock time that the spring
	// change skips does not fire that day, and one that the autumn change
	// repeats fires once, on its first pass. A spec that never fires
	// ("0 0 31 2 *"), a gap between instants below the minimum interval
	// (WithScheduleMinInterval) and a spec over ScheduleSpecMax bytes are
	// refused.
	Spec string
	// TimeZone is an IANA zone name such as "Europe/Paris"; empty means
	// UTC. "Local" is refused: every process must read the same instants.
	TimeZone string
	// Workflow is submitted at each instant. It is stored with the
	// schedule, so any process can fire it. Give Workflow or Build.
	Workflow *Workflow
	// Build returns the workflow of one instant, so each run can carry
	// it. It stays in this process: every process that may lead must
	// save the schedule with the same Build (as every process registers
	// its handlers), and a leader without it skips the schedule and logs
	// why.
	Build func(instant time.Time) (*Workflow, error)
	// Tenant, Service and Metadata are given to every run, as the submit
	// options of the same names; MetadataSchedule and MetadataInstant are
	// added.
	Tenant   string
	Service  string
	Metadata map[string]string
	// CatchUp is the catch-up policy; empty means CatchUpSkip.
	CatchUp CatchUpPolicy
	// CatchUpWindow is how late an instant may still fire; zero means
	// CatchUpWindowDefault.
	CatchUpWindow time.Duration
	// Overlap is the overlap policy; empty means OverlapAllow.
	Overlap OverlapPolicy
	// Jitter, when positive, delays each instant's run by a duration in
	// [0, Jitter) drawn from the name and the instant, the same in every
	// process, to spread schedules firing on the same second. The run
	// still carries the instant.
	Jitter time.Duration
	// Paused saves the schedule paused: it fires nothing until resumed.
	Paused bool
}

// ScheduleInfo is a schedule as [Scheduler.ScheduleGet] reads it.
type ScheduleInfo struct {
	Name          string
	Spec          string
	TimeZone      string
	Paused        bool
	CatchUp       CatchUpPolicy
	CatchUpWindow time.Duration
	Overlap       OverlapPolicy
	Jitter        time.Duration
	Tenant        string
	Service       string
	Metadata      map[string]string
	// NextFire is the next instant due, zero when none is (paused, or a
	// one-time schedule that has fired).
	NextFire time.Time
	// LastFire is the last instant fired and LastRunID its run.
	LastFire  time.Time
	LastRunID string
	// LastRunStatus is the status of LastRunID as the call found it;
	// empty when there is no last run or it has expired.
	LastRunStatus RunStatus
	// Version grows with every save.
	Version   int64
	UpdatedAt time.Time
}

// scheduleDef is the definition the store keeps opaque.
type scheduleDef struct {
	Spec     string            `json:"spec"`
	Zone     string            `json:"zone"`
	Paused   bool              `json:"paused,omitempty"`
	CatchUp  CatchUpPolicy     `json:"catchup,omitempty"`
	Window   time.Duration     `json:"window,omitempty"`
	Overlap  OverlapPolicy     `json:"overlap,omitempty"`
	Jitter   time.Duration     `json:"jitter,omitempty"`
	Tenant   string            `json:"tenant,omitempty"`
	Service  string            `json:"service,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
	Workflow *WorkflowSpec     `json:"workflow,omitempty"`
}

// scheduleState is the Scheduler's own schedule state: the Build functions
// saved in this process.
type scheduleState struct {
	mu       sync.Mutex
	builders map[string]func(time.Time) (*Workflow, error)
	// lead is this process's side of the leader lease, made on first use.
	lead *leader
}

func (st *scheduleState) builder(name string) func(time.Time) (*Workflow, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.builders[name]
}

func (st *scheduleState) setBuilder(name string, fn func(time.Time) (*Workflow, error)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if fn == nil {
		delete(st.builders, name)
		return
	}
	if st.builders == nil {
		st.builders = map[string]func(time.Time) (*Workflow, error){}
	}
	st.builders[name] = fn
}

func (s *Scheduler) scheduleStore() (ScheduleStore, error) {
	return capability[ScheduleStore](s.store, "ScheduleStore")
}

// checkScheduleName returns a *ScheduleError for a name that breaks the id
// rules or is too long.
func checkScheduleName(name string) error {
	if err := ids.Check(name); err != nil {
		return &ScheduleError{Schedule: name, Field: "Name", Err: fmt.Errorf("%w: %v", ErrInvalidID, err)}
	}
	if len(name) > ScheduleNameMax {
		return &ScheduleError{Schedule: name, Field: "Name", Err: fmt.Errorf("%w: longer than %d bytes", ErrInvalidID, ScheduleNameMax)}
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
	old, err := ss.ScheduleGet(ctx, &ScheduleGetParams{Name: sc.Name})
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
	rec, err := ss.ScheduleSave(ctx, &ScheduleSaveParams{Name: sc.Name, Definition: def, NextFire: next})
	if err != nil {
		return nil, err
	}
	return s.scheduleInfo(ctx, rec)
}

// scheduleInfo decodes a record and reads its last run's status.
func (s *Scheduler) scheduleInfo(ctx context.Context, rec *ScheduleRecord) (*ScheduleInfo, error) {
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
		run, err := s.store.RunGet(ctx, &RunGetParams{ID: rec.LastRunID})
		switch {
		case err == nil:
			info.LastRunStatus = run.Status
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
	}
	return info, nil
}

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
	rec, err := ss.ScheduleGet(ctx, &ScheduleGetParams{Name: name})
	if err != nil {
		return nil, err
	}
	return s.scheduleInfo(ctx, rec)
}

// loadSchedule finds the schedule store, checks name and reads the
// schedule's record and definition.
func (s *Scheduler) loadSchedule(ctx context.Context, name string) (ScheduleStore, *ScheduleRecord, *scheduleDef, error) {
	ss, err := s.scheduleStore()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkScheduleName(name); err != nil {
		return nil, nil, nil, err
	}
	rec, err := ss.ScheduleGet(ctx, &ScheduleGetParams{Name: name})
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
		res, err := ss.ScheduleList(ctx, &ScheduleListParams{After: after, Limit: 500})
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
	return ss.ScheduleDelete(ctx, &ScheduleDeleteParams{Name: name})
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
	rec, err = ss.ScheduleSave(ctx, &ScheduleSaveParams{Name: name, Definition: def, NextFire: next})
	if err != nil {
		return nil, err
	}
	return s.scheduleInfo(ctx, rec)
}

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
	params := make([]*RunCreateParams, len(instants))
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
func (s *Scheduler) runParams(name string, d *scheduleDef, instant time.Time, kind string) (*RunCreateParams, error) {
	params := &RunCreateParams{
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
func (s *Scheduler) createRuns(ctx context.Context, params []*RunCreateParams) ([]RunCreateOutcome, error) {
	out, err := s.store.RunCreateMany(ctx, params)
	if err != nil {
		return nil, err
	}
	if len(out) != len(params) {
		return nil, fmt.Errorf("plait: store answered %d of %d creates", len(out), len(params))
	}
	for _, o := range out {
		if o.Err == nil && !o.Result.Existing {
			s.emit(Event{Type: EventRunSubmitted, RunID: o.Result.Run.ID, RunStatus: o.Result.Run.Status})
		}
	}
	return out, nil
}
