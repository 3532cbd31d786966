package cmdtask_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/cmdtask"
)

// failAfter bounds every wait on a condition.
const failAfter = 10 * time.Second

// task builds the Task a handler sees for spec, outside a scheduler.
func task(t *testing.T, spec cmdtask.Spec) *plait.Task {
	t.Helper()
	b, err := json.Marshal(spec)
	require.NoError(t, err)
	return &plait.Task{RunID: "r1", Name: "cmd", Handler: cmdtask.HandlerName, Attempt: 1, Payload: b}
}

func handler(t *testing.T, opts ...cmdtask.Option) plait.HandlerFunc {
	t.Helper()
	h, err := cmdtask.New(opts...)
	require.NoError(t, err)
	return h
}

func TestCommandSuccessReturnsStdout(t *testing.T) {
	t.Parallel()
	h := handler(t, cmdtask.Allow("sh"))
	res, err := h(context.Background(), task(t, cmdtask.Spec{
		Argv: []string{"sh", "-c", `printf '%s|' "$@"; printf "$GREETING"`, "sh", "a b", "c;d"},
		Env:  map[string]string{"GREETING": "hi"},
	}))
	require.NoError(t, err)
	require.Equal(t, plait.Raw("a b|c;d|hi"), res, "arguments must reach the program as given, without a shell splitting them")
}

func TestCommandStdinFromPayload(t *testing.T) {
	t.Parallel()
	h := handler(t, cmdtask.Allow("tr"))
	res, err := h(context.Background(), task(t, cmdtask.Spec{Argv: []string{"tr", "a-z", "A-Z"}, Stdin: "shout"}))
	require.NoError(t, err)
	require.Equal(t, plait.Raw("SHOUT"), res)
}

func TestCommandWorkingDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	h := handler(t, cmdtask.Allow("pwd"), cmdtask.WithDir(dir))
	res, err := h(context.Background(), task(t, cmdtask.Spec{Argv: []string{"pwd"}, Dir: "sub"}))
	require.NoError(t, err)
	got, err := filepath.EvalSymlinks(strings.TrimSpace(string(res.(plait.Raw))))
	require.NoError(t, err)
	want, err := filepath.EvalSymlinks(filepath.Join(dir, "sub"))
	require.NoError(t, err)
	require.Equal(t, want, got, "a relative Dir must be resolved against WithDir")
}

func TestCommandFailureCarriesExitCodeAndStderrTail(t *testing.T) {
	t.Parallel()
	h := handler(t, cmdtask.Allow("sh"), cmdtask.WithStderrTail(10))
	_, err := h(context.Background(), task(t, cmdtask.Spec{
		Argv: []string{"sh", "-c", `echo "an early line that the tail drops" >&2; echo "disk full" >&2; exit 3`},
	}))
	var exit *cmdtask.ExitError
	require.ErrorAs(t, err, &exit)
	require.ErrorIs(t, err, cmdtask.ErrExit)
	require.Equal(t, 3, exit.Code)
	require.Equal(t, "disk full", exit.StderrTail, "the tail must keep the last bytes of stderr")
	require.Contains(t, err.Error(), "exit status 3")
	require.False(t, plait.IsPermanent(err), "a non-zero exit is a failed attempt, retried by policy")
}

func TestCommandOutputOverTheCapFailsPermanently(t *testing.T) {
	t.Parallel()
	h := handler(t, cmdtask.Allow("sh"), cmdtask.WithMaxOutput(10))
	_, err := h(context.Background(), task(t, cmdtask.Spec{Argv: []string{"sh", "-c", `while :; do echo 0123456789; done`}}))
	var big *cmdtask.OutputTooLargeError
	require.ErrorAs(t, err, &big, "a program that never stops writing must be killed at the cap")
	require.Equal(t, 10, big.Limit, "the error must report the cap")
	require.True(t, plait.IsPermanent(err))

	res, err := h(context.Background(), task(t, cmdtask.Spec{Argv: []string{"sh", "-c", `printf 0123456789`}}))
	require.NoError(t, err, "output of exactly the cap is within it")
	require.Equal(t, plait.Raw("0123456789"), res)
}

func TestCommandAllowList(t *testing.T) {
	t.Parallel()
	sh, err := filepathLookPath("sh")
	require.NoError(t, err)
	cases := []struct {
		name string
		opts []cmdtask.Option
		spec cmdtask.Spec
	}{
		{"no allow-list runs nothing", nil, cmdtask.Spec{Argv: []string{"sh", "-c", "true"}}},
		{"a program not listed", []cmdtask.Option{cmdtask.Allow("echo")}, cmdtask.Spec{Argv: []string{"sh", "-c", "true"}}},
		{"an absolute path not listed", []cmdtask.Option{cmdtask.Allow("echo")}, cmdtask.Spec{Argv: []string{sh, "-c", "true"}}},
		{"a relative path", []cmdtask.Option{cmdtask.Allow("sh")}, cmdtask.Spec{Argv: []string{"./sh", "-c", "true"}}},
		{"a shell the host did not allow", []cmdtask.Option{cmdtask.Allow("sh")}, cmdtask.Spec{Shell: "true"}},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := handler(t, c.opts...)(context.Background(), task(t, c.spec))
			var na *cmdtask.NotAllowedError
			require.ErrorAs(t, err, &na)
			require.ErrorIs(t, err, cmdtask.ErrNotAllowed)
			require.True(t, plait.IsPermanent(err), "a refused program must fail the task without retrying")
		})
	}
	// Listing the resolved path allows the bare name that resolves to it.
	_, err = handler(t, cmdtask.Allow(sh))(context.Background(), task(t, cmdtask.Spec{Argv: []string{"sh", "-c", "true"}}))
	require.NoError(t, err)
}

func TestCommandShellWhenAllowed(t *testing.T) {
	t.Parallel()
	h := handler(t, cmdtask.AllowShell())
	res, err := h(context.Background(), task(t, cmdtask.Spec{Shell: "echo $((40 + 2))"}))
	require.NoError(t, err)
	require.Equal(t, plait.Raw("42\n"), res)
}

func TestCommandInvalidSpecFailsPermanently(t *testing.T) {
	t.Parallel()
	h := handler(t, cmdtask.Allow("sh"))
	_, err := h(context.Background(), task(t, cmdtask.Spec{}))
	require.ErrorIs(t, err, cmdtask.ErrInvalidSpec)
	require.True(t, plait.IsPermanent(err))
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	for _, o := range []cmdtask.Option{cmdtask.Allow("bin/sh"), cmdtask.Allow(""), cmdtask.WithMaxOutput(0), cmdtask.WithStderrTail(-1), cmdtask.AllowShell("sh"), cmdtask.WithBaseEnv([]string{"NOEQUALS"}), nil} {
		_, err := cmdtask.New(o)
		require.Error(t, err)
	}
}

// readPID waits until path holds a whole line and returns it as a pid.
func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, failAfter, time.Millisecond, "the script must write its grandchild's pid")
	return pid
}

// gone reports whether pid no longer runs: no such process, or a zombie
// waiting for init to reap it.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// The state follows the command name, which is in parentheses.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func TestCommandTimeoutKillsGrandchildren(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := handler(t, cmdtask.Allow("sh"))
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	done := make(chan error, 1)
	go func() {
		_, err := h(ctx, task(t, cmdtask.Spec{Argv: []string{"sh", "-c", `sleep 300 & echo $! > "$1"; wait`, "sh", pidFile}}))
		done <- err
	}()
	pid := readPID(t, pidFile)
	require.False(t, gone(pid), "the grandchild must be running before the timeout")
	cancel(plait.ErrTimeout)
	select {
	case err := <-done:
		require.ErrorIs(t, err, plait.ErrTimeout, "the attempt must fail with the context's cause")
	case <-time.After(failAfter):
		t.Fatal("the handler did not return after its context ended")
	}
	require.Eventually(t, func() bool { return gone(pid) }, failAfter, time.Millisecond, "the timeout must kill the grandchild %d", pid)
}

func TestCommandExitKillsOrphans(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := handler(t, cmdtask.Allow("sh"))
	_, err := h(context.Background(), task(t, cmdtask.Spec{Argv: []string{"sh", "-c", `sleep 300 & echo $! > "$1"`, "sh", pidFile}}))
	require.NoError(t, err)
	pid := readPID(t, pidFile)
	require.Eventually(t, func() bool { return gone(pid) }, failAfter, time.Millisecond, "a process the command left behind must not outlive the task")
}

func filepathLookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// TestCommandReturnsWhenAnEscapedProcessHoldsItsOutput starts a process
// that leaves the command's process group (setsid) and keeps stdout open:
// the handler cannot kill it, and must still return after its pipe grace
// instead of waiting for the escaped process.
func TestCommandReturnsWhenAnEscapedProcessHoldsItsOutput(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid on PATH")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := handler(t, cmdtask.Allow("sh"))
	done := make(chan error, 1)
	go func() {
		_, err := h(context.Background(), task(t, cmdtask.Spec{
			Argv: []string{"sh", "-c", `setsid sh -c 'echo $$ > "$1"; exec sleep 300' sh "$1" & while [ ! -s "$1" ]; do :; done`, "sh", pidFile},
		}))
		done <- err
	}()
	pid := readPID(t, pidFile)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	select {
	case err := <-done:
		require.NoError(t, err, "the command itself succeeded")
	case <-time.After(failAfter):
		t.Fatal("the handler waited for a process outside its group")
	}
}

func TestCommandInAMissingDirectoryFailsPermanently(t *testing.T) {
	t.Parallel()
	h := handler(t, cmdtask.Allow("sh"))
	_, err := h(context.Background(), task(t, cmdtask.Spec{Argv: []string{"sh", "-c", "true"}, Dir: filepath.Join(t.TempDir(), "missing")}))
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.True(t, plait.IsPermanent(err), "a directory that does not exist will not exist on the next attempt")
}
