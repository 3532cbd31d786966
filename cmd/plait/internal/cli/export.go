package cli

import (
	"encoding/csv"
	"errors"
	"flag"
	"io"
	"strconv"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

func exportCommands() []command {
	return []command{
		{path: "export", short: "write the runs of a time range with their tasks and attempts, as JSON lines or CSV", flags: exportRuns},
	}
}

func exportRuns(fs *flag.FlagSet) func(*env, []string) error {
	from := fs.String("from", "", "the range's start (required): RFC 3339, a date or an age (24h)")
	to := fs.String("to", "", "the range's end, not included (same forms; default: none)")
	by := fs.String("by", "end", "select runs by end time (finished runs) or by creation time: end or created")
	format := fs.String("format", "", "jsonl or csv (default jsonl with -o json, csv with -o table)")
	workflow := fs.String("workflow", "", "the workflow")
	service := fs.String("service", "", "the service")
	tenant := fs.String("tenant", "", "the tenant")
	return func(e *env, args []string) error {
		if err := wantArgs(args, 0, "no argument"); err != nil {
			return err
		}
		now := time.Now()
		start, err := parseWhen(*from, now)
		if err != nil || start.IsZero() {
			return usagef("-from: want a time (RFC 3339, a date or an age)")
		}
		end, err := parseWhen(*to, now)
		if err != nil {
			return usagef("-to: %v", err)
		}
		f := plait.RunFilter{Workflow: *workflow, Service: *service, Tenant: *tenant}
		switch *by {
		case "end":
			f.EndedFrom, f.EndedTo = start, end
		case "created":
			f.CreatedFrom, f.CreatedTo = start, end
		default:
			return usagef("-by %q: want end or created", *by)
		}
		if err := f.Validate(); err != nil {
			return usagef("%v", err)
		}
		if *format == "" {
			*format = map[string]string{"json": "jsonl", "table": "csv"}[e.output]
		}
		if *format != "jsonl" && *format != "csv" {
			return usagef("-format %q: want jsonl or csv", *format)
		}
		s, err := e.scheduler()
		if err != nil {
			return err
		}
		x := &exporter{e: e, s: s, csv: *format == "csv"}
		return x.run(f)
	}
}

// exporter writes the runs of a filter, page by page: a run as one JSON
// line with its tasks and their attempts, or one CSV row per attempt (a
// task that never started has one row without attempt).
type exporter struct {
	e   *env
	s   *plait.Scheduler
	csv bool
	w   *csv.Writer
	n   int
}

var exportHeader = []string{"run_id", "workflow", "run_status", "tenant", "service", "run_created_at", "run_ended_at",
	"task", "task_status", "attempt", "outcome", "node", "started_at", "ended_at", "duration_ms", "error"}

func (x *exporter) run(f plait.RunFilter) error {
	if x.csv {
		x.w = csv.NewWriter(x.e.stdout)
		if err := x.w.Write(exportHeader); err != nil {
			return err
		}
	}
	cursor := ""
	for {
		res, err := x.s.RunList(x.e.ctx, plait.RunListParams{Filter: f, Cursor: cursor, Limit: store.QueryLimitMax})
		if err != nil {
			return err
		}
		for _, r := range res.Runs {
			if err := x.one(r); err != nil {
				return err
			}
		}
		if x.e.tty {
			io.WriteString(x.e.stderr, "\rexported "+strconv.Itoa(x.n)+" runs")
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	if x.e.tty {
		io.WriteString(x.e.stderr, "\n")
	}
	if x.csv {
		x.w.Flush()
		return x.w.Error()
	}
	return nil
}

func (x *exporter) one(r *plait.Run) error {
	hist, err := x.s.RunHistory(x.e.ctx, r.ID)
	if err != nil && !errorsIsUnsupported(err) {
		return err
	}
	attempts := make(map[string][]plait.Attempt, len(hist))
	for _, h := range hist {
		attempts[h.Task] = h.Attempts
	}
	x.n++
	if !x.csv {
		j := runOf(r)
		for i := range r.Tasks {
			t := taskOf(&r.Tasks[i], nil)
			if as, ok := attempts[t.Name]; ok {
				t.Attempts = attemptsOf(as)
			}
			j.Tasks = append(j.Tasks, t)
		}
		return jsonLine(x.e.stdout, j)
	}
	ts := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	for i := range r.Tasks {
		t := &r.Tasks[i]
		head := []string{r.ID, r.Workflow, string(r.Status), r.Tenant, r.Service, ts(r.CreatedAt), ts(r.EndedAt), t.Name, string(t.Status)}
		as := attempts[t.Name]
		if as == nil {
			as = t.Attempts
		}
		if len(as) == 0 {
			if err := x.w.Write(append(head, "", "", "", "", "", "", t.Error)); err != nil {
				return err
			}
			continue
		}
		for _, a := range as {
			rec := append(append([]string{}, head...), strconv.Itoa(a.Attempt), a.Outcome, a.Node, ts(a.StartedAt), ts(a.EndedAt),
				strconv.FormatInt(a.Duration.Milliseconds(), 10), a.Error)
			if err := x.w.Write(rec); err != nil {
				return err
			}
		}
	}
	return nil
}

func errorsIsUnsupported(err error) bool { return errors.Is(err, plait.ErrUnsupported) }
