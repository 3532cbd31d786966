// Package cmdtask is a plait handler that runs programs: a DAG of existing
// scripts and tools without a Go handler for each. Nothing runs a command
// unless the host registers the handler, and then only the programs it
// allows:
//
//	h, err := cmdtask.New(cmdtask.Allow("python3", "/opt/jobs/send_email"))
//	s.Handle(cmdtask.HandlerName, h)
//	wf.Task("email", cmdtask.HandlerName, cmdtask.Spec{Argv: []string{"python3", "send_email.py"}})
//
// A task's payload is a [Spec]. The program runs by argv, never through a
// shell unless the host allowed one ([AllowShell]) and the task asks for
// it. Its standard output, capped ([WithMaxOutput]), is the task's result,
// stored as it is (a plait.Raw); each standard-error line goes to the
// task's log as it comes. A non-zero exit fails the attempt with an
// [*ExitError] (exit code, tail of stderr) and the task's retry policy
// applies; a program outside the allow-list fails the task at once with a
// [*NotAllowedError].
//
// Each command runs in a process group of its own. When the task's context
// ends (its timeout, a lost lease, a cancelled run) the whole group is
// killed, and when the program exits whatever it left running in its group
// is killed too: no process outlives its task. A process that leaves the
// group (setsid, double fork into a new session) escapes this; the
// handler stops waiting for its output pipes after a short grace.
// Process groups need a Unix system; elsewhere [New] answers
// [ErrUnsupported].
package cmdtask

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/ids"
)

// HandlerName is the handler name workflow files give command tasks:
// register the handler under it.
const HandlerName = "command"

// New returns the command handler, configured by opts. Without [Allow] it
// runs nothing: every task fails with a [NotAllowedError].
func New(opts ...Option) (plait.HandlerFunc, error) {
	if !processGroupsSupported {
		return nil, ErrUnsupported
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return cfg.handle, nil
}

// invocation is one command ready to start.
type invocation struct {
	program string // as the task named it, for messages
	path    string // resolved executable
	args    []string
	dir     string
	env     []string
	stdin   []byte
}

func (c *config) handle(ctx context.Context, t *plait.Task) (any, error) {
	var spec Spec
	if err := t.Decode(&spec); err != nil {
		// A decoder may echo the payload (a number, a field name): cut.
		return nil, plait.Permanent(fmt.Errorf("%w: %s", ErrInvalidSpec, ids.Cut(err.Error())))
	}
	if err := spec.Validate(); err != nil {
		return nil, plait.Permanent(err)
	}
	inv, err := c.prepare(&spec)
	if err != nil {
		return nil, plait.Permanent(err)
	}
	log := t.Logger()
	if spec.StdinFrom != "" {
		// A parent that wrote nothing stores no result: its child reads
		// empty input rather than failing.
		b, ok := t.ParentRaw(spec.StdinFrom)
		if !ok {
			log.Info("cmdtask: stdin_from names no parent result; stdin is empty", "parent", spec.StdinFrom)
		}
		inv.stdin = b
	}
	return c.run(ctx, log, inv)
}

// prepare checks the spec against the allow-list and resolves the
// program, the directory and the environment.
func (c *config) prepare(spec *Spec) (*invocation, error) {
	inv := &invocation{stdin: []byte(spec.Stdin)}
	argv := spec.Argv
	if spec.Shell != "" {
		if c.shell == nil {
			return nil, &NotAllowedError{Program: "shell"}
		}
		argv = append(append([]string(nil), c.shell...), spec.Shell)
		inv.program, inv.path = "shell", c.shell[0]
	} else {
		inv.program = argv[0]
		path, err := c.resolve(argv[0])
		if err != nil {
			return nil, err
		}
		inv.path = path
	}
	inv.args = argv
	inv.dir = spec.Dir
	if c.dir != "" && (inv.dir == "" || !filepath.IsAbs(inv.dir)) {
		inv.dir = filepath.Join(c.dir, inv.dir)
	}
	inv.env = append([]string(nil), c.baseEnv...)
	keys := make([]string, 0, len(spec.Env))
	for k := range spec.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a stable order, for a readable /proc/<pid>/environ
	for _, k := range keys {
		inv.env = append(inv.env, k+"="+spec.Env[k])
	}
	return inv, nil
}

// resolve answers the executable for program when the allow-list holds
// it, by name or by resolved absolute path.
func (c *config) resolve(program string) (string, error) {
	if filepath.IsAbs(program) {
		program = filepath.Clean(program)
		if !c.allowed[program] {
			return "", &NotAllowedError{Program: program}
		}
		return program, nil
	}
	if filepath.Base(program) != program {
		// A relative path depends on the working directory: never allowed.
		return "", &NotAllowedError{Program: program}
	}
	path, err := exec.LookPath(program)
	if err != nil {
		if c.allowed[program] {
			return "", fmt.Errorf("cmdtask: %w", err)
		}
		return "", &NotAllowedError{Program: program}
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if !c.allowed[program] && !c.allowed[path] {
		return "", &NotAllowedError{Program: program}
	}
	return path, nil
}
