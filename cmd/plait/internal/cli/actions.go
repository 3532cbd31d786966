package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/user"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/action"
)

// actOpts are the flags of every action.
type actOpts struct {
	reason string
	yes    bool
	dryRun bool
	rps    float64
	max    int
	actor  string
}

func actionFlags(fs *flag.FlagSet) *actOpts {
	o := &actOpts{}
	fs.StringVar(&o.reason, "reason", "", "why: written as a note on every run acted on and in the audit record (required for a query)")
	fs.BoolVar(&o.yes, "yes", false, "act on a query's items; without it the count is printed and the command exits 4")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the count of items the action would act on, and stop")
	fs.Float64Var(&o.rps, "rps", 0, fmt.Sprintf("items acted on per second (default %d, at most %d)", action.RateDefault, action.RateMax))
	fs.IntVar(&o.max, "max", 0, "refuse when the target holds more items than this (0: no bound but the engine's)")
	fs.StringVar(&o.actor, "actor", "", "who acts, for the audit record and the notes (default cli:<user>)")
	return o
}

// countJSON is an action's dry run as -o json prints it.
type countJSON struct {
	Action  string `json:"action"`
	Count   int    `json:"count"`
	Capped  bool   `json:"capped"`
	Skipped int    `json:"skipped"`
	DryRun  bool   `json:"dryRun"`
}

type itemJSON struct {
	ID    string   `json:"id,omitempty"`
	RunID string   `json:"runId,omitempty"`
	Task  string   `json:"task,omitempty"`
	Runs  []string `json:"runs,omitempty"`
	Error string   `json:"error,omitempty"`
}

type reportJSON struct {
	Action  string     `json:"action"`
	Total   int        `json:"total"`
	Done    int        `json:"done"`
	Failed  int        `json:"failed"`
	Noted   int        `json:"noted"`
	Items   []itemJSON `json:"items"`
	Skipped []itemJSON `json:"skipped,omitempty"`
}

func itemsOf(items []action.Item) []itemJSON {
	out := make([]itemJSON, 0, len(items))
	for _, it := range items {
		j := itemJSON{ID: it.ID, RunID: it.RunID, Task: it.Task, Runs: it.Runs}
		if it.Err != nil {
			j.Error = it.Err.Error()
		}
		out = append(out, j)
	}
	return out
}

// act runs action a on t: a query is counted first and acted on only with
// -yes; items named on the command line are acted on at once.
func (e *env) act(a action.Action, t action.Target, o *actOpts) error {
	if o.rps < 0 || o.rps > action.RateMax {
		return usagef("-rps %g: want 0..%d", o.rps, action.RateMax)
	}
	if o.max < 0 {
		return usagef("-max %d: want 0 or more", o.max)
	}
	if t.IsQuery() && o.reason == "" && !o.dryRun {
		return usagef("an action on a query needs -reason")
	}
	s, err := e.scheduler()
	if err != nil {
		return err
	}
	if t.IsQuery() || o.dryRun {
		c, err := action.Count(e.ctx, s, a, t)
		if err != nil {
			return err
		}
		dry := o.dryRun || !o.yes
		// Under -o json an action that goes on prints its report alone,
		// one document a script reads (its total is the count).
		if dry || e.output != "json" {
			err = e.emit(countJSON{Action: string(a), Count: c.N, Capped: c.Capped, Skipped: c.Skipped, DryRun: dry}, func(w io.Writer) {
				more := ""
				if c.Capped {
					more = " (at least; the query is capped)"
				}
				fmt.Fprintf(w, "%s: %d item(s)%s\n", a, c.N, more)
			})
			if err != nil {
				return err
			}
		}
		switch {
		case o.dryRun:
			return nil
		case !o.yes:
			return &needsYesError{n: c.N}
		case c.N == 0 && e.output != "json":
			return nil
		}
	}
	rep, err := action.Apply(e.ctx, s, a, t, action.Options{
		Reason: o.reason, Actor: o.actorName(), Rate: o.rps, Max: o.max,
		Progress: func(done, total int) { e.progress(string(a), done, total) },
		Logger:   slog.New(slog.NewTextHandler(e.stderr, nil)),
	})
	var tm *action.TooManyError
	if errors.As(err, &tm) {
		return fmt.Errorf("%w: %v", errRefused, err)
	}
	if err != nil {
		return err
	}
	out := reportJSON{Action: string(a), Total: rep.Total, Done: rep.Done, Failed: rep.Failed, Noted: rep.Noted,
		Items: itemsOf(rep.Items), Skipped: itemsOf(rep.Skipped)}
	if err := e.emit(out, func(w io.Writer) {
		row(w, "ITEM", "RESULT")
		for _, list := range [][]itemJSON{out.Items, out.Skipped} {
			for _, it := range list {
				name := it.ID
				if it.Task != "" {
					name = it.RunID + "/" + it.Task
				}
				res := "ok"
				if it.Error != "" {
					res = it.Error
				}
				for _, r := range it.Runs {
					res += " run " + r
				}
				row(w, name, res)
			}
		}
		fmt.Fprintf(w, "%s: %d done, %d failed, %d skipped of %d\n", a, rep.Done, rep.Failed, len(rep.Skipped), rep.Total+len(rep.Skipped))
	}); err != nil {
		return err
	}
	return reportErr(rep)
}

// reportErr turns what an action did into the command's outcome: any
// failure is a failure; a target whose every item was left out is "not
// found" when one was unknown, else "refused".
func reportErr(rep *action.Report) error {
	if rep.Failed > 0 {
		return fmt.Errorf("%d of %d item(s) failed", rep.Failed, rep.Total)
	}
	if rep.Total > 0 || len(rep.Skipped) == 0 {
		return nil
	}
	for _, it := range rep.Skipped {
		if errors.Is(it.Err, plait.ErrNotFound) {
			return fmt.Errorf("nothing done: %w", it.Err)
		}
	}
	return fmt.Errorf("nothing done: %w: %v", errRefused, rep.Skipped[0].Err)
}

func (o *actOpts) actorName() string {
	if o.actor != "" {
		return o.actor
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	return "cli"
}
