package cli

import (
	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/apijson"
)

// The JSON shapes of -o json are those of the web view's API
// (internal/apijson, docs/inspector.md), less the fields only the API
// prints.

// runJSON is a run with, in runs show, watch and export, its tasks inline:
// the API answers a run's tasks beside it, the command line's one JSON
// value per run carries them inside.
type runJSON struct {
	apijson.Run
	Tasks []taskJSON `json:"tasks,omitempty"`
}

// runOf converts r with its metadata, which -o json has always printed.
func runOf(r *plait.Run) runJSON {
	out := runJSON{Run: apijson.RunOf(r)}
	out.Metadata = r.Metadata
	return out
}

func attemptsOf(as []plait.Attempt) []apijson.Attempt {
	out := make([]apijson.Attempt, len(as))
	for i := range as {
		out[i] = apijson.AttemptOf(&as[i])
	}
	return out
}

// taskJSON is a task; tasks list names its run and workflow, which the
// API's task is always read beside. Attempts are left out when there are
// none (the API writes []).
type taskJSON struct {
	RunID    string `json:"runId,omitempty"`
	Workflow string `json:"workflow,omitempty"`
	apijson.Task
	Attempts []apijson.Attempt `json:"attempts,omitempty"`
}

func taskOf(t *plait.TaskInstance, spec *plait.TaskSpec) taskJSON {
	return taskJSON{Task: apijson.TaskOf(t, spec), Attempts: attemptsOf(t.Attempts)}
}

// page is a list answer: the items and the cursor of the next page.
type page[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"nextCursor,omitempty"`
}
