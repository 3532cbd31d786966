// Package apijson holds the JSON shapes of runs, tasks and attempts that
// the inspector's API v1 (docs/inspector.md) and the command line's
// `-o json` both print: camelCase names, times in RFC 3339 UTC with
// milliseconds, durations in whole milliseconds.
//
// The builders fill the fields both print. A few fields are printed by the
// inspector's API only (marked so below, all left out when zero); the
// inspector fills them, the command line leaves them zero so that its
// output stays what it has always been.
package apijson

import (
	"time"

	"github.com/plaitdag/plait"
)

// Stamp is a time written as RFC 3339 in UTC with milliseconds. Its IsZero
// makes `omitzero` leave an unknown time out.
type Stamp time.Time

// IsZero reports whether the time is unknown.
func (t Stamp) IsZero() bool { return time.Time(t).IsZero() }

// MarshalJSON writes the time in UTC with milliseconds.
func (t Stamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z07:00") + `"`), nil
}

// UnmarshalJSON reads a stamp back, for the programs (and tests) that
// parse the answers.
func (t *Stamp) UnmarshalJSON(b []byte) error {
	var tt time.Time
	if err := tt.UnmarshalJSON(b); err != nil {
		return err
	}
	*t = Stamp(tt)
	return nil
}

// Millis is a duration in whole milliseconds.
func Millis(d time.Duration) int64 { return d.Milliseconds() }

// Span is the milliseconds from a to b, 0 when either is unknown.
func Span(a, b time.Time) int64 {
	if a.IsZero() || b.IsZero() || b.Before(a) {
		return 0
	}
	return Millis(b.Sub(a))
}

// Run is a run. Strategy and Metadata are detail fields: the inspector
// fills both in a run's answer and neither in the runs list; the command
// line fills Metadata always and Strategy never.
type Run struct {
	ID         string            `json:"id"`
	Key        string            `json:"key,omitempty"`
	Workflow   string            `json:"workflow"`
	Status     string            `json:"status"`
	Tenant     string            `json:"tenant,omitempty"`
	Service    string            `json:"service,omitempty"`
	Generation int64             `json:"generation"`
	Total      int               `json:"total"`
	Succeeded  int               `json:"succeeded"`
	Failed     int               `json:"failed"`
	Skipped    int               `json:"skipped"`
	Cancelled  int               `json:"cancelled"`
	CreatedAt  Stamp             `json:"createdAt,omitzero"`
	StartedAt  Stamp             `json:"startedAt,omitzero"`
	EndedAt    Stamp             `json:"endedAt,omitzero"`
	DurationMs int64             `json:"durationMs,omitempty"`
	Strategy   string            `json:"strategy,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
}

// RunOf converts r without its detail fields.
func RunOf(r *plait.Run) Run {
	return Run{
		ID: r.ID, Key: r.Key, Workflow: r.Workflow, Status: string(r.Status), Tenant: r.Tenant, Service: r.Service,
		Generation: r.Generation, Total: r.Total, Succeeded: r.Succeeded, Failed: r.Failed, Skipped: r.Skipped,
		Cancelled: r.Cancelled, CreatedAt: Stamp(r.CreatedAt), StartedAt: Stamp(r.StartedAt), EndedAt: Stamp(r.EndedAt),
		DurationMs: Span(r.StartedAt, r.EndedAt),
	}
}

// Progress is a task's latest progress report.
type Progress struct {
	Value   float64 `json:"value"`
	Note    string  `json:"note,omitempty"`
	Attempt int     `json:"attempt"`
	At      Stamp   `json:"at,omitzero"`
}

// ProgressOf converts p; nil stays nil.
func ProgressOf(p *plait.TaskProgress) *Progress {
	if p == nil {
		return nil
	}
	return &Progress{Value: p.Value, Note: p.Note, Attempt: p.Attempt, At: Stamp(p.At)}
}

// Attempt is one finished attempt of a task. Epoch, RetryDelayMs and
// Progress are printed by the inspector's API only. Epoch is a pointer
// because the API prints it even when 0 while the command line has never
// printed it: nil leaves it out.
type Attempt struct {
	Attempt      int       `json:"attempt"`
	Epoch        *int64    `json:"epoch,omitempty"`
	Worker       string    `json:"worker,omitempty"`
	Node         string    `json:"node,omitempty"`
	QueuedAt     Stamp     `json:"queuedAt,omitzero"`
	StartedAt    Stamp     `json:"startedAt,omitzero"`
	EndedAt      Stamp     `json:"endedAt,omitzero"`
	DurationMs   int64     `json:"durationMs"`
	Outcome      string    `json:"outcome"`
	Error        string    `json:"error,omitempty"`
	RetryDelayMs int64     `json:"retryDelayMs,omitempty"`
	Progress     *Progress `json:"progress,omitempty"`
}

// AttemptOf converts a without the fields only the inspector's API prints.
func AttemptOf(a *plait.Attempt) Attempt {
	return Attempt{
		Attempt: a.Attempt, Worker: a.Worker, Node: a.Node, QueuedAt: Stamp(a.QueuedAt),
		StartedAt: Stamp(a.StartedAt), EndedAt: Stamp(a.EndedAt), DurationMs: Millis(a.Duration),
		Outcome: a.Outcome, Error: a.Error,
	}
}

// Dep is one dependency of a task: the parent and its condition.
type Dep struct {
	Task string `json:"task"`
	On   string `json:"on"`
}

// Task is a task of a run, without its attempts: the inspector's API
// prints an empty list of attempts as [] and the command line leaves it
// out, so each adds its own Attempts field after these. Crashes, QueuedAt,
// Progress and Join are printed by the inspector's API only.
type Task struct {
	Name       string    `json:"name"`
	Handler    string    `json:"handler,omitempty"`
	Queue      string    `json:"queue,omitempty"`
	Status     string    `json:"status"`
	Attempt    int       `json:"attempt"`
	Crashes    int       `json:"crashes,omitempty"`
	Error      string    `json:"error,omitempty"`
	Worker     string    `json:"worker,omitempty"`
	Node       string    `json:"node,omitempty"`
	QueuedAt   Stamp     `json:"queuedAt,omitzero"`
	StartedAt  Stamp     `json:"startedAt,omitzero"`
	EndedAt    Stamp     `json:"endedAt,omitzero"`
	DurationMs int64     `json:"durationMs,omitempty"`
	WaitingFor string    `json:"waitingFor,omitempty"`
	Progress   *Progress `json:"progress,omitempty"`
	Deps       []Dep     `json:"deps,omitempty"`
	Join       string    `json:"join,omitempty"`
}

// TaskOf converts t without the fields only the inspector's API prints;
// spec, when known, gives its dependencies.
func TaskOf(t *plait.TaskInstance, spec *plait.TaskSpec) Task {
	out := Task{
		Name: t.Name, Handler: t.Handler, Queue: t.Queue, Status: string(t.Status), Attempt: t.Attempt,
		Error: t.Error, Worker: t.Worker, Node: t.Node, StartedAt: Stamp(t.StartedAt), EndedAt: Stamp(t.EndedAt),
		DurationMs: Span(t.StartedAt, t.EndedAt), WaitingFor: t.WaitingFor,
	}
	if spec != nil {
		for _, d := range spec.Deps {
			out.Deps = append(out.Deps, Dep{Task: d.Task, On: d.On.String()})
		}
	}
	return out
}

// Schedule is a saved schedule. CatchUp, CatchUpWindowMs, Overlap, JitterMs
// and UpdatedAt are printed by the inspector's API only.
type Schedule struct {
	Name            string `json:"name"`
	Spec            string `json:"spec"`
	TimeZone        string `json:"timeZone,omitempty"`
	Paused          bool   `json:"paused"`
	CatchUp         string `json:"catchUp,omitempty"`
	CatchUpWindowMs int64  `json:"catchUpWindowMs,omitempty"`
	Overlap         string `json:"overlap,omitempty"`
	JitterMs        int64  `json:"jitterMs,omitempty"`
	Tenant          string `json:"tenant,omitempty"`
	Service         string `json:"service,omitempty"`
	NextFire        Stamp  `json:"nextFire,omitzero"`
	LastFire        Stamp  `json:"lastFire,omitzero"`
	LastRunID       string `json:"lastRunId,omitempty"`
	LastRunStatus   string `json:"lastRunStatus,omitempty"`
	Version         int64  `json:"version"`
	UpdatedAt       Stamp  `json:"updatedAt,omitzero"`
}

// ScheduleOf converts s without the fields only the inspector's API prints.
func ScheduleOf(s *plait.ScheduleInfo) Schedule {
	return Schedule{Name: s.Name, Spec: s.Spec, TimeZone: s.TimeZone, Paused: s.Paused, Tenant: s.Tenant, Service: s.Service,
		NextFire: Stamp(s.NextFire), LastFire: Stamp(s.LastFire), LastRunID: s.LastRunID,
		LastRunStatus: string(s.LastRunStatus), Version: s.Version}
}
