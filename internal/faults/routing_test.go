package faults_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

// routedWorker starts a worker subprocess with capabilities caps (comma
// separated, "" for none) and a node TTL of ttl.
func (e *env) routedWorker(t *testing.T, name, caps string, work, ttl time.Duration) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		envRedis+"="+e.server.Addr,
		envPrefix+"="+e.prefix,
		envName+"="+name,
		envWorkMS+"="+strconv.Itoa(int(work.Milliseconds())),
		envLease+"="+strconv.Itoa(int(time.Second.Milliseconds())),
		envSweep+"="+strconv.Itoa(int((200*time.Millisecond).Milliseconds())),
		envCaps+"="+caps,
		envNodeTTL+"="+strconv.Itoa(int(ttl.Milliseconds())),
	)
	startProcess(t, cmd)
	return cmd
}

// nodeNames lists the live nodes' worker names.
func (e *env) nodeNames(t *testing.T) map[string]bool {
	t.Helper()
	nodes, err := e.s.NodeList(context.Background())
	require.NoError(t, err)
	out := map[string]bool{}
	for _, n := range nodes {
		out[n.Name] = true
	}
	return out
}

// waitFor re-checks cond until it holds; the workers are other processes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(failAfter)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "timed out waiting for %s", what)
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGPUTasksWaitForAGPUProcess runs a process with capability gpu and
// one without: gpu tasks run only on the first. It is SIGKILLed holding
// gpu tasks: its node drops out within its TTL, its gpu tasks come back
// when their leases expire and wait, visibly, while only the process
// without gpu lives; a new gpu process then runs them, each to one
// success.
func TestGPUTasksWaitForAGPUProcess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const ttl = 900 * time.Millisecond
	e.routedWorker(t, "cpu", "", 10*time.Millisecond, ttl)
	gpu1 := e.routedWorker(t, "gpu1", "gpu", 2*time.Second, ttl)
	waitFor(t, "both nodes", func() bool { n := e.nodeNames(t); return n["cpu"] && n["gpu1"] })

	wf := plait.NewWorkflow("render")
	for i := 0; i < 4; i++ {
		wf.Task(fmt.Sprintf("gpu-%d", i), "step", nil, plait.Requires("gpu"))
		wf.Task(fmt.Sprintf("cpu-%d", i), "step", nil)
	}
	run, err := e.s.Submit(context.Background(), wf)
	require.NoError(t, err)
	e.waitAudit(t, "gpu1 holding gpu tasks", func(es []auditEntry) bool {
		for _, a := range es {
			if a.kind == "start" && a.worker == "gpu1" && strings.HasPrefix(a.task, "gpu-") {
				return true
			}
		}
		return false
	})
	require.NoError(t, gpu1.Process.Signal(syscall.SIGKILL))
	killed := time.Now()
	waitFor(t, "gpu1's node to expire", func() bool { return !e.nodeNames(t)["gpu1"] })
	t.Logf("gpu1's node dropped out %s after SIGKILL (TTL %s)", time.Since(killed).Round(10*time.Millisecond), ttl)

	// The cpu process sweeps gpu1's expired leases; the gpu tasks wait.
	waitFor(t, "the gpu tasks to wait for a gpu node", func() bool {
		got, err := e.s.RunGet(context.Background(), run.ID)
		require.NoError(t, err)
		for _, ti := range got.Tasks {
			if strings.HasPrefix(ti.Name, "gpu-") && ti.Status != plait.TaskReady {
				return false
			}
		}
		return true
	})
	got, err := e.s.RunGet(context.Background(), run.ID)
	require.NoError(t, err)
	for _, ti := range got.Tasks {
		if strings.HasPrefix(ti.Name, "gpu-") {
			require.Equal(t, "capability gpu", ti.WaitingFor, ti.Name)
		}
	}

	e.routedWorker(t, "gpu2", "gpu", 10*time.Millisecond, ttl)
	final := e.wait(t, run.ID)
	require.Equal(t, plait.RunCompleted, final.Status)
	for _, ti := range final.Tasks {
		succeeded := 0
		for _, a := range ti.Attempts {
			if a.Outcome == "succeeded" {
				succeeded++
			}
		}
		require.Equal(t, 1, succeeded, "task %s completes once", ti.Name)
		if strings.HasPrefix(ti.Name, "gpu-") {
			require.Equal(t, "gpu2", ti.Worker, "task %s ran on the new gpu process", ti.Name)
		}
	}
	for _, a := range e.audit(t) {
		if strings.HasPrefix(a.task, "gpu-") {
			require.NotEqual(t, "cpu", a.worker, "no gpu task ever started on the process without gpu")
		}
	}
}
