package cli

import (
	"time"

	"github.com/plaitdag/plait"
)

// The JSON shapes of -o json use the names of the web view's API
// (docs/inspector.md): camelCase, times in RFC 3339 UTC, durations in ms.

// stamp is a time written as RFC 3339 in UTC with milliseconds; omitzero
// leaves an unknown time out.
type stamp time.Time

func (t stamp) IsZero() bool { return time.Time(t).IsZero() }

func (t stamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z07:00") + `"`), nil
}

// UnmarshalJSON reads a stamp back, for the programs (and tests) that
// parse -o json.
func (t *stamp) UnmarshalJSON(b []byte) error {
	var tt time.Time
	if err := tt.UnmarshalJSON(b); err != nil {
		return err
	}
	*t = stamp(tt)
	return nil
}

func span(a, b time.Time) int64 {
	if a.IsZero() || b.IsZero() || b.Before(a) {
		return 0
	}
	return b.Sub(a).Milliseconds()
}

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
	Metadata   map[string]string `json:"metadata,omitempty"`
	Tasks      []taskJSON        `json:"tasks,omitempty"`
}

func runOf(r *plait.Run) runJSON {
	return runJSON{
		ID: r.ID, Key: r.Key, Workflow: r.Workflow, Status: string(r.Status), Tenant: r.Tenant, Service: r.Service,
		Generation: r.Generation, Total: r.Total, Succeeded: r.Succeeded, Failed: r.Failed, Skipped: r.Skipped,
		Cancelled: r.Cancelled, CreatedAt: stamp(r.CreatedAt), StartedAt: stamp(r.StartedAt), EndedAt: stamp(r.EndedAt),
		DurationMs: span(r.StartedAt, r.EndedAt), Metadata: r.Metadata,
	}
}

type depJSON struct {
	Task string `json:"task"`
	On   string `json:"on"`
}

type attemptJSON struct {
	Attempt    int    `json:"attempt"`
	Worker     string `json:"worker,omitempty"`
	Node       string `json:"node,omitempty"`
	QueuedAt   stamp  `json:"queuedAt,omitzero"`
	StartedAt  stamp  `json:"startedAt,omitzero"`
	EndedAt    stamp  `json:"endedAt,omitzero"`
	DurationMs int64  `json:"durationMs"`
	Outcome    string `json:"outcome"`
	Error      string `json:"error,omitempty"`
}

func attemptsOf(as []plait.Attempt) []attemptJSON {
	out := make([]attemptJSON, len(as))
	for i := range as {
		a := &as[i]
		out[i] = attemptJSON{
			Attempt: a.Attempt, Worker: a.Worker, Node: a.Node, QueuedAt: stamp(a.QueuedAt),
			StartedAt: stamp(a.StartedAt), EndedAt: stamp(a.EndedAt), DurationMs: a.Duration.Milliseconds(),
			Outcome: a.Outcome, Error: a.Error,
		}
	}
	return out
}

type taskJSON struct {
	RunID      string        `json:"runId,omitempty"`
	Workflow   string        `json:"workflow,omitempty"`
	Name       string        `json:"name"`
	Handler    string        `json:"handler,omitempty"`
	Queue      string        `json:"queue,omitempty"`
	Status     string        `json:"status"`
	Attempt    int           `json:"attempt"`
	Error      string        `json:"error,omitempty"`
	Worker     string        `json:"worker,omitempty"`
	Node       string        `json:"node,omitempty"`
	StartedAt  stamp         `json:"startedAt,omitzero"`
	EndedAt    stamp         `json:"endedAt,omitzero"`
	DurationMs int64         `json:"durationMs,omitempty"`
	WaitingFor string        `json:"waitingFor,omitempty"`
	Deps       []depJSON     `json:"deps,omitempty"`
	Attempts   []attemptJSON `json:"attempts,omitempty"`
}

func taskOf(t *plait.TaskInstance, spec *plait.TaskSpec) taskJSON {
	out := taskJSON{
		Name: t.Name, Handler: t.Handler, Queue: t.Queue, Status: string(t.Status), Attempt: t.Attempt,
		Error: t.Error, Worker: t.Worker, Node: t.Node, StartedAt: stamp(t.StartedAt), EndedAt: stamp(t.EndedAt),
		DurationMs: span(t.StartedAt, t.EndedAt), WaitingFor: t.WaitingFor, Attempts: attemptsOf(t.Attempts),
	}
	if spec != nil {
		for _, d := range spec.Deps {
			out.Deps = append(out.Deps, depJSON{Task: d.Task, On: d.On.String()})
		}
	}
	return out
}

// page is a list answer: the items and the cursor of the next page.
type page[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"nextCursor,omitempty"`
}
