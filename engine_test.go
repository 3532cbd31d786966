package plait_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	engine "github.com/plaitdag/plait/internal/worker"
)

// The engine reports its events with types of its own, which the
// Scheduler hands to observers as they are: each must be the root
// package's constant of the same name.
func TestEngineEventTypesAreTheSchedulers(t *testing.T) {
	t.Parallel()
	for ev, root := range map[engine.EventType]plait.EventType{
		engine.EventTaskStarted:   plait.EventTaskStarted,
		engine.EventTaskSucceeded: plait.EventTaskSucceeded,
		engine.EventTaskFailed:    plait.EventTaskFailed,
		engine.EventTaskRetrying:  plait.EventTaskRetrying,
		engine.EventTaskReleased:  plait.EventTaskReleased,
		engine.EventTaskLeaseLost: plait.EventTaskLeaseLost,
		engine.EventRunFinished:   plait.EventRunFinished,
		engine.EventLeasesSwept:   plait.EventLeasesSwept,
		engine.EventRunsPruned:    plait.EventRunsPruned,
		engine.EventNodeHeartbeat: plait.EventNodeHeartbeat,
		engine.EventNodeDraining:  plait.EventNodeDraining,
	} {
		require.Equal(t, string(root), string(ev))
	}
}
