package cmdtask

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
)

// Option configures the handler [New] returns.
type Option func(*config) error

// Defaults of the handler's options.
const (
	// MaxOutputDefault caps standard output, the task's result: 1 MiB.
	MaxOutputDefault = 1 << 20
	// StderrTailDefault is how much of standard error an [ExitError]
	// keeps: 2 KiB.
	StderrTailDefault = 2 << 10
	// MaxLogLineDefault is the longest standard-error line logged whole;
	// a longer one is logged in pieces of this size: 8 KiB.
	MaxLogLineDefault = 8 << 10
)

// ShellDefault is the shell [AllowShell] runs a script with when it is
// given none: the script follows as one more argument.
var ShellDefault = []string{"/bin/sh", "-c"}

// config is what the options set. Its zero value means: no program is
// allowed, no shell, the defaults above.
type config struct {
	// allowed holds program names (looked up in PATH) and absolute paths.
	// Defaults to empty: nothing may run.
	allowed map[string]bool
	// shell is the shell's argv, or nil when scripts are refused.
	// Defaults to nil.
	shell []string
	// dir is the base working directory. Defaults to the process's own.
	dir string
	// baseEnv is every command's environment before the task's Env.
	// Defaults to PATH only, so a host's secrets do not leak into
	// commands by accident.
	baseEnv []string
	// maxOutput caps stdout. Defaults to MaxOutputDefault.
	maxOutput int
	// stderrTail is the kept tail of stderr. Defaults to
	// StderrTailDefault.
	stderrTail int
	// maxLogLine cuts long stderr lines. Defaults to MaxLogLineDefault.
	maxLogLine int
}

// Allow adds programs the handler may run: bare names, looked up in the
// host's PATH when a task runs, or absolute paths. A task's argv[0] must be
// one of them, or resolve to one of the absolute paths. Without Allow no
// program may run.
func Allow(programs ...string) Option {
	return func(c *config) error {
		for _, p := range programs {
			if p == "" || strings.ContainsRune(p, 0) {
				return fmt.Errorf("Allow(%s): not a program name", ids.Quote(p))
			}
			if strings.ContainsRune(p, '/') && !filepath.IsAbs(p) {
				return fmt.Errorf("Allow(%s): a path must be absolute", ids.Quote(p))
			}
			if filepath.IsAbs(p) {
				p = filepath.Clean(p)
			}
			c.allowed[p] = true
		}
		return nil
	}
}

// AllowShell lets tasks run a script (Spec.Shell) with shell, the shell's
// argv before the script; none means [ShellDefault]. Without it a task that
// asks for a shell fails with a [NotAllowedError].
func AllowShell(shell ...string) Option {
	return func(c *config) error {
		if len(shell) == 0 {
			shell = ShellDefault
		}
		if !filepath.IsAbs(shell[0]) {
			return fmt.Errorf("AllowShell(%s): the shell must be an absolute path", ids.Quote(shell[0]))
		}
		c.shell = append([]string(nil), shell...)
		return nil
	}
}

// WithDir sets the base working directory that a task's relative Dir is
// resolved against. Defaults to the process's working directory.
func WithDir(dir string) Option {
	return func(c *config) error {
		if dir == "" {
			return errors.New("WithDir(\"\"): empty directory")
		}
		c.dir = dir
		return nil
	}
}

// WithBaseEnv sets the environment ("KEY=value" entries) every command
// starts from, before the task's Env. Defaults to the host's PATH only;
// pass os.Environ() to hand commands everything the host has.
func WithBaseEnv(env []string) Option {
	return func(c *config) error {
		for _, kv := range env {
			if !strings.Contains(kv, "=") {
				return fmt.Errorf("WithBaseEnv: %s is not KEY=value", ids.Quote(kv))
			}
		}
		c.baseEnv = append([]string(nil), env...)
		return nil
	}
}

// WithMaxOutput caps standard output, the task's result, at n bytes; a
// command that writes more is killed and fails with an
// [OutputTooLargeError]. Defaults to MaxOutputDefault; n must be positive.
func WithMaxOutput(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxOutput(%d): must be positive", n)
		}
		c.maxOutput = n
		return nil
	}
}

// WithStderrTail sets how many bytes of standard error an [ExitError]
// keeps. Defaults to StderrTailDefault; n must be positive.
func WithStderrTail(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("WithStderrTail(%d): must be positive", n)
		}
		c.stderrTail = n
		return nil
	}
}

func newConfig(opts []Option) (*config, error) {
	c := &config{
		allowed:    map[string]bool{},
		baseEnv:    []string{"PATH=" + os.Getenv("PATH")},
		maxOutput:  MaxOutputDefault,
		stderrTail: StderrTailDefault,
		maxLogLine: MaxLogLineDefault,
	}
	var errs []error
	for _, o := range opts {
		if o == nil {
			errs = append(errs, errors.New("nil option"))
			continue
		}
		if err := o(c); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("cmdtask: %w", errors.Join(errs...))
	}
	return c, nil
}
