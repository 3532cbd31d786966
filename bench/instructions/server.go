package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// server is a redis-server this program started, plain or under valgrind,
// in a temporary directory of its own.
type server struct {
	addr string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // cmd.Wait's answer, once done is closed
}

// startServer runs argv (a redis-server command line, possibly behind
// valgrind) with the redis arguments appended: a free loopback port,
// persistence off, dir as its working and data directory. It waits until
// the server answers PING, for up to ready (valgrind takes seconds to
// start).
func startServer(argv []string, dir string, ready time.Duration) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append(argv[1:len(argv):len(argv)],
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir,
		"--logfile", filepath.Join(dir, "redis.log"))
	cmd := exec.Command(argv[0], args...)
	cmd.Dir = dir
	// A process group of its own keeps a terminal's Ctrl-C away from the
	// server: this program stops it, after its last measurement. Pdeathsig
	// stops it if this program is killed outright.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, cmd: cmd, done: make(chan struct{})}
	go func() { s.err = cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ready); err != nil {
		s.kill()
		return nil, fmt.Errorf("%s did not answer: %w (see %s)", argv[0], err, dir)
	}
	return s, nil
}

// waitReady waits until the server accepts a connection and answers PING;
// it is another process, so there is nothing to wait on but its answer.
// Connections are tried by hand first, since go-redis logs every refused
// dial.
func (s *server) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		conn, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err == nil {
			conn.Close()
			c := redis.NewClient(&redis.Options{Addr: s.addr, DialTimeout: 10 * time.Second})
			ctx, cancel := context.WithTimeout(context.Background(), max(time.Until(deadline), time.Second))
			err = c.Ping(ctx).Err()
			cancel()
			c.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("exited: %v", s.err)
		default:
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop shuts the server down with SHUTDOWN NOSAVE and waits for it to
// exit, for up to limit (valgrind writes its last profile on the way out);
// then it is killed.
func (s *server) stop(limit time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = c.ShutdownNoSave(ctx).Err() // the connection drops as the server goes: no answer
	cancel()
	c.Close()
	select {
	case <-s.done:
		return nil
	case <-time.After(limit):
	}
	_ = syscall.Kill(s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
		return errors.New("redis-server ignored SHUTDOWN; terminated")
	case <-time.After(5 * time.Second):
	}
	s.kill()
	return errors.New("redis-server ignored SHUTDOWN and SIGTERM; killed")
}

func (s *server) kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tempDir makes a directory for one server; the caller removes it.
func tempDir(what string) (string, error) {
	return os.MkdirTemp("", "plait-instructions-"+what+"-")
}
