package plait_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/memstore"
)

// runToEnd submits wf, runs the scheduler until the run finishes, and
// returns the final run.
func runToEnd(s *plait.Scheduler, wf *plait.Workflow, opts ...plait.SubmitOption) *plait.Run {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := s.Submit(ctx, wf, opts...)
	if err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	final, err := s.RunWait(ctx, run.ID)
	if err != nil {
		panic(err)
	}
	cancel()
	<-done
	return final
}

func quietScheduler(opts ...plait.Option) *plait.Scheduler {
	opts = append([]plait.Option{plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)
	st, err := memstore.New()
	if err != nil {
		panic(err)
	}
	s, err := plait.New(st, opts...)
	if err != nil {
		panic(err)
	}
	return s
}

// A child reads its parents' results as Go values.
func Example() {
	s := quietScheduler()
	_ = s.Handle("greet", plait.Typed(func(ctx context.Context, t *plait.Task, name string) (string, error) {
		return "hello " + name, nil
	}))
	_ = s.Handle("shout", func(ctx context.Context, t *plait.Task) (any, error) {
		g, err := plait.ParentValue[string](t, "greet")
		return strings.ToUpper(g), err
	})
	wf := plait.NewWorkflow("hello").
		Task("greet", "greet", "plait").
		Task("shout", "shout", nil, plait.After("greet"))

	final := runToEnd(s, wf)
	out, _ := plait.ResultValue[string](final, "shout", nil)
	fmt.Println(final.Status, out)
	// Output: completed HELLO PLAIT
}

// AfterFailure runs a compensation step only when its parent fails for good;
// the parent's OnSuccess dependents are skipped.
func ExampleAfterFailure() {
	s := quietScheduler()
	_ = s.Handle("charge", func(ctx context.Context, t *plait.Task) (any, error) {
		return nil, plait.Permanent(errors.New("card declined"))
	})
	_ = s.Handle("ship", noop)
	_ = s.Handle("refund", noop)
	wf := plait.NewWorkflow("order").
		Task("charge", "charge", nil).
		Task("ship", "ship", nil, plait.After("charge")).
		Task("refund", "refund", nil, plait.AfterFailure("charge"))

	final := runToEnd(s, wf)
	for _, t := range final.Tasks {
		fmt.Println(t.Name, t.Status)
	}
	fmt.Println("run", final.Status)
	// Output:
	// charge failed
	// ship skipped
	// refund succeeded
	// run failed
}

// A run key makes Submit idempotent.
func ExampleWithRunKey() {
	s := quietScheduler(plait.WithRemoteHandlers())
	wf := plait.NewWorkflow("invoice").Task("send", "send", nil)
	ctx := context.Background()
	a, _ := s.Submit(ctx, wf, plait.WithRunKey("invoice-2026-11"))
	b, _ := s.Submit(ctx, wf, plait.WithRunKey("invoice-2026-11"))
	fmt.Println(a.ID == b.ID)
	// Output: true
}

// Validation reports every problem before anything is written.
func ExampleWorkflow_Validate() {
	err := plait.NewWorkflow("bad").
		Task("a", "h", nil, plait.After("c")).
		Task("b", "h", nil, plait.After("a")).
		Task("c", "h", nil, plait.After("b")).
		Validate()
	fmt.Println(errors.Is(err, plait.ErrCycle))
	// Output: true
}

// Many runs go to the store together: on Redis, one round trip per 256.
func ExampleScheduler_SubmitMany() {
	s := quietScheduler()
	_ = s.Handle("square", plait.Typed(func(ctx context.Context, t *plait.Task, n int) (int, error) {
		return n * n, nil
	}))
	var subs []plait.Submission
	for n := 1; n <= 3; n++ {
		subs = append(subs, plait.Submission{
			Workflow: plait.NewWorkflow("square").Task("sq", "square", n),
			Options:  []plait.SubmitOption{plait.WithRunKey(fmt.Sprintf("square-%d", n))},
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runs, err := s.SubmitMany(ctx, subs)
	if err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	for _, run := range runs {
		final, err := s.RunWait(ctx, run.ID)
		if err != nil {
			panic(err)
		}
		v, _ := plait.ResultValue[int](final, "sq", nil)
		fmt.Println(final.Key, v)
	}
	cancel()
	<-done
	// Output:
	// square-1 1
	// square-2 4
	// square-3 9
}

// Retry(n) allows n retries: n+1 attempts in all.
func ExampleRetry() {
	s := quietScheduler()
	_ = s.Handle("flaky", func(ctx context.Context, t *plait.Task) (any, error) {
		return nil, fmt.Errorf("attempt %d failed", t.Attempt)
	})
	quick := plait.ConstantBackoff(time.Millisecond)
	wf := plait.NewWorkflow("flaky").Task("x", "flaky", nil, plait.Retry(2), plait.Backoff(quick))

	final := runToEnd(s, wf)
	x := final.Task("x")
	fmt.Println(x.Status, "after", len(x.Attempts), "attempts:", x.Error)
	// Output: failed after 3 attempts: attempt 3 failed
}

// Under the skip strategy a failed task counts as skipped for its
// dependents: its AfterFailure step never runs, its AfterCompletion step
// does, and the run completes.
func ExampleOnError() {
	s := quietScheduler()
	_ = s.Handle("charge", func(ctx context.Context, t *plait.Task) (any, error) {
		return nil, plait.Permanent(errors.New("card declined"))
	})
	_ = s.Handle("noop", noop)
	wf := plait.NewWorkflow("order", plait.OnError(plait.StrategySkip)).
		Task("charge", "charge", nil).
		Task("refund", "noop", nil, plait.AfterFailure("charge")).
		Task("notify", "noop", nil, plait.AfterCompletion("charge"))

	final := runToEnd(s, wf)
	for _, t := range final.Tasks {
		fmt.Println(t.Name, t.Status)
	}
	fmt.Println("run", final.Status)
	// Output:
	// charge failed
	// refund skipped
	// notify succeeded
	// run completed
}
