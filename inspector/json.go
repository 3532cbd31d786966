package inspector

import (
	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/apijson"
)

// The shapes the API shares with the command line's -o json live in
// internal/apijson; the API fills the fields there marked as its own.

// runOf converts r; the detail fields are left out of the runs list.
func runOf(r *plait.Run, detail bool) apijson.Run {
	out := apijson.RunOf(r)
	if detail {
		out.Strategy = string(r.Strategy)
		out.Metadata = r.Metadata
	}
	return out
}

func attemptsOf(as []plait.Attempt) []apijson.Attempt {
	out := make([]apijson.Attempt, len(as))
	for i := range as {
		a := &as[i]
		out[i] = apijson.AttemptOf(a)
		epoch := a.Epoch
		out[i].Epoch = &epoch
		out[i].RetryDelayMs = apijson.Millis(a.RetryDelay)
		out[i].Progress = apijson.ProgressOf(a.Progress)
	}
	return out
}

// taskJSON is a task of a run. Its attempts are always written, [] when
// there are none (null in a task's answer, which lists them beside it).
type taskJSON struct {
	apijson.Task
	Attempts []apijson.Attempt `json:"attempts"`
}

// taskOf converts t; spec, when known, gives its dependencies and join.
func taskOf(t *plait.TaskInstance, spec *plait.TaskSpec) taskJSON {
	out := taskJSON{Task: apijson.TaskOf(t, spec), Attempts: attemptsOf(t.Attempts)}
	out.Crashes = t.Crashes
	out.Progress = apijson.ProgressOf(t.Progress)
	if n := len(t.Attempts); n > 0 {
		out.QueuedAt = apijson.Stamp(t.Attempts[n-1].QueuedAt)
	}
	if spec != nil {
		out.Join = spec.Join.String()
	}
	return out
}
