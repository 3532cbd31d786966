package plait

import (
	"github.com/plaitdag/plait/internal/worker"
	"github.com/plaitdag/plait/store"
)

// HoldMax lets the tests wait exactly as long as a task claimed ahead may.
const HoldMax = worker.HoldMax

// ShutdownWriteWindow lets the tests bound how long a stopping Run may
// take.
const ShutdownWriteWindow = worker.ShutdownWriteWindow

// ApplySubmit applies a submit option to params, as Submit does.
func ApplySubmit(o SubmitOption, p *store.RunCreateParams) { o.applySubmit(p) }
