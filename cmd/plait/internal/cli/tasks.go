package cli

import (
	"flag"
	"io"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/action"
	"github.com/plaitdag/plait/store"
)

func taskCommands() []command {
	return []command{
		{path: "tasks ls", short: "list tasks across runs by status, queue, handler or node", flags: tasksList},
		{path: "tasks run-now", args: "RUN TASK...", short: "make tasks waiting on a delay or a backoff ready now", flags: taskAction(action.TaskRunNow)},
		{path: "tasks skip", args: "RUN TASK...", short: "skip tasks that have not started", flags: taskAction(action.TaskSkip)},
		{path: "tasks cancel", args: "RUN TASK...", short: "cancel unfinished tasks, running ones too", flags: taskAction(action.TaskCancel)},
	}
}

func tasksList(fs *flag.FlagSet) func(*env, []string) error {
	status := fs.String("status", "running", "statuses, comma-separated: pending, ready, running, retrying...")
	queue := fs.String("queue", "", "the queue")
	handler := fs.String("handler", "", "the handler")
	node := fs.String("node", "", "the node running them")
	tenant := fs.String("tenant", "", "the tenant")
	service := fs.String("service", "", "the service")
	pg := pagingFlags(fs, 50, store.TaskSearchPageMax)
	var p plait.TaskSearchParams
	params := func() error {
		p = plait.TaskSearchParams{Queue: *queue, Handler: *handler, Node: *node, Tenant: *tenant, Service: *service, Cursor: pg.cursor, Limit: pg.limit}
		for _, st := range splitList(*status) {
			p.Statuses = append(p.Statuses, plait.TaskStatus(st))
		}
		if err := p.Validate(); err != nil {
			return usagef("%v", err)
		}
		return nil
	}
	return listed(func(e *env, s *plait.Scheduler) error {
		res, err := s.TaskSearch(e.ctx, p)
		if err != nil {
			return err
		}
		out := page[taskJSON]{Items: make([]taskJSON, 0, len(res.Tasks)), NextCursor: res.NextCursor}
		for i := range res.Tasks {
			h := &res.Tasks[i]
			t := taskOf(&h.TaskInstance, nil)
			t.RunID, t.Workflow, t.Queue, t.Attempts = h.RunID, h.Workflow, h.Queue, nil
			out.Items = append(out.Items, t)
		}
		return e.emit(out, func(w io.Writer) {
			row(w, "RUN", "TASK", "WORKFLOW", "STATUS", "QUEUE", "ATTEMPT", "NODE", "STARTED")
			for i := range res.Tasks {
				h := &res.Tasks[i]
				row(w, h.RunID, h.Name, h.Workflow, h.Status, h.Queue, h.Attempt, h.Node, when(h.StartedAt))
			}
			more(w, res.NextCursor)
		})
	}, pg.check, params)
}

// taskAction is a task action on tasks of one run.
func taskAction(a action.Action) func(*flag.FlagSet) func(*env, []string) error {
	return func(fs *flag.FlagSet) func(*env, []string) error {
		opts := actionFlags(fs)
		return func(e *env, args []string) error {
			if len(args) < 2 {
				return usagef("want a run id and one or more task names")
			}
			t := action.Target{}
			for _, task := range args[1:] {
				t.Refs = append(t.Refs, action.Ref{RunID: args[0], Task: task})
			}
			return e.act(a, t, opts)
		}
	}
}
