package cli

import (
	"flag"
	"io"
	"sort"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

func statsCommands() []command {
	return []command{
		{path: "stats", short: "counters per queue and per workflow, duration percentiles per task", flags: statsShow},
	}
}

type countersJSON struct {
	Name      string `json:"name"`
	Submitted int64  `json:"submitted"`
	Running   int64  `json:"running"`
	Succeeded int64  `json:"succeeded"`
	Failed    int64  `json:"failed"`
	Dead      int64  `json:"dead"`
	Retried   int64  `json:"retried"`
	Crashed   int64  `json:"crashed"`
}

type durationJSON struct {
	Task  string `json:"task"`
	Count int    `json:"count"`
	P50Ms int64  `json:"p50Ms"`
	P95Ms int64  `json:"p95Ms"`
	P99Ms int64  `json:"p99Ms"`
}

type statsJSON struct {
	Queues    []countersJSON `json:"queues"`
	Workflows []countersJSON `json:"workflows"`
	Tasks     []durationJSON `json:"tasks"`
}

func countersOf(m map[string]store.StatCounters) []countersJSON {
	out := make([]countersJSON, 0, len(m))
	for name, c := range m {
		out = append(out, countersJSON{Name: name, Submitted: c.Submitted, Running: c.Running, Succeeded: c.Succeeded,
			Failed: c.Failed, Dead: c.Dead, Retried: c.Retried, Crashed: c.Crashed})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func statsShow(fs *flag.FlagSet) func(*env, []string) error {
	return listed(func(e *env, s *plait.Scheduler) error {
		st, err := s.Stats(e.ctx)
		if err != nil {
			return err
		}
		out := statsJSON{Queues: countersOf(st.Queues), Workflows: countersOf(st.Workflows), Tasks: []durationJSON{}}
		for name, d := range st.Tasks {
			out.Tasks = append(out.Tasks, durationJSON{Task: name, Count: d.Count, P50Ms: d.P50.Milliseconds(),
				P95Ms: d.P95.Milliseconds(), P99Ms: d.P99.Milliseconds()})
		}
		sort.Slice(out.Tasks, func(i, j int) bool { return out.Tasks[i].Task < out.Tasks[j].Task })
		return e.emit(out, func(w io.Writer) {
			for _, part := range []struct {
				title string
				list  []countersJSON
			}{{"QUEUE", out.Queues}, {"WORKFLOW", out.Workflows}} {
				row(w, part.title, "SUBMITTED", "RUNNING", "SUCCEEDED", "FAILED", "DEAD", "RETRIED", "CRASHED")
				for _, c := range part.list {
					row(w, c.Name, c.Submitted, c.Running, c.Succeeded, c.Failed, c.Dead, c.Retried, c.Crashed)
				}
				row(w)
			}
			row(w, "TASK", "COUNT", "P50", "P95", "P99")
			for _, d := range out.Tasks {
				row(w, d.Task, d.Count, ms(d.P50Ms), ms(d.P95Ms), ms(d.P99Ms))
			}
		})
	})
}

func ms(n int64) string {
	if n == 0 {
		return "-" // no duration, or under a ms: the window keeps ms
	}
	return dur(time.Duration(n) * time.Millisecond)
}
