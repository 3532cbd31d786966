// Command quickstart runs a five-task diamond workflow on the in-memory
// store: one task fails once and is retried, and a child reads its parents'
// results. It ends by printing the finished run as a Mermaid flowchart.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/memstore"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	start := time.Now()
	progress := func(e plait.Event) {
		switch e.Type {
		case plait.EventTaskStarted:
			fmt.Fprintf(out, "%-8s started   (attempt %d)\n", e.Task, e.Attempt)
		case plait.EventTaskSucceeded:
			fmt.Fprintf(out, "%-8s succeeded\n", e.Task)
		case plait.EventTaskRetrying:
			fmt.Fprintf(out, "%-8s failed: %v; retrying in %s\n", e.Task, e.Err, e.RetryIn.Round(time.Millisecond))
		case plait.EventTaskFailed:
			fmt.Fprintf(out, "%-8s failed for good: %v\n", e.Task, e.Err)
		}
	}
	st, err := memstore.New()
	if err != nil {
		return err
	}
	s, err := plait.New(st,
		plait.WithConcurrency(4),
		plait.WithObserver(progress),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	)
	if err != nil {
		return err
	}

	// fetch: returns the raw words of a document.
	must(s.Handle("fetch", plait.Typed(func(ctx context.Context, t *plait.Task, doc string) ([]string, error) {
		return strings.Fields(doc), nil
	})))
	// count: flaky on its first attempt, to show a retry.
	var countCalls atomic.Int32
	must(s.Handle("count", func(ctx context.Context, t *plait.Task) (any, error) {
		if countCalls.Add(1) == 1 {
			return nil, errors.New("transient: cache not warm")
		}
		words, err := plait.ParentValue[[]string](t, "fetch")
		return len(words), err
	}))
	// longest: the longest word.
	must(s.Handle("longest", func(ctx context.Context, t *plait.Task) (any, error) {
		words, err := plait.ParentValue[[]string](t, "fetch")
		longest := ""
		for _, w := range words {
			if len(w) > len(longest) {
				longest = w
			}
		}
		return longest, err
	}))
	// report: joins both branches.
	must(s.Handle("report", func(ctx context.Context, t *plait.Task) (any, error) {
		n, err := plait.ParentValue[int](t, "count")
		if err != nil {
			return nil, err
		}
		w, err := plait.ParentValue[string](t, "longest")
		return fmt.Sprintf("%d words, longest %q", n, w), err
	}))
	// publish: the tail of the diamond.
	must(s.Handle("publish", func(ctx context.Context, t *plait.Task) (any, error) {
		r, err := plait.ParentValue[string](t, "report")
		return "published: " + r, err
	}))

	quick := plait.ConstantBackoff(20 * time.Millisecond)
	wf := plait.NewWorkflow("word-report").
		Task("fetch", "fetch", "plait runs directed acyclic workflows of Go handlers").
		Task("count", "count", nil, plait.After("fetch"), plait.Retry(2), plait.Backoff(quick)).
		Task("longest", "longest", nil, plait.After("fetch")).
		Task("report", "report", nil, plait.After("count", "longest")).
		Task("publish", "publish", nil, plait.After("report"))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	run, err := s.Submit(ctx, wf)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()

	final, err := s.RunWait(ctx, run.ID)
	if err != nil {
		return err
	}
	cancel()
	if err := <-done; err != nil {
		return err
	}
	result, err := plait.ResultValue[string](final, "publish", nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "run %s %s in %s: %s\n", final.ID, final.Status, time.Since(start).Round(time.Millisecond), result)
	if final.Status != plait.RunCompleted {
		return fmt.Errorf("run ended %s", final.Status)
	}
	// The finished run as a Mermaid flowchart: paste it into any Mermaid
	// viewer (GitHub renders a ```mermaid block) to see each task's state.
	fmt.Fprintf(out, "\n%s", wf.Mermaid(final))
	return nil
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
