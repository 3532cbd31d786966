// Command distributed runs one workflow across several worker processes that
// share a Redis server. The parent submits a fan-out/fan-in DAG, starts
// -workers copies of itself as workers, and prints which process ran which
// task.
//
//	redis-server --port 6379 --save "" --appendonly no --daemonize yes
//	go run ./examples/distributed -redis 127.0.0.1:6379 -workers 3
//	redis-cli -p 6379 shutdown nosave
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/redisstore"
)

func main() {
	addr := flag.String("redis", "127.0.0.1:6379", "Redis address")
	workers := flag.Int("workers", 3, "worker processes to start")
	width := flag.Int("width", 12, "parallel tasks in the fan-out")
	prefix := flag.String("prefix", "plait-example", "key prefix")
	worker := flag.Int("worker", 0, "run as worker number N (used by the parent)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if *worker > 0 {
		err = runWorker(ctx, *addr, *prefix, *worker)
	} else {
		err = runParent(ctx, *addr, *prefix, *workers, *width)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "distributed:", err)
		os.Exit(1)
	}
}

func newScheduler(ctx context.Context, client redis.UniversalClient, prefix string, opts ...plait.Option) (*plait.Scheduler, error) {
	store, err := redisstore.New(ctx, client, redisstore.WithPrefix(prefix))
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	return plait.New(store, append([]plait.Option{plait.WithLogger(quiet)}, opts...)...)
}

func runParent(ctx context.Context, addr, prefix string, workers, width int) error {
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	if err := client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis at %s: %w (start one with: redis-server --port 6379 --save \"\" --appendonly no)", addr, err)
	}
	// The parent only submits and waits; the workers hold the handlers.
	s, err := newScheduler(ctx, client, prefix, plait.WithRemoteHandlers())
	if err != nil {
		return err
	}
	wf := plait.NewWorkflow("distributed-demo").Task("split", "split", width)
	parts := make([]string, width)
	for i := range parts {
		parts[i] = "part-" + strconv.Itoa(i)
		wf.Task(parts[i], "square", i, plait.After("split"))
	}
	wf.Task("sum", "sum", nil, plait.After(parts...))
	run, err := s.Submit(ctx, wf)
	if err != nil {
		return err
	}
	fmt.Printf("submitted run %s (%d tasks); starting %d workers\n", run.ID, width+2, workers)

	var procs []*exec.Cmd
	for i := 1; i <= workers; i++ {
		cmd := exec.Command(os.Args[0], "-worker", strconv.Itoa(i), "-redis", addr, "-prefix", prefix)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		procs = append(procs, cmd)
	}
	defer func() {
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range procs {
			_ = p.Wait()
		}
	}()

	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	final, err := s.RunWait(wctx, run.ID)
	if err != nil {
		return err
	}
	byWorker := map[string][]string{}
	for _, t := range final.Tasks {
		byWorker[t.Worker] = append(byWorker[t.Worker], t.Name)
	}
	names := make([]string, 0, len(byWorker))
	for w := range byWorker {
		names = append(names, w)
	}
	sort.Strings(names)
	for _, w := range names {
		fmt.Printf("%s ran %s\n", w, strings.Join(byWorker[w], ", "))
	}
	total, err := plait.ResultValue[int](final, "sum", nil)
	if err != nil {
		return err
	}
	fmt.Printf("run %s %s: sum of squares = %d\n", final.ID, final.Status, total)
	if final.Status != plait.RunCompleted {
		return errors.New("run did not complete")
	}
	return nil
}

func runWorker(ctx context.Context, addr, prefix string, n int) error {
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	id := fmt.Sprintf("worker-%d-pid-%d", n, os.Getpid())
	s, err := newScheduler(ctx, client, prefix, plait.WithWorkerID(id), plait.WithConcurrency(2),
		plait.WithObserver(func(e plait.Event) {
			if e.Type == plait.EventTaskSucceeded {
				fmt.Printf("  %s finished %s\n", id, e.Task)
			}
		}))
	if err != nil {
		return err
	}
	must(s.Handle("split", plait.Typed(func(ctx context.Context, t *plait.Task, width int) (int, error) {
		return width, nil
	})))
	must(s.Handle("square", plait.Typed(func(ctx context.Context, t *plait.Task, i int) (int, error) {
		// Stand-in for real work, long enough to spread tasks over workers.
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		return i * i, nil
	})))
	must(s.Handle("sum", func(ctx context.Context, t *plait.Task) (any, error) {
		total := 0
		for _, p := range t.Parents() {
			v, err := plait.ParentValue[int](t, p)
			if err != nil {
				return nil, err
			}
			total += v
		}
		return total, nil
	}))
	return s.Run(ctx)
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
