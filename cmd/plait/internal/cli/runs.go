package cli

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/action"
	"github.com/plaitdag/plait/store"
)

func runCommands() []command {
	return []command{
		{path: "runs ls", short: "list runs, newest first, by a query", flags: runsList},
		{path: "runs show", args: "RUN", short: "show a run, its tasks and their attempts", flags: runsShow},
		{path: "runs watch", args: "RUN", short: "draw a run's DAG with its states, redrawn live until it ends", flags: runsWatch},
		{path: "runs cancel", args: "[RUN...]", short: "cancel runs, named or by a query", flags: runAction(action.RunCancel)},
		{path: "runs replay", args: "[RUN...]", short: "replay the failed tasks of finished runs, named or by a query", flags: runAction(action.RunReplay)},
		{path: "runs delete", args: "[RUN...]", short: "delete finished runs, named or by a query", flags: runAction(action.RunDelete)},
		{path: "runs note", args: "[RUN...]", short: "add -reason as a note to runs' history, named or by a query", flags: runAction(action.RunNote)},
	}
}

func runsList(fs *flag.FlagSet) func(*env, []string) error {
	filter := runFilterFlags(fs, time.Now)
	pg := pagingFlags(fs, 50, store.QueryLimitMax)
	var f plait.RunFilter
	return listed(func(e *env, s *plait.Scheduler) error {
		res, err := s.RunList(e.ctx, plait.RunListParams{Filter: f, Cursor: pg.cursor, Limit: pg.limit})
		if err != nil {
			return err
		}
		out := page[runJSON]{Items: make([]runJSON, 0, len(res.Runs)), NextCursor: res.NextCursor}
		for _, r := range res.Runs {
			out.Items = append(out.Items, runOf(r))
		}
		return e.emit(out, func(w io.Writer) {
			row(w, "RUN", "WORKFLOW", "STATUS", "TASKS", "FAILED", "CREATED", "TOOK")
			for _, r := range res.Runs {
				row(w, r.ID, r.Workflow, r.Status, fmt.Sprintf("%d/%d", r.Succeeded, r.Total), r.Failed, when(r.CreatedAt), took(r.StartedAt, r.EndedAt))
			}
			more(w, res.NextCursor)
		})
	}, into(&f, filter), pg.check)
}

func runsShow(fs *flag.FlagSet) func(*env, []string) error {
	return func(e *env, args []string) error {
		if err := wantArgs(args, 1, "a run id"); err != nil {
			return err
		}
		s, err := e.scheduler()
		if err != nil {
			return err
		}
		run, spec, err := readRun(e, s, args[0])
		if err != nil {
			return err
		}
		out := runOf(run)
		specs := map[string]*plait.TaskSpec{}
		if spec != nil {
			for i := range spec.Tasks {
				specs[spec.Tasks[i].Name] = &spec.Tasks[i]
			}
		}
		for i := range run.Tasks {
			out.Tasks = append(out.Tasks, taskOf(&run.Tasks[i], specs[run.Tasks[i].Name]))
		}
		return e.emit(out, func(w io.Writer) {
			fmt.Fprintf(w, "run\t%s\nworkflow\t%s\nstatus\t%s\ngeneration\t%d\ntasks\t%d succeeded, %d failed, %d skipped, %d cancelled of %d\ncreated\t%s\ntook\t%s\n",
				run.ID, run.Workflow, run.Status, run.Generation, run.Succeeded, run.Failed, run.Skipped, run.Cancelled, run.Total,
				when(run.CreatedAt), took(run.StartedAt, run.EndedAt))
			if run.Tenant != "" || run.Service != "" {
				fmt.Fprintf(w, "tenant\t%s\nservice\t%s\n", run.Tenant, run.Service)
			}
			fmt.Fprintln(w)
			row(w, "TASK", "STATUS", "ATTEMPT", "AFTER", "TOOK", "ERROR")
			for _, t := range out.Tasks {
				after := ""
				for i, d := range t.Deps {
					if i > 0 {
						after += ","
					}
					after += d.Task
				}
				ti := run.Task(t.Name)
				note := t.Error
				if note == "" {
					note = t.WaitingFor
				}
				row(w, t.Name, t.Status, t.Attempt, after, took(ti.StartedAt, ti.EndedAt), clip(note, 60))
			}
		})
	}
}

// readRun reads a run and, where the store keeps it, its definition.
func readRun(e *env, s *plait.Scheduler, id string) (*plait.Run, *plait.WorkflowSpec, error) {
	run, err := s.RunGet(e.ctx, id)
	if err != nil {
		return nil, nil, err
	}
	spec, err := s.RunSpecGet(e.ctx, id)
	if err != nil {
		return run, nil, nil // a store without definitions still shows the run
	}
	return run, spec.Spec, nil
}

// runAction is a run action on the runs named, or on the runs a query
// selects.
func runAction(a action.Action) func(*flag.FlagSet) func(*env, []string) error {
	return func(fs *flag.FlagSet) func(*env, []string) error {
		filter := runFilterFlags(fs, time.Now)
		opts := actionFlags(fs)
		var tasks *string
		if a == action.RunReplay {
			tasks = fs.String("tasks", "", "with one run named, replay these of its tasks, comma-separated (default: every failed, dead, cancelled or skipped one)")
		}
		return func(e *env, args []string) error {
			f, err := filter()
			if err != nil {
				return err
			}
			var t action.Target
			if tasks != nil && *tasks != "" {
				if len(args) != 1 {
					return usagef("-tasks needs exactly one run named")
				}
				for _, task := range splitList(*tasks) {
					t.Refs = append(t.Refs, action.Ref{RunID: args[0], Task: task})
				}
				return e.act(a, t, opts)
			}
			switch {
			case len(args) > 0 && queryFlagsSet(fs, runQueryFlags):
				return usagef("name runs or give a query, not both")
			case len(args) > 0:
				t.IDs = args
			case queryFlagsSet(fs, runQueryFlags):
				t.Runs = &f
			default:
				return usagef("name runs, or select them by a query (-status, -workflow, -created-from...)")
			}
			return e.act(a, t, opts)
		}
	}
}

// runQueryFlags are the flags that make a run query.
var runQueryFlags = []string{"status", "workflow", "service", "tenant", "created-from", "created-to", "ended-from", "ended-to", "error-prefix"}

// queryFlagsSet reports whether any of names was given on the command line.
func queryFlagsSet(fs *flag.FlagSet, names []string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		for _, n := range names {
			if f.Name == n {
				set = true
			}
		}
	})
	return set
}
