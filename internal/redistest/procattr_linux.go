package redistest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the server die with the test process, so a test
// binary that is killed (a timeout, an interrupted run) leaves no server
// behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
