//go:build !unix

package cmdtask

import "os/exec"

// Without process groups the handler could not kill what a command leaves
// behind, so New refuses to build it.
const processGroupsSupported = false

func startInGroup(*exec.Cmd) {}

func killGroup(int) {}

func exitStatus(error) (int, string) { return -1, "" }
