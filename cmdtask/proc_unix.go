//go:build unix

package cmdtask

import (
	"errors"
	"os/exec"
	"syscall"
)

const processGroupsSupported = true

// startInGroup makes the command the leader of a new process group, so
// killGroup reaches everything it starts.
func startInGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills every process of the group; a group already gone is
// not an error.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// exitStatus reads the exit code, or the signal, from cmd.Wait's error.
func exitStatus(err error) (code int, signal string) {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return -1, ""
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String()
	}
	return ee.ExitCode(), ""
}
