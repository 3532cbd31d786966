package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/action"
	"github.com/plaitdag/plait/internal/apijson"
	"github.com/plaitdag/plait/store"
)

func dlqCommands() []command {
	return []command{
		{path: "dlq ls", short: "list dead letters (tasks that failed for good), newest first", flags: dlqList},
		{path: "dlq groups", short: "dead letters grouped by error (numbers and ids taken out), the largest group first", flags: dlqGroups},
		{path: "dlq show", args: "RUN TASK", short: "show a dead letter: its error, attempts and payload", flags: dlqShow},
		{path: "dlq replay", args: "[RUN/TASK...]", short: "send dead letters' tasks back to their queue, named or by a query", flags: dlqAction(action.DeadLetterRequeue)},
		{path: "dlq purge", args: "[RUN/TASK...]", short: "remove dead letters from the list, named or by a query", flags: dlqAction(action.DeadLetterPurge)},
	}
}

type letterJSON struct {
	RunID    string        `json:"runId"`
	Task     string        `json:"task"`
	Workflow string        `json:"workflow"`
	Tenant   string        `json:"tenant,omitempty"`
	Service  string        `json:"service,omitempty"`
	Queue    string        `json:"queue,omitempty"`
	Handler  string        `json:"handler,omitempty"`
	Status   string        `json:"status"`
	Error    string        `json:"error,omitempty"`
	At       apijson.Stamp `json:"at,omitzero"`
}

// letterFilterFlags declares the flags of a dead-letter query.
// withKey adds -error-key (an action's query: the engine checks the key
// letter by letter; a listing has none).
func letterFilterFlags(fs *flag.FlagSet, withKey bool) func() (action.DeadLetterFilter, error) {
	var f action.DeadLetterFilter
	fs.StringVar(&f.RunID, "run", "", "the run")
	fs.StringVar(&f.Workflow, "workflow", "", "the workflow")
	fs.StringVar(&f.Task, "task", "", "the task's name")
	fs.StringVar(&f.Tenant, "tenant", "", "the tenant")
	fs.StringVar(&f.Service, "service", "", "the service")
	fs.StringVar(&f.Queue, "queue", "", "the queue")
	fs.StringVar(&f.Handler, "handler", "", "the handler")
	fs.StringVar(&f.ErrorPrefix, "error-prefix", "", "the error starts with this")
	var key *string
	if withKey {
		key = fs.String("error-key", "", "the error's group key, as dlq groups shows it")
	}
	since := fs.String("since", "", "dead-lettered at or after: RFC 3339, a date or an age (24h)")
	until := fs.String("until", "", "dead-lettered before (same forms)")
	return func() (action.DeadLetterFilter, error) {
		var err error
		now := time.Now()
		if f.Since, err = parseWhen(*since, now); err != nil {
			return f, usagef("-since: %v", err)
		}
		if f.Until, err = parseWhen(*until, now); err != nil {
			return f, usagef("-until: %v", err)
		}
		if key != nil {
			f.ErrorKey = *key
		}
		return f, nil
	}
}

var letterQueryFlags = []string{"run", "workflow", "task", "tenant", "service", "queue", "handler", "error-prefix", "error-key", "since", "until"}

func dlqList(fs *flag.FlagSet) func(*env, []string) error {
	filter := letterFilterFlags(fs, false)
	pg := pagingFlags(fs, 50, store.DeadLetterPageMax)
	var f action.DeadLetterFilter
	return listed(func(e *env, s *plait.Scheduler) error {
		res, err := s.DeadLetterList(e.ctx, plait.DeadLetterListParams{
			RunID: f.RunID, Workflow: f.Workflow, Task: f.Task, Tenant: f.Tenant, Service: f.Service, Queue: f.Queue,
			Handler: f.Handler, ErrorPrefix: f.ErrorPrefix, Since: f.Since, Until: f.Until, Cursor: pg.cursor, Limit: pg.limit,
		})
		if err != nil {
			return err
		}
		out := page[letterJSON]{Items: make([]letterJSON, 0, len(res.Letters)), NextCursor: res.NextCursor}
		for _, l := range res.Letters {
			out.Items = append(out.Items, letterJSON{RunID: l.RunID, Task: l.Task, Workflow: l.Workflow, Tenant: l.Tenant,
				Service: l.Service, Queue: l.Queue, Handler: l.Handler, Status: string(l.Status), Error: l.Error, At: apijson.Stamp(l.At)})
		}
		return e.emit(out, func(w io.Writer) {
			row(w, "RUN", "TASK", "WORKFLOW", "STATUS", "AT", "ERROR")
			for _, l := range res.Letters {
				row(w, l.RunID, l.Task, l.Workflow, l.Status, when(l.At), clip(l.Error, 60))
			}
			more(w, res.NextCursor)
		})
	}, into(&f, filter), pg.check)
}

func dlqShow(fs *flag.FlagSet) func(*env, []string) error {
	return func(e *env, args []string) error {
		if len(args) == 1 && strings.Contains(args[0], "/") {
			args = strings.SplitN(args[0], "/", 2)
		}
		if err := wantArgs(args, 2, "a run id and a task name (or RUN/TASK)"); err != nil {
			return err
		}
		s, err := e.scheduler()
		if err != nil {
			return err
		}
		d, err := s.DeadLetterGet(e.ctx, args[0], args[1])
		if err != nil {
			return err
		}
		type detailJSON struct {
			RunID string `json:"runId"`
			taskJSON
			Payload string `json:"payload,omitempty"`
		}
		out := detailJSON{RunID: args[0], taskJSON: taskOf(&d.TaskInstance, nil), Payload: string(d.Payload)}
		return e.emit(out, func(w io.Writer) {
			fmt.Fprintf(w, "run\t%s\ntask\t%s\nhandler\t%s\nqueue\t%s\nstatus\t%s\nattempts\t%d\nerror\t%s\npayload\t%s\n\n",
				args[0], d.Name, d.Handler, d.Queue, d.Status, d.Attempt, d.Error, clip(string(d.Payload), 200))
			row(w, "ATTEMPT", "OUTCOME", "NODE", "STARTED", "TOOK", "ERROR")
			for _, a := range d.Attempts {
				row(w, a.Attempt, a.Outcome, a.Node, when(a.StartedAt), dur(a.Duration), clip(a.Error, 60))
			}
		})
	}
}

// dlqAction is a dead-letter action on the letters named (RUN/TASK), or
// on those a query selects.
func dlqAction(a action.Action) func(*flag.FlagSet) func(*env, []string) error {
	return func(fs *flag.FlagSet) func(*env, []string) error {
		filter := letterFilterFlags(fs, true)
		opts := actionFlags(fs)
		return func(e *env, args []string) error {
			f, err := filter()
			if err != nil {
				return err
			}
			var t action.Target
			query := queryFlagsSet(fs, letterQueryFlags)
			switch {
			case len(args) > 0 && query:
				return usagef("name letters or give a query, not both")
			case len(args) > 0:
				for _, arg := range args {
					run, task, ok := strings.Cut(arg, "/")
					if !ok || run == "" || task == "" {
						return usagef("%q: name a letter as RUN/TASK", arg)
					}
					t.Refs = append(t.Refs, action.Ref{RunID: run, Task: task})
				}
			case query:
				t.DeadLetters = &f
			default:
				return usagef("name letters (RUN/TASK), or select them by a query (-workflow, -error-prefix, -since...)")
			}
			return e.act(a, t, opts)
		}
	}
}

type groupJSON struct {
	Key    string        `json:"key"`
	Count  int           `json:"count"`
	Oldest apijson.Stamp `json:"oldest,omitzero"`
	Newest apijson.Stamp `json:"newest,omitzero"`
	Sample letterJSON    `json:"sample"`
}

type groupsJSON struct {
	Groups     []groupJSON `json:"groups"`
	Letters    int         `json:"letters"`
	Truncated  bool        `json:"truncated"`
	NextCursor string      `json:"nextCursor,omitempty"`
}

func dlqGroups(fs *flag.FlagSet) func(*env, []string) error {
	filter := letterFilterFlags(fs, false)
	window := fs.Int("window", 1000, fmt.Sprintf("the newest letters grouped (1..%d)", store.DeadLetterGroupsWindowMax))
	cursor := fs.String("cursor", "", "the nextCursor of the previous window")
	var f action.DeadLetterFilter
	checkWindow := func() error {
		if *window < 1 || *window > store.DeadLetterGroupsWindowMax {
			return usagef("-window %d: want 1..%d", *window, store.DeadLetterGroupsWindowMax)
		}
		return nil
	}
	return listed(func(e *env, s *plait.Scheduler) error {
		res, err := s.DeadLetterGroups(e.ctx, plait.DeadLetterGroupsParams{
			RunID: f.RunID, Workflow: f.Workflow, Task: f.Task, Tenant: f.Tenant, Service: f.Service, Queue: f.Queue,
			Handler: f.Handler, ErrorPrefix: f.ErrorPrefix, Since: f.Since, Until: f.Until, Cursor: *cursor, Window: *window,
		})
		if err != nil {
			return err
		}
		out := groupsJSON{Groups: make([]groupJSON, 0, len(res.Groups)), Letters: res.Letters, Truncated: res.Truncated, NextCursor: res.NextCursor}
		for _, g := range res.Groups {
			l := g.Sample
			out.Groups = append(out.Groups, groupJSON{Key: g.Key, Count: g.Count, Oldest: apijson.Stamp(g.Oldest), Newest: apijson.Stamp(g.Newest),
				Sample: letterJSON{RunID: l.RunID, Task: l.Task, Workflow: l.Workflow, Tenant: l.Tenant, Service: l.Service,
					Queue: l.Queue, Handler: l.Handler, Status: string(l.Status), Error: l.Error, At: apijson.Stamp(l.At)}})
		}
		return e.emit(out, func(w io.Writer) {
			row(w, "COUNT", "NEWEST", "SAMPLE", "ERROR KEY")
			for _, g := range res.Groups {
				row(w, g.Count, when(g.Newest), g.Sample.RunID+"/"+g.Sample.Task, clip(g.Key, 80))
			}
			if res.Truncated {
				fmt.Fprintf(w, "(%d letters grouped; more: -cursor %s)\n", res.Letters, res.NextCursor)
			}
		})
	}, into(&f, filter), checkWindow)
}
