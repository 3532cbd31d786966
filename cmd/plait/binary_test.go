package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store/redisstore"
)

// quietRedis drops the Redis client's log lines in the tests' process (a
// worker's connections closed at cleanup are logged otherwise).
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quietRedis{})
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// built is the plait binary, built once for every test.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func binary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "plait-bin-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "plait")
		out, err := exec.Command("go", "build", "-o", built.path, ".").CombinedOutput()
		if err != nil {
			built.err = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// binaryEnv is the built plait binary, a redis-server with an ACL user,
// and a worker over it in the test's process holding three runs: done,
// failed (a dead letter) and live (its hold task running until release).
type binaryEnv struct {
	bin     string
	url     string
	done    string
	failed  string
	live    string
	release func()
}

func setup(t *testing.T) *binaryEnv {
	t.Helper()
	srv, err := redistest.Start()
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { srv.Close() })
	bin := binary(t)
	ctx, cancel := context.WithCancel(context.Background())
	admin := srv.Client()
	defer admin.Close()
	// An ACL user of its own, as an operator would have.
	if err := admin.Do(ctx, "ACL", "SETUSER", "ops", "on", ">s3cret", "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	client := srv.Client()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := redisstore.New(ctx, client, redisstore.WithPrefix("ops"), redisstore.WithLogger(quiet), redisstore.WithStats(0))
	if err != nil {
		t.Fatal(err)
	}
	w, err := plait.New(st, plait.WithLogger(quiet), plait.WithIdleWait(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	held := make(chan struct{})
	var once, heldOnce sync.Once
	e := &binaryEnv{bin: bin, url: "redis://ops:s3cret@" + srv.Addr, release: func() { once.Do(func() { close(gate) }) }}
	for name, fn := range map[string]plait.HandlerFunc{
		"step": func(ctx context.Context, _ *plait.Task) (any, error) { return "ok", nil },
		"charge": func(ctx context.Context, _ *plait.Task) (any, error) {
			return nil, plait.Permanent(errors.New("payment gateway: card declined"))
		},
		"hold": func(ctx context.Context, _ *plait.Task) (any, error) {
			heldOnce.Do(func() { close(held) })
			select {
			case <-gate:
				return "released", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	} {
		if err := w.Handle(name, fn); err != nil {
			t.Fatal(err)
		}
	}
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	t.Cleanup(func() {
		e.release()
		cancel()
		<-ran
		client.Close()
	})
	finish := func(wf *plait.Workflow) string {
		run, err := w.Submit(ctx, wf)
		if err != nil {
			t.Fatal(err)
		}
		wctx, c := context.WithTimeout(ctx, 20*time.Second)
		defer c()
		if _, err := w.RunWait(wctx, run.ID); err != nil {
			t.Fatal(err)
		}
		return run.ID
	}
	e.done = finish(plait.NewWorkflow("etl").
		Task("extract", "step", nil).
		Task("shard-a", "step", nil, plait.After("extract")).
		Task("shard-b", "step", nil, plait.After("extract")).
		Task("shard-c", "step", nil, plait.After("extract")).
		Task("load", "step", nil, plait.After("shard-a", "shard-b", "shard-c")))
	e.failed = finish(plait.NewWorkflow("billing").Task("charge", "charge", 42).Task("receipt", "step", nil, plait.After("charge")))
	run, err := w.Submit(ctx, plait.NewWorkflow("report").
		Task("extract", "step", nil).
		Task("hold", "hold", nil, plait.After("extract")).
		Task("render", "step", nil, plait.After("extract")).
		Task("publish", "step", nil, plait.After("hold", "render")))
	if err != nil {
		t.Fatal(err)
	}
	e.live = run.ID
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("the hold task did not start")
	}
	return e
}

// plait runs the binary with the store's flags and answers stdout,
// stderr and the exit code.
func (e *binaryEnv) plait(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(e.bin, append([]string{"-redis", e.url, "-prefix", "ops"}, args...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

func (e *binaryEnv) want(t *testing.T, code int, v any, args ...string) string {
	t.Helper()
	out, errs, got := e.plait(t, args...)
	if got != code {
		t.Fatalf("plait %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), got, code, out, errs)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(out), v); err != nil {
			t.Fatalf("plait %s: not JSON: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return out
}

type runItem struct {
	ID       string `json:"id"`
	Workflow string `json:"workflow"`
	Status   string `json:"status"`
	Tasks    []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"tasks"`
}

func TestBinaryOnRedis(t *testing.T) {
	e := setup(t)
	var runs struct{ Items []runItem }
	e.want(t, 0, &runs, "runs", "ls", "-o", "json")
	if len(runs.Items) != 3 {
		t.Fatalf("runs ls: %+v", runs.Items)
	}
	var run runItem
	e.want(t, 0, &run, "runs", "show", e.done, "-o", "json")
	if run.Status != "completed" || len(run.Tasks) != 5 {
		t.Fatalf("runs show: %+v", run)
	}
	e.want(t, 3, nil, "runs", "show", "00000000000000000000000000")
	e.want(t, 2, nil, "runs", "ls", "-o", "yaml")
	var letters struct {
		Items []struct{ RunID, Task, Error string }
	}
	e.want(t, 0, &letters, "dlq", "ls", "-o", "json")
	if len(letters.Items) != 1 || letters.Items[0].RunID != e.failed || letters.Items[0].Task != "charge" {
		t.Fatalf("dlq ls: %+v", letters.Items)
	}
	var tasks struct {
		Items []struct{ RunID, Name, Status string }
	}
	e.want(t, 0, &tasks, "tasks", "ls", "-o", "json")
	if len(tasks.Items) != 1 || tasks.Items[0].Name != "hold" {
		t.Fatalf("tasks ls: %+v", tasks.Items)
	}
	var count struct {
		Count  int  `json:"count"`
		DryRun bool `json:"dryRun"`
	}
	e.want(t, 4, &count, "runs", "delete", "-status", "completed", "-reason", "tidy", "-o", "json")
	if count.Count != 1 || !count.DryRun {
		t.Fatalf("runs delete without -yes: %+v", count)
	}
	for _, args := range [][]string{{"queues", "ls"}, {"nodes", "ls"}, {"schedules", "ls"}, {"stats"}} {
		var v any
		e.want(t, 0, &v, append(args, "-o", "json")...)
	}
	if out := e.want(t, 0, nil, "export", "-from", "1h", "-format", "csv"); strings.Count(out, "\n") != 1+5+2 {
		t.Fatalf("export csv:\n%s", out)
	}
	// A wrong password, a prefix nobody uses: failures, not hangs.
	if _, errs, code := e.plaitWith(t, "redis://ops:wrong@"+strings.TrimPrefix(e.url, "redis://ops:s3cret@"), "ops", "runs", "ls"); code != 1 || errs == "" {
		t.Fatalf("a wrong password: exit %d: %s", code, errs)
	}
	if _, _, code := e.plaitWith(t, e.url, "nobody", "runs", "ls"); code != 1 {
		t.Fatalf("an unknown prefix: exit %d", code)
	}
}

func (e *binaryEnv) plaitWith(t *testing.T, url, prefix string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(e.bin, append([]string{"-redis", url, "-prefix", prefix}, args...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// TestBinaryWatch watches the live run in the binary while it runs, lets
// it finish, and checks the frames; PLAIT_WATCH_CAPTURE=path keeps them.
func TestBinaryWatch(t *testing.T) {
	e := setup(t)
	cmd := exec.Command(e.bin, "-redis", e.url, "-prefix", "ops", "runs", "watch", e.live, "-width", "90", "-every", "50ms")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		all.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "[>>] running") {
			break // the first frame shows hold running
		}
	}
	e.release()
	for sc.Scan() {
		all.WriteString(sc.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("runs watch: %v: %s", err, errb.String())
	}
	frames := strings.Split(all.String(), "--- ")
	last := frames[len(frames)-1]
	if len(frames) < 3 || !strings.Contains(frames[1], "[>>] running") || !strings.Contains(last, "COMPLETED") ||
		strings.Count(last, "[ok] succeeded") != 4 {
		t.Fatalf("runs watch frames:\n%s", all.String())
	}
	if path := os.Getenv("PLAIT_WATCH_CAPTURE"); path != "" {
		_ = os.WriteFile(path, []byte(all.String()), 0o644)
	}
}
