//go:build !linux

package redistest

import "os/exec"

// dieWithParent has no portable equivalent outside Linux; Close stops the
// server as usual.
func dieWithParent(*exec.Cmd) {}
