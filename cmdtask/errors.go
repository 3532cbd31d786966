package cmdtask

import (
	"errors"
	"fmt"

	"github.com/plaitdag/plait/internal/ids"
)

// Sentinels matched by this package's typed errors with errors.Is.
var (
	// ErrNotAllowed: the task asked for a program, or a shell, the host
	// did not allow. Such a task fails without retrying.
	ErrNotAllowed = errors.New("cmdtask: program not allowed")
	// ErrExit: the program ended with a non-zero status or a signal.
	ErrExit = errors.New("cmdtask: program failed")
	// ErrOutputTooLarge: the program wrote more to standard output than
	// the cap; it was killed.
	ErrOutputTooLarge = errors.New("cmdtask: output too large")
	// ErrUnsupported: this operating system has no process groups, so the
	// handler cannot promise to kill what a command leaves behind.
	ErrUnsupported = errors.New("cmdtask: unsupported on this operating system")
)

// NotAllowedError says which program a task asked for that the host's
// allow-list (see [Allow], [AllowShell]) does not hold. The handler wraps
// it with plait.Permanent: running it again cannot succeed.
type NotAllowedError struct {
	// Program is argv[0] as the task gave it, or "shell".
	Program string
}

// Error implements error.
func (e *NotAllowedError) Error() string {
	return "cmdtask: program " + ids.Quote(e.Program) + " is not in the allow-list"
}

// Unwrap returns [ErrNotAllowed].
func (e *NotAllowedError) Unwrap() error { return ErrNotAllowed }

// ExitError is a failed run of a program: its exit code (or the signal
// that ended it) and the tail of what it wrote to standard error. The
// attempt fails and is retried by the task's policy.
type ExitError struct {
	// Program is argv[0], or "shell".
	Program string
	// Code is the exit status, or -1 when a signal ended the program.
	Code int
	// Signal names the signal that ended the program, if one did.
	Signal string
	// StderrTail is the last bytes of standard error (see
	// [WithStderrTail]).
	StderrTail string
}

// Error implements error; the stderr tail is included so it lands in the
// task's error record.
func (e *ExitError) Error() string {
	how := fmt.Sprintf("exit status %d", e.Code)
	if e.Signal != "" {
		how = "killed by " + e.Signal
	}
	if e.StderrTail == "" {
		return fmt.Sprintf("cmdtask: %s: %s", e.Program, how)
	}
	return fmt.Sprintf("cmdtask: %s: %s; stderr: %s", e.Program, how, e.StderrTail)
}

// Unwrap returns [ErrExit].
func (e *ExitError) Unwrap() error { return ErrExit }

// OutputTooLargeError reports standard output past the cap; the program
// was killed as soon as it crossed it. The handler wraps it with
// plait.Permanent, since the same command writes as much again.
type OutputTooLargeError struct {
	// Program is argv[0], or "shell".
	Program string
	// Limit is the cap, in bytes (see [WithMaxOutput]).
	Limit int
}

// Error implements error.
func (e *OutputTooLargeError) Error() string {
	return fmt.Sprintf("cmdtask: %s wrote more than %d bytes to stdout (the cap)", e.Program, e.Limit)
}

// Unwrap returns [ErrOutputTooLarge].
func (e *OutputTooLargeError) Unwrap() error { return ErrOutputTooLarge }
