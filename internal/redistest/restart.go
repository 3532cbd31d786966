package redistest

import (
	"fmt"
	"os/exec"
	"time"
)

// Dir is the server's working directory: its dump and append-only files.
func (s *Server) Dir() string { return s.dir }

// Kill ends the server with SIGKILL, as a crash does: no shutdown, no
// last write to disk. The directory is kept for Restart.
func (s *Server) Kill() error {
	if err := s.cmd.Process.Kill(); err != nil {
		return err
	}
	<-s.done
	// Close waits on done: a closed one answers at once.
	gone := make(chan error)
	close(gone)
	s.done = gone
	return nil
}

// Restart starts the server again, after Kill, with the same arguments on
// the same port and directory, and waits until it answers PING (it may
// take a while to load its files).
func (s *Server) Restart() error {
	cmd := exec.Command(s.bin, s.args...)
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd, s.done = cmd, make(chan error, 1)
	go func() { s.done <- cmd.Wait() }()
	if err := s.waitReady(30 * time.Second); err != nil {
		return fmt.Errorf("redistest: restart: %w", err)
	}
	return nil
}
