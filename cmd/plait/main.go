// Command plait reads and acts on a plait store in Redis: runs and their
// DAGs (live), tasks, dead letters, queues, nodes, schedules, statistics,
// an export of history, and the web view. docs/cli.md describes every
// command, the URL forms of -redis and the exit codes.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/cmd/plait/internal/cli"
)

// quiet drops the Redis client's own log lines: the command reports the
// errors they are about, once, on stderr.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func main() {
	redis.SetLogger(quiet{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr, cli.OpenRedis)
	stop()
	os.Exit(code)
}
