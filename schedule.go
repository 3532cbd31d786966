package plait

import (
	"errors"
	"sync"
	"time"

	"github.com/plaitdag/plait/internal/cronspec"
	"github.com/plaitdag/plait/internal/maintenance"
)

// Schedules
//
// A schedule submits a workflow at each instant of its spec, in every
// process that shares the store exactly once per instant. Schedules live in
// the store ([ScheduleStore]); one process at a time, the leader, fires
// them from inside [Scheduler.Run]. See Schedule for the spec forms and the
// policies, and docs/schedules.md for the guarantees.

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
	// TimeZone is an IANA zone name such as "Europe/Paris"; empty ("")
	// means UTC. A name of spaces only, such as "   ", or with spaces
	// around it is refused, not read as UTC. "Local" is refused: every
	// process must read the same instants.
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
	lead *maintenance.Leader
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

// Schedule option defaults and bounds.
const (
	// ScheduleTickDefault is how often the leader looks for due schedules
	// when none is due sooner, and how often the other processes try for
	// the leader lease.
	ScheduleTickDefault = time.Second
	// LeaderLeaseDefault is how long the leader lease lasts without a
	// renewal: after a leader dies, another process fires in its place
	// within about this long.
	LeaderLeaseDefault = 10 * time.Second
	// ScheduleMinIntervalDefault is the shortest gap between two instants
	// of a schedule that ScheduleSave accepts.
	ScheduleMinIntervalDefault = time.Second
)

// scheduleConfig holds the schedule options; zero fields take defaults.
type scheduleConfig struct {
	tick   time.Duration
	lease  time.Duration
	minGap time.Duration
	off    bool
}

func (c scheduleConfig) tickOrDefault() time.Duration {
	if c.tick == 0 {
		return ScheduleTickDefault
	}
	return c.tick
}

func (c scheduleConfig) leaseOrDefault() time.Duration {
	if c.lease == 0 {
		return LeaderLeaseDefault
	}
	return c.lease
}

func (c scheduleConfig) minInterval() time.Duration {
	if c.minGap == 0 {
		return ScheduleMinIntervalDefault
	}
	return c.minGap
}

// WithScheduleTick sets how often the schedule leader looks for due
// schedules when none is due sooner (it wakes for the earliest next
// instant it knows of), and how often a process that is not the leader
// tries for the lease. Defaults to ScheduleTickDefault. Below IntervalMin
// is an error.
func WithScheduleTick(d time.Duration) Option {
	return func(c *config) {
		if d < IntervalMin {
			c.reject("WithScheduleTick", d.String(), "must be at least IntervalMin ("+IntervalMin.String()+")")
			return
		}
		c.sched.tick = d
	}
}

// WithLeaderLease sets how long the schedule leader's lease lasts without
// a renewal. The leader renews it every tick and stops firing on its own
// clock once four fifths of it have passed since its last renewal was
// sent, so it has given up before the lease can expire and another process
// take over. Defaults to LeaderLeaseDefault. Below LeaseDurationMin is an
// error.
func WithLeaderLease(d time.Duration) Option {
	return func(c *config) {
		if d < LeaseDurationMin {
			c.reject("WithLeaderLease", d.String(), "must be at least LeaseDurationMin ("+LeaseDurationMin.String()+")")
			return
		}
		c.sched.lease = d
	}
}

// WithScheduleMinInterval sets the shortest gap between two instants of a
// schedule that ScheduleSave accepts. Defaults to
// ScheduleMinIntervalDefault. Zero and negative are errors.
func WithScheduleMinInterval(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.reject("WithScheduleMinInterval", d.String(), "must be positive")
			return
		}
		c.sched.minGap = d
	}
}

// WithoutScheduleLeader keeps Run from leading schedules: this process
// works on tasks and never fires a schedule. Its schedule methods still
// work.
func WithoutScheduleLeader() Option { return func(c *config) { c.sched.off = true } }
