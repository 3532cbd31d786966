// Command cron fires a schedule every two seconds on the in-memory store:
// each run carries the instant it was fired for, a handler prints it, and
// the command stops by itself after three runs.
//
//	go run ./examples/cron
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/memstore"
)

// fires is how many runs the example waits for before it stops.
const fires = 3

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cron:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	done := make(chan struct{}, fires)
	st, err := memstore.New()
	if err != nil {
		return err
	}
	s, err := plait.New(st, plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return err
	}
	err = s.Handle("report", plait.Typed(func(ctx context.Context, t *plait.Task, instant time.Time) (string, error) {
		fmt.Fprintf(out, "run %s for the instant %s, started %s later\n", t.RunID, instant.Format("15:04:05"),
			time.Since(instant).Round(time.Millisecond))
		done <- struct{}{}
		return "ok", nil
	}))
	if err != nil {
		return err
	}
	// Build makes each instant's workflow, so each run carries its
	// instant; the instant is also in the run's metadata under
	// plait.MetadataInstant.
	_, err = s.ScheduleSave(ctx, &plait.Schedule{
		Name: "every-two-seconds",
		Spec: "@every 2s",
		Build: func(instant time.Time) (*plait.Workflow, error) {
			return plait.NewWorkflow("report").Task("report", "report", instant), nil
		},
	})
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- s.Run(runCtx) }()
	for i := 0; i < fires; i++ {
		select {
		case <-done:
		case <-ctx.Done():
			stop()
			<-ran
			return ctx.Err()
		}
	}
	stop()
	if err := <-ran; err != nil {
		return err
	}
	info, err := s.ScheduleGet(ctx, "every-two-seconds")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "last instant %s, next %s\n", info.LastFire.Format("15:04:05"), info.NextFire.Format("15:04:05"))
	return nil
}
