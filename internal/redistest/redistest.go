// Package redistest starts throwaway redis-server processes for tests: on a
// free loopback port, in a temporary directory, with persistence off.
package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RequireEnv is the environment variable that turns a missing redis-server
// from a skip into a failure.
const RequireEnv = "PLAIT_REQUIRE_REDIS"

// ErrNotInstalled is returned by Start when redis-server is not on PATH.
var ErrNotInstalled = errors.New("redis-server not found on PATH")

// Server is a running redis-server.
type Server struct {
	Addr string
	cmd  *exec.Cmd
	dir  string
	done chan error
	// bin and args start the server again on the same port and directory
	// (Restart).
	bin  string
	args []string
	// stop makes Close (a kill -9 and the removal of dir) happen once.
	stop sync.Once
}

// Start launches redis-server with extra arguments appended to the defaults
// and waits until it answers PING.
func Start(extra ...string) (*Server, error) {
	dir, err := os.MkdirTemp("", "plait-redis-")
	if err != nil {
		return nil, err
	}
	return launch(dir, func(port int) []string {
		return append([]string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir,
			"--logfile", filepath.Join(dir, "redis.log"),
		}, extra...)
	})
}

// launch starts redis-server with the arguments args gives for a free
// port, in dir, which Close removes (so does a failed launch), and waits
// until it answers PING.
func launch(dir string, args func(port int) []string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		os.RemoveAll(dir)
		return nil, ErrNotInstalled
	}
	var lastErr error
	for try := 0; try < 5; try++ {
		port, err := freePort()
		if err != nil {
			lastErr = err
			continue
		}
		argv := args(port)
		cmd := exec.Command(bin, argv...)
		dieWithParent(cmd)
		if err := cmd.Start(); err != nil {
			lastErr = err
			continue
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, dir: dir, done: make(chan error, 1), bin: bin, args: argv}
		go func() { s.done <- cmd.Wait() }()
		if err := s.waitReady(10 * time.Second); err != nil {
			lastErr = err
			_ = cmd.Process.Kill()
			<-s.done
			continue
		}
		return s, nil
	}
	os.RemoveAll(dir)
	return nil, fmt.Errorf("redistest: could not start redis-server: %w", lastErr)
}

// waitReady pings until the server answers; the server is an outside
// process, so there is no event to wait on.
func (s *Server) waitReady(limit time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case exitErr := <-s.done:
			// put back for whoever waits on the exit next (launch, Close):
			// Wait returned once, so the buffer of one has room
			s.done <- exitErr
			return fmt.Errorf("redis-server exited: %v", exitErr)
		default:
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Close kills the server (SIGKILL, as kill -9) and removes its directory;
// closing it again does nothing.
func (s *Server) Close() error {
	var err error
	s.stop.Do(func() {
		_ = s.cmd.Process.Kill()
		<-s.done
		err = os.RemoveAll(s.dir)
	})
	return err
}

// Client returns a new client for the server; the caller closes it.
func (s *Server) Client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr})
}

// Private starts a redis-server of the test's own and returns a client of
// it; both stop at the test's cleanup. A failed start goes through Skip.
func Private(t testing.TB) *redis.Client {
	t.Helper()
	srv, err := Start()
	if err != nil {
		Skip(t, err)
	}
	t.Cleanup(func() { srv.Close() })
	c := srv.Client()
	t.Cleanup(func() { c.Close() })
	return c
}

// Skip reports what a test should do about a failed Start: with
// PLAIT_REQUIRE_REDIS=1 it fails the test, otherwise it skips it.
func Skip(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("redis-server is required (%s=1): %v", RequireEnv, err)
	}
	t.Skipf("%v; set %s=1 to fail instead", err, RequireEnv)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
