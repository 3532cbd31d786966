package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/plaitdag/plait"
)

func runsWatch(fs *flag.FlagSet) func(*env, []string) error {
	every := fs.Duration("every", 250*time.Millisecond, "redraw at most this often")
	width := fs.Int("width", 100, "columns the DAG may take")
	once := fs.Bool("once", false, "draw once and exit")
	exitStatus := fs.Bool("exit-status", false, "exit 1 when the run ends failed or cancelled")
	return func(e *env, args []string) error {
		if err := wantArgs(args, 1, "a run id"); err != nil {
			return err
		}
		if *every < 10*time.Millisecond || *width < 20 {
			return usagef("-every is at least 10ms and -width at least 20")
		}
		s, err := e.scheduler()
		if err != nil {
			return err
		}
		w := &watcher{e: e, s: s, id: args[0], every: *every, width: *width, tty: isTerminal(e.stdout)}
		run, err := w.watch(*once)
		if err != nil {
			return err
		}
		if *exitStatus && run.Status != plait.RunCompleted {
			return fmt.Errorf("run %s ended %s", run.ID, run.Status)
		}
		return nil
	}
}

// watcher draws a run each time its events say it changed, at most once
// per every, until it ends.
type watcher struct {
	e     *env
	s     *plait.Scheduler
	id    string
	every time.Duration
	width int
	tty   bool // redraw in place rather than one frame after another
	spec  *plait.WorkflowSpec
	last  []byte
}

func (w *watcher) watch(once bool) (*plait.Run, error) {
	ctx, cancel := context.WithCancel(w.e.ctx)
	defer cancel()
	// Subscribe before the first read, so no change falls between them.
	var events <-chan struct{}
	if !once {
		sub, err := w.s.Subscribe(ctx, &plait.SubscribeFilter{RunID: w.id, FromNow: true})
		switch {
		case errors.Is(err, plait.ErrUnsupported):
			// No events in this store: poll.
		case err != nil:
			return nil, err
		default:
			ch := make(chan struct{}, 1)
			events = ch
			go func() {
				for {
					_, err := sub.Next(ctx)
					if ctx.Err() != nil {
						return
					}
					var fb *plait.FellBehindError
					if err != nil && !errors.As(err, &fb) {
						// A store error: Next resumes from the same
						// cursor; reread meanwhile, at the redraw pace.
						t := time.NewTimer(w.every)
						select {
						case <-t.C:
						case <-ctx.Done():
							t.Stop()
							return
						}
					}
					select {
					case ch <- struct{}{}: // a change: coalesced while one is pending
					default:
					}
				}
			}()
		}
	}
	for {
		run, err := w.s.RunGet(ctx, w.id)
		if err != nil {
			return nil, err
		}
		if w.spec == nil {
			res, err := w.s.RunSpecGet(ctx, w.id)
			if err != nil {
				return nil, err
			}
			w.spec = res.Spec
		}
		if err := w.draw(run); err != nil {
			return nil, err
		}
		if once || run.Status.Terminal() {
			return run, nil
		}
		// Wait for a change (or the poll), then keep to the redraw floor.
		pause := time.NewTimer(w.every)
		if events != nil {
			select {
			case <-events:
			case <-ctx.Done():
				pause.Stop()
				return nil, ctx.Err()
			}
		}
		select {
		case <-pause.C:
		case <-ctx.Done():
			pause.Stop()
			return nil, ctx.Err()
		}
	}
}

// draw writes a frame when it differs from the last one: in place on a
// terminal, else after the last one; -o json writes the run as a line.
func (w *watcher) draw(run *plait.Run) error {
	var b bytes.Buffer
	if w.e.output == "json" {
		j := runOf(run)
		specs := map[string]*plait.TaskSpec{}
		for i := range w.spec.Tasks {
			specs[w.spec.Tasks[i].Name] = &w.spec.Tasks[i]
		}
		for i := range run.Tasks {
			t := taskOf(&run.Tasks[i], specs[run.Tasks[i].Name])
			t.Attempts = nil
			j.Tasks = append(j.Tasks, t)
		}
		if err := jsonLine(&b, j); err != nil {
			return err
		}
	} else {
		drawDAG(&b, w.spec, run, w.width)
	}
	if bytes.Equal(b.Bytes(), w.last) {
		return nil
	}
	w.last = append(w.last[:0], b.Bytes()...)
	if w.e.output != "json" {
		if w.tty {
			fmt.Fprint(w.e.stdout, "\x1b[H\x1b[2J") // home and clear: the frame replaces the last
		} else {
			fmt.Fprintf(w.e.stdout, "--- %s\n", time.Now().UTC().Format("15:04:05.000"))
		}
	}
	_, err := w.e.stdout.Write(b.Bytes())
	return err
}
