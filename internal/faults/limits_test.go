package faults_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

// TestKilledHolderTasksRunFirstUnderTheirLimit runs three worker processes
// (4 handler slots each) on tasks of one key limited to 4 at a time. The
// first process takes the 4 slots and is SIGKILLed while the other two hold
// the remaining tasks back, waiting on the key. The killed tasks keep their
// place: they start again within the lease duration plus the sweep
// interval, ahead of the tasks that waited, instead of after them.
func TestKilledHolderTasksRunFirstUnderTheirLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const (
		lease, sweep = 2 * time.Second, 500 * time.Millisecond
		work         = time.Second
		tasks, slots = 16, 4
		// margin covers the lease extension's phase, the claim after the
		// sweep and the start's audit write.
		margin = 500 * time.Millisecond
	)
	wf := plait.NewWorkflow("limited")
	for i := 0; i < tasks; i++ {
		wf.Task(fmt.Sprintf("t%02d", i), "step", nil, plait.ConcurrencyKey("cust", slots))
	}
	run, err := e.s.Submit(context.Background(), wf)
	require.NoError(t, err)

	holder := e.worker(t, "holder", time.Minute, lease, sweep)
	e.waitAudit(t, "the holder to hold every slot", func(a []auditEntry) bool { return len(a) >= slots })
	e.worker(t, "w2", work, lease, sweep)
	e.worker(t, "w3", work, lease, sweep)
	waitFor(t, "the other tasks to wait on the key", func() bool {
		r, err := e.s.RunGet(context.Background(), run.ID)
		require.NoError(t, err)
		n := 0
		for _, ti := range r.Tasks {
			if ti.WaitingFor == "limit cust" {
				n++
			}
		}
		return n == tasks-slots
	})
	require.NoError(t, holder.Process.Signal(syscall.SIGKILL))
	killedAt := time.Now()

	final := e.wait(t, run.ID)
	require.Equal(t, plait.RunCompleted, final.Status)
	require.Equal(t, tasks, final.Succeeded)

	entries := e.audit(t)
	killed := map[string]bool{}
	rerun := map[string]time.Duration{}
	var firstWaiter time.Duration
	for _, x := range entries {
		switch {
		case x.kind != "start":
		case x.worker == "holder":
			killed[x.task] = true
		case killed[x.task]:
			if _, ok := rerun[x.task]; !ok {
				rerun[x.task] = x.at.Sub(killedAt)
			}
		case firstWaiter == 0:
			firstWaiter = x.at.Sub(killedAt)
		}
	}
	require.Len(t, killed, slots)
	require.Len(t, rerun, slots, "every killed task runs again")
	var last time.Duration
	for _, d := range rerun {
		last = max(last, d)
	}
	t.Logf("kill -> the killed tasks' next start: %v (last of %d); the first task that waited started %v after the kill; lease + sweep = %v",
		last.Round(time.Millisecond), slots, firstWaiter.Round(time.Millisecond), lease+sweep)
	require.Less(t, last, lease+sweep+margin, "the killed tasks must run again within lease + sweep interval")
	require.Greater(t, firstWaiter, last, "the killed tasks start before the tasks that waited on the key")
	for name := range killed {
		ti := final.Task(name)
		require.Equal(t, 1, ti.Crashes, "task %s", name)
		require.Equal(t, 1, ti.Attempt, "a crash does not use up the retry budget")
	}
}
