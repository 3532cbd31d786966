// Package faults_test runs workers as subprocesses against a real
// redis-server and kills or pauses them, then audits the end state.
package faults_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store/redisstore"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(envRedis); addr != "" {
		os.Exit(workerMain(addr))
	}
	goleak.VerifyTestMain(m)
}

// failAfter bounds every wait; it is the deadline of a broken test, never a
// stand-in for a condition.
const failAfter = 60 * time.Second

type env struct {
	server *redistest.Server
	prefix string
	s      *plait.Scheduler
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv, err := redistest.Start()
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	client := srv.Client()
	t.Cleanup(func() { _ = client.Close() })
	prefix := "faults-" + strings.ReplaceAll(t.Name(), "/", "-")
	store, err := redisstore.New(context.Background(), client, redisstore.WithPrefix(prefix))
	require.NoError(t, err)
	s, err := plait.New(store, plait.WithRemoteHandlers(), plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	return &env{server: srv, prefix: prefix, s: s}
}

// worker starts a worker subprocess; it is killed at cleanup if still alive.
func (e *env) worker(t *testing.T, name string, work, lease, sweep time.Duration) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		envRedis+"="+e.server.Addr,
		envPrefix+"="+e.prefix,
		envName+"="+name,
		envWorkMS+"="+strconv.Itoa(int(work.Milliseconds())),
		envLease+"="+strconv.Itoa(int(lease.Milliseconds())),
		envSweep+"="+strconv.Itoa(int(sweep.Milliseconds())),
	)
	startProcess(t, cmd)
	return cmd
}

// startProcess starts a subprocess and stops it when the test ends: it is
// resumed (a test may have paused it), asked to stop, and killed if it has
// not after 10 s.
func startProcess(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
}

type auditEntry struct {
	kind, task, worker string
	epoch              int64
	at                 time.Time
}

func (e *env) audit(t *testing.T) []auditEntry {
	t.Helper()
	c := e.server.Client()
	defer c.Close()
	lines, err := c.LRange(context.Background(), auditKey(e.prefix), 0, -1).Result()
	require.NoError(t, err)
	out := make([]auditEntry, 0, len(lines))
	for _, l := range lines {
		f := strings.Split(l, "|")
		require.Len(t, f, 5, "audit line %q", l)
		epoch, _ := strconv.ParseInt(f[2], 10, 64)
		ns, _ := strconv.ParseInt(f[4], 10, 64)
		out = append(out, auditEntry{kind: f[0], task: f[1], epoch: epoch, worker: f[3], at: time.Unix(0, ns)})
	}
	return out
}

// waitAudit re-reads the audit list until cond holds. The workers are other
// processes, so there is no in-process event to wait on.
func (e *env) waitAudit(t *testing.T, what string, cond func([]auditEntry) bool) []auditEntry {
	t.Helper()
	deadline := time.Now().Add(failAfter)
	for {
		entries := e.audit(t)
		if cond(entries) {
			return entries
		}
		require.True(t, time.Now().Before(deadline), "timed out waiting for %s", what)
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *env) wait(t *testing.T, runID string) *plait.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	run, err := e.s.RunWait(ctx, runID)
	require.NoError(t, err)
	return run
}

// layeredDAG has layers×width "step" tasks; each task after the first layer
// depends on two tasks of the layer before.
func layeredDAG(layers, width int) *plait.Workflow {
	wf := plait.NewWorkflow("layers")
	name := func(l, i int) string { return fmt.Sprintf("l%d-t%d", l, i) }
	for l := 0; l < layers; l++ {
		for i := 0; i < width; i++ {
			var opts []plait.TaskOption
			if l > 0 {
				opts = append(opts, plait.After(name(l-1, i), name(l-1, (i+1)%width)), plait.Retry(0))
			}
			wf.Task(name(l, i), "step", nil, opts...)
		}
	}
	return wf
}

func TestSIGKILLedWorkerTasksRunAgainOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const lease, sweep = time.Second, 200 * time.Millisecond
	run, err := e.s.Submit(context.Background(), layeredDAG(10, 20))
	require.NoError(t, err)

	// The victim works slowly, so it is certainly holding tasks when killed.
	victim := e.worker(t, "victim", time.Minute, lease, sweep)
	e.waitAudit(t, "the victim to hold two tasks", func(a []auditEntry) bool {
		n := 0
		for _, x := range a {
			if x.kind == "start" && x.worker == "victim" {
				n++
			}
		}
		return n >= 2
	})
	e.worker(t, "w2", 5*time.Millisecond, lease, sweep)
	e.worker(t, "w3", 5*time.Millisecond, lease, sweep)
	require.NoError(t, victim.Process.Kill())
	killedAt := time.Now()

	final := e.wait(t, run.ID)
	require.Equal(t, plait.RunCompleted, final.Status, "every task must still finish after a worker is killed")
	require.Equal(t, 200, final.Succeeded)

	entries := e.audit(t)
	killed := map[string]bool{}
	for _, x := range entries {
		if x.kind == "start" && x.worker == "victim" {
			killed[x.task] = true
		}
	}
	require.NotEmpty(t, killed)
	ends := map[string]auditEntry{}
	starts := map[string][]auditEntry{}
	for _, x := range entries {
		switch x.kind {
		case "start":
			starts[x.task] = append(starts[x.task], x)
		case "end":
			_, dup := ends[x.task]
			require.False(t, dup, "task %s must finish exactly once", x.task)
			ends[x.task] = x
		}
	}
	index := map[string]int{}
	for i, ti := range final.Tasks {
		index[ti.Name] = i
	}
	spec, err := layeredDAG(10, 20).Spec(plait.JSONCodec{}, plait.Limits{})
	require.NoError(t, err)
	for _, ts := range spec.Tasks {
		ti := final.Tasks[index[ts.Name]]
		require.Equal(t, plait.TaskSucceeded, ti.Status)
		require.Equal(t, 1, ti.Attempt, "a crash must not use up the retry budget")
		succeeded := 0
		for _, a := range ti.Attempts {
			if a.Outcome == "succeeded" {
				succeeded++
			}
		}
		require.Equal(t, 1, succeeded, "task %s must have exactly one successful attempt", ts.Name)
		live := starts[ts.Name]
		if killed[ts.Name] {
			require.Equal(t, 1, ti.Crashes, "a task held by the killed worker must count one crash")
			require.Len(t, live, 2, "a task held by the killed worker must start exactly once more")
			rerun := live[1].at.Sub(killedAt)
			require.Less(t, rerun, lease+sweep+time.Second, "a killed task must re-run within lease + sweep interval")
			require.Greater(t, live[1].epoch, live[0].epoch, "a re-run must carry a higher epoch")
		} else {
			require.Len(t, live, 1, "task %s must be released (and started) exactly once", ts.Name)
		}
		end := ends[ts.Name]
		for _, d := range ts.Deps {
			require.False(t, live[len(live)-1].at.Before(ends[d.Task].at), "task %s must start after its parent %s ended", ts.Name, d.Task)
		}
		require.NotEqual(t, "victim", end.worker)
	}
}

func TestPausedWorkerCannotWriteAfterTakeover(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const lease, sweep = 600 * time.Millisecond, 100 * time.Millisecond
	wf := plait.NewWorkflow("pause").
		Task("a", "step", nil, plait.Retry(0)).
		Task("b", "step", nil, plait.After("a"), plait.Retry(0))
	run, err := e.s.Submit(context.Background(), wf)
	require.NoError(t, err)

	// The paused worker takes "a" and would finish it 3 leases later.
	paused := e.worker(t, "paused", 3*lease, lease, sweep)
	e.waitAudit(t, "the paused worker to start a", func(a []auditEntry) bool {
		return len(a) > 0 && a[0].kind == "start" && a[0].worker == "paused"
	})
	require.NoError(t, paused.Process.Signal(syscall.SIGSTOP))
	e.worker(t, "healthy", time.Millisecond, lease, sweep)
	final := e.wait(t, run.ID)
	require.Equal(t, plait.RunCompleted, final.Status)

	require.NoError(t, paused.Process.Signal(syscall.SIGCONT))
	entries := e.waitAudit(t, "the paused worker to learn it lost its lease", func(a []auditEntry) bool {
		for _, x := range a {
			if x.kind == "lost" && x.worker == "paused" {
				return true
			}
		}
		return false
	})
	after := e.wait(t, run.ID)
	a := after.Task("a")
	require.Equal(t, `"healthy"`, string(a.Result), "a stale worker must not overwrite the result")
	require.Equal(t, 1, a.Crashes)
	require.Equal(t, "crashed", a.Attempts[0].Outcome)
	require.Equal(t, "succeeded", a.Attempts[len(a.Attempts)-1].Outcome)
	bStarts := 0
	for _, x := range entries {
		if x.kind == "start" && x.task == "b" {
			bStarts++
		}
		require.False(t, x.kind == "end" && x.worker == "paused" && x.task == "b", "the stale worker must not run the child")
	}
	require.Equal(t, 1, bStarts, "the child must be released exactly once")
	require.Equal(t, final.Task("b").Epoch, after.Task("b").Epoch, "nothing may change after the stale worker wakes")
}
