package inspector

import (
	"time"

	"github.com/plaitdag/plait"
)

// stamp is a time as the API writes it: RFC 3339 in UTC with milliseconds.
// Its IsZero makes `omitzero` leave an unknown time out.
type stamp time.Time

func (t stamp) IsZero() bool { return time.Time(t).IsZero() }

func (t stamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z07:00") + `"`), nil
}

// millis is a duration in whole milliseconds.
func millis(d time.Duration) int64 { return d.Milliseconds() }

// span is the milliseconds from a to b, 0 when either is unknown.
func span(a, b time.Time) int64 {
	if a.IsZero() || b.IsZero() || b.Before(a) {
		return 0
	}
	return millis(b.Sub(a))
}

// runJSON is a run as the API answers it; the detail fields are left out
// of the runs list.
type runJSON struct {
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
	CreatedAt  stamp             `json:"createdAt,omitzero"`
	StartedAt  stamp             `json:"startedAt,omitzero"`
	EndedAt    stamp             `json:"endedAt,omitzero"`
	DurationMs int64             `json:"durationMs,omitempty"`
	Strategy   string            `json:"strategy,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
}

func runOf(r *plait.Run, detail bool) runJSON {
	out := runJSON{
		ID: r.ID, Key: r.Key, Workflow: r.Workflow, Status: string(r.Status), Tenant: r.Tenant, Service: r.Service,
		Generation: r.Generation, Total: r.Total, Succeeded: r.Succeeded, Failed: r.Failed, Skipped: r.Skipped,
		Cancelled: r.Cancelled, CreatedAt: stamp(r.CreatedAt), StartedAt: stamp(r.StartedAt), EndedAt: stamp(r.EndedAt),
		DurationMs: span(r.StartedAt, r.EndedAt),
	}
	if detail {
		out.Strategy = string(r.Strategy)
		out.Metadata = r.Metadata
	}
	return out
}

// progressJSON is a task's latest progress report.
type progressJSON struct {
	Value   float64 `json:"value"`
	Note    string  `json:"note,omitempty"`
	Attempt int     `json:"attempt"`
	At      stamp   `json:"at,omitzero"`
}

func progressOf(p *plait.TaskProgress) *progressJSON {
	if p == nil {
		return nil
	}
	return &progressJSON{Value: p.Value, Note: p.Note, Attempt: p.Attempt, At: stamp(p.At)}
}

// attemptJSON is one finished attempt of a task.
type attemptJSON struct {
	Attempt      int           `json:"attempt"`
	Epoch        int64         `json:"epoch"`
	Worker       string        `json:"worker,omitempty"`
	Node         string        `json:"node,omitempty"`
	QueuedAt     stamp         `json:"queuedAt,omitzero"`
	StartedAt    stamp         `json:"startedAt,omitzero"`
	EndedAt      stamp         `json:"endedAt,omitzero"`
	DurationMs   int64         `json:"durationMs"`
	Outcome      string        `json:"outcome"`
	Error        string        `json:"error,omitempty"`
	RetryDelayMs int64         `json:"retryDelayMs,omitempty"`
	Progress     *progressJSON `json:"progress,omitempty"`
}

func attemptsOf(as []plait.Attempt) []attemptJSON {
	out := make([]attemptJSON, len(as))
	for i := range as {
		a := &as[i]
		out[i] = attemptJSON{
			Attempt: a.Attempt, Epoch: a.Epoch, Worker: a.Worker, Node: a.Node, QueuedAt: stamp(a.QueuedAt),
			StartedAt: stamp(a.StartedAt), EndedAt: stamp(a.EndedAt), DurationMs: millis(a.Duration),
			Outcome: a.Outcome, Error: a.Error, RetryDelayMs: millis(a.RetryDelay), Progress: progressOf(a.Progress),
		}
	}
	return out
}

// depJSON is one dependency of a task: the parent and its condition.
type depJSON struct {
	Task string `json:"task"`
	On   string `json:"on"`
}

// taskJSON is a task of a run.
type taskJSON struct {
	Name       string        `json:"name"`
	Handler    string        `json:"handler,omitempty"`
	Queue      string        `json:"queue,omitempty"`
	Status     string        `json:"status"`
	Attempt    int           `json:"attempt"`
	Crashes    int           `json:"crashes,omitempty"`
	Error      string        `json:"error,omitempty"`
	Worker     string        `json:"worker,omitempty"`
	Node       string        `json:"node,omitempty"`
	QueuedAt   stamp         `json:"queuedAt,omitzero"`
	StartedAt  stamp         `json:"startedAt,omitzero"`
	EndedAt    stamp         `json:"endedAt,omitzero"`
	DurationMs int64         `json:"durationMs,omitempty"`
	WaitingFor string        `json:"waitingFor,omitempty"`
	Progress   *progressJSON `json:"progress,omitempty"`
	Deps       []depJSON     `json:"deps,omitempty"`
	Join       string        `json:"join,omitempty"`
	Attempts   []attemptJSON `json:"attempts"`
}

// taskOf converts t; spec, when known, gives its dependencies and join.
func taskOf(t *plait.TaskInstance, spec *plait.TaskSpec) taskJSON {
	out := taskJSON{
		Name: t.Name, Handler: t.Handler, Queue: t.Queue, Status: string(t.Status), Attempt: t.Attempt,
		Crashes: t.Crashes, Error: t.Error, Worker: t.Worker, Node: t.Node, StartedAt: stamp(t.StartedAt),
		EndedAt: stamp(t.EndedAt), DurationMs: span(t.StartedAt, t.EndedAt), WaitingFor: t.WaitingFor,
		Progress: progressOf(t.Progress), Attempts: attemptsOf(t.Attempts),
	}
	if n := len(t.Attempts); n > 0 {
		out.QueuedAt = stamp(t.Attempts[n-1].QueuedAt)
	}
	if spec != nil {
		out.Join = spec.Join.String()
		for _, d := range spec.Deps {
			out.Deps = append(out.Deps, depJSON{Task: d.Task, On: d.On.String()})
		}
	}
	return out
}
