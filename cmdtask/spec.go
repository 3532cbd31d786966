package cmdtask

import (
	"errors"
	"fmt"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
)

// Spec is the payload of a command task: what to run and with what. It is
// decoded from the task's payload with the scheduler's codec, so a workflow
// carries it as data.
type Spec struct {
	// Argv is the program and its arguments. The program is run directly,
	// never through a shell: "a;b" is one argument. Either Argv or Shell
	// is set, never both.
	Argv []string `json:"argv,omitempty"`
	// Shell is a script run by the host's shell (see [AllowShell]); a task
	// may use it only when the host allowed a shell.
	Shell string `json:"shell,omitempty"`
	// Dir is the working directory; relative to the handler's [WithDir],
	// which defaults to the process's own.
	Dir string `json:"dir,omitempty"`
	// Env adds to (or overrides) the handler's base environment (see
	// [WithBaseEnv]).
	Env map[string]string `json:"env,omitempty"`
	// Stdin is fed to the program's standard input.
	Stdin string `json:"stdin,omitempty"`
	// StdinFrom names a parent task whose stored result is fed to standard
	// input, as it is stored (a command parent's stdout byte for byte). A
	// parent without a result (one that wrote nothing) gives empty input.
	// It excludes Stdin.
	StdinFrom string `json:"stdin_from,omitempty"`
}

// ErrInvalidSpec is matched by the error a malformed [Spec] gets.
var ErrInvalidSpec = errors.New("cmdtask: invalid command spec")

// Validate reports what makes the spec impossible to run, joined, each
// wrapping [ErrInvalidSpec]. It does not consult any allow-list.
func (s *Spec) Validate() error {
	var errs []error
	bad := func(field, reason string) {
		errs = append(errs, fmt.Errorf("%w: %s: %s", ErrInvalidSpec, field, reason))
	}
	switch {
	case len(s.Argv) == 0 && s.Shell == "":
		bad("argv", "neither argv nor shell is set")
	case len(s.Argv) > 0 && s.Shell != "":
		bad("argv", "argv and shell exclude each other")
	case len(s.Argv) > 0 && s.Argv[0] == "":
		bad("argv", "the program name is empty")
	}
	if s.Stdin != "" && s.StdinFrom != "" {
		bad("stdin_from", "stdin and stdin_from exclude each other")
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			bad("env", "bad variable name "+ids.Quote(k))
		}
	}
	for _, a := range s.Argv {
		if strings.ContainsRune(a, 0) {
			bad("argv", "an argument holds a NUL byte")
			break
		}
	}
	return errors.Join(errs...)
}
