package cmdtask

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/plaitdag/plait"
)

// pipeGrace is how long the handler waits, after the program and its
// process group are gone, for its output pipes to close. Only a process
// that left the group can hold them open longer; its output is dropped.
const pipeGrace = 2 * time.Second

// run starts inv in a process group of its own and waits for it, killing
// the group when ctx ends, when stdout passes the cap and when the program
// exits.
func (c *config) run(ctx context.Context, log *slog.Logger, inv *invocation) (any, error) {
	var pipes [3][2]*os.File // stdin, stdout, stderr: read end, write end
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(pipes[:])
			return nil, fmt.Errorf("cmdtask: %w", err)
		}
		pipes[i] = [2]*os.File{r, w}
	}
	cmd := &exec.Cmd{Path: inv.path, Args: inv.args, Dir: inv.dir, Env: inv.env}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pipes[0][0], pipes[1][1], pipes[2][1]
	startInGroup(cmd)
	err := cmd.Start()
	// The child holds its own copies; ours of the child's ends must go, or
	// the readers below would never see end of file.
	pipes[0][0].Close()
	pipes[1][1].Close()
	pipes[2][1].Close()
	if err != nil {
		pipes[0][1].Close()
		pipes[1][0].Close()
		pipes[2][0].Close()
		err = fmt.Errorf("cmdtask: start %s: %w", inv.program, err)
		// A missing program or directory, or one the host may not use,
		// stays so; anything else (out of processes, say) may pass.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, plait.Permanent(err)
		}
		return nil, err
	}
	group := cmd.Process.Pid

	var readers sync.WaitGroup
	readers.Add(3)
	go func() {
		defer readers.Done()
		defer pipes[0][1].Close()
		// A program that exits without reading its input ends this write
		// with EPIPE, which is not the task's failure.
		_, _ = pipes[0][1].Write(inv.stdin)
	}()
	var stdout bytes.Buffer
	overCap := make(chan struct{})
	go func() {
		defer readers.Done()
		n, _ := io.Copy(&stdout, io.LimitReader(pipes[1][0], int64(c.maxOutput)+1))
		if n > int64(c.maxOutput) {
			close(overCap)
			stdout.Truncate(c.maxOutput)
			killGroup(group)
			_, _ = io.Copy(io.Discard, pipes[1][0])
		}
	}()
	stderr := newLineLogger(log, c.maxLogLine, c.stderrTail)
	go func() {
		defer readers.Done()
		_, _ = io.Copy(stderr, pipes[2][0])
		stderr.flush()
	}()

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-ctx.Done():
		killGroup(group)
		waitErr = <-exited
	}
	// Whatever the program left running in its group goes with it.
	killGroup(group)
	readersDone := make(chan struct{})
	go func() { readers.Wait(); close(readersDone) }()
	grace := time.NewTimer(pipeGrace)
	select {
	case <-readersDone:
	case <-grace.C:
		pipes[1][0].Close()
		pipes[2][0].Close()
		<-readersDone
	}
	grace.Stop()
	pipes[1][0].Close()
	pipes[2][0].Close()

	select {
	case <-overCap:
		return nil, plait.Permanent(&OutputTooLargeError{Program: inv.program, Limit: c.maxOutput})
	default:
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("cmdtask: %s killed: %w", inv.program, context.Cause(ctx))
	}
	if waitErr != nil {
		code, signal := exitStatus(waitErr)
		return nil, &ExitError{Program: inv.program, Code: code, Signal: signal, StderrTail: stderr.tail()}
	}
	return plait.Raw(stdout.Bytes()), nil
}

func closeAll(pipes [][2]*os.File) {
	for _, p := range pipes {
		for _, f := range p {
			if f != nil {
				f.Close()
			}
		}
	}
}
