package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store/redisstore"
)

// A worker process: this binary run with -worker. It runs one Scheduler
// over a redisstore reached through Sentinel until SIGTERM (a graceful
// stop: it returns once its handlers are released or done) and exits 0;
// SIGKILL is the crash the soak injects.

// redisStore builds the store every process of the soak shares: reached
// through the sentinels, with a short retention so that the key count
// settles within the soak.
func redisStore(ctx context.Context, sentinels []string, logger *slog.Logger) (*redisstore.Store, *redis.Client, error) {
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: redistest.SentinelMaster, SentinelAddrs: sentinels})
	s, err := redisstore.New(ctx, c, redisstore.WithPrefix("soak"), redisstore.WithRetention(retention),
		redisstore.WithLogger(logger))
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return s, c, nil
}

func workerMain(id, sentinels string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, c, err := redisStore(ctx, strings.Split(sentinels, ","), logger)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak worker:", err)
		return 1
	}
	defer c.Close()
	s, err := plait.New(st, append(workerOptions(id), plait.WithLogger(logger))...)
	if err == nil {
		err = handle(s)
	}
	if err == nil {
		err = s.Run(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak worker:", err)
		return 1
	}
	return 0
}

// proc is a worker process the soak started.
type proc struct {
	id    string
	cmd   *exec.Cmd
	done  chan error
	begun time.Time
}

// startWorker starts this binary as worker id, its log in logDir.
func startWorker(id, sentinels, logDir string) (*proc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	log, err := os.OpenFile(logDir+"/"+id+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-worker", id, "-sentinels", sentinels)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	p := &proc{id: id, cmd: cmd, done: make(chan error, 1), begun: time.Now()}
	go func() {
		p.done <- cmd.Wait()
		log.Close()
	}()
	return p, nil
}

// kill SIGKILLs the process and waits for it.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// term sends SIGTERM and answers how long the process took to exit, and
// how it exited.
func (p *proc) term(limit time.Duration) (time.Duration, error) {
	begin := time.Now()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		return time.Since(begin), err
	case <-time.After(limit):
		p.kill()
		return time.Since(begin), fmt.Errorf("still running after %s: killed", limit)
	}
}
