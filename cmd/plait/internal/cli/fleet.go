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

func queueCommands() []command {
	return []command{
		{path: "queues ls", short: "list queues: depth per priority, delayed, running, paused, nodes serving", flags: queuesList},
		{path: "queues pause", args: "QUEUE...", short: "stop claims from queues", flags: namedAction(action.QueuePause, "queue names")},
		{path: "queues resume", args: "QUEUE...", short: "let claims from queues start again", flags: namedAction(action.QueueResume, "queue names")},
	}
}

func nodeCommands() []command {
	return []command{
		{path: "nodes ls", short: "list live nodes: capabilities, load, heartbeat age, held tasks", flags: nodesList},
		{path: "nodes drain", args: "NODE...", short: "ask nodes to stop claiming and finish what they hold", flags: namedAction(action.NodeDrain, "node ids")},
	}
}

type queueJSON struct {
	Name     string   `json:"name"`
	Queue    string   `json:"queue"`
	Requires []string `json:"requires,omitempty"`
	Urgent   int      `json:"urgent"`
	High     int      `json:"high"`
	Normal   int      `json:"normal"`
	Low      int      `json:"low"`
	Ready    int      `json:"ready"`
	Delayed  int      `json:"delayed"`
	Running  int      `json:"running"`
	Limited  int      `json:"limited"`
	Paused   bool     `json:"paused"`
	Nodes    []string `json:"nodes"`
	Unserved bool     `json:"unserved"`
}

func queuesList(fs *flag.FlagSet) func(*env, []string) error {
	pg := pagingFlags(fs, 100, store.QueueListPageMax)
	return listed(func(e *env, s *plait.Scheduler) error {
		res, err := s.QueueList(e.ctx, plait.QueueListParams{Cursor: pg.cursor, Limit: pg.limit})
		if err != nil {
			return err
		}
		paused := map[string]bool{}
		if names, err := s.QueueListPaused(e.ctx); err == nil {
			for _, q := range names {
				paused[q] = true
			}
		}
		out := page[queueJSON]{Items: make([]queueJSON, 0, len(res.Queues)), NextCursor: res.NextCursor}
		for _, q := range res.Queues {
			out.Items = append(out.Items, queueJSON{Name: q.Name, Queue: q.Queue, Requires: q.Requires, Urgent: q.Urgent,
				High: q.High, Normal: q.Normal, Low: q.Low, Ready: q.Ready, Delayed: q.Delayed, Running: q.Running,
				Limited: q.Limited, Paused: paused[q.Queue], Nodes: append([]string{}, q.Nodes...), Unserved: q.Unserved})
		}
		return e.emit(out, func(w io.Writer) {
			row(w, "QUEUE", "READY", "U/H/N/L", "DELAYED", "RUNNING", "PAUSED", "NODES")
			for _, q := range out.Items {
				nodes := strings.Join(q.Nodes, ",")
				if q.Unserved {
					nodes = "none (unserved)"
				}
				row(w, q.Name, q.Ready, fmt.Sprintf("%d/%d/%d/%d", q.Urgent, q.High, q.Normal, q.Low), q.Delayed, q.Running, yesNo(q.Paused), clip(nodes, 50))
			}
		})
	}, pg.check)
}

type nodeJSON struct {
	ID             string        `json:"id"`
	Name           string        `json:"name,omitempty"`
	Host           string        `json:"host,omitempty"`
	PID            int           `json:"pid,omitempty"`
	Version        string        `json:"version,omitempty"`
	Capabilities   []string      `json:"capabilities,omitempty"`
	Queues         []string      `json:"queues,omitempty"`
	Capacity       int           `json:"capacity"`
	Load           int           `json:"load"`
	Completed      int64         `json:"completed"`
	Failed         int64         `json:"failed"`
	Held           []string      `json:"held"`
	Draining       bool          `json:"draining"`
	HeartbeatAt    apijson.Stamp `json:"heartbeatAt,omitzero"`
	HeartbeatAgeMs int64         `json:"heartbeatAgeMs"`
	StartedAt      apijson.Stamp `json:"startedAt,omitzero"`
}

func nodesList(fs *flag.FlagSet) func(*env, []string) error {
	return listed(func(e *env, s *plait.Scheduler) error {
		nodes, err := s.NodeList(e.ctx)
		if err != nil {
			return err
		}
		now := time.Now()
		out := make([]nodeJSON, 0, len(nodes))
		for _, n := range nodes {
			j := nodeJSON{ID: n.ID, Name: n.Name, Host: n.Host, PID: n.PID, Version: n.Version, Capabilities: n.Capabilities,
				Queues: n.Queues, Capacity: n.Capacity, Load: n.Load, Completed: n.Completed, Failed: n.Failed,
				Held: []string{}, Draining: n.Draining || n.DrainRequested, HeartbeatAt: apijson.Stamp(n.HeartbeatAt),
				HeartbeatAgeMs: max(0, now.Sub(n.HeartbeatAt).Milliseconds()), StartedAt: apijson.Stamp(n.StartedAt)}
			for _, t := range n.Tasks {
				j.Held = append(j.Held, t.RunID+"/"+t.Task)
			}
			out = append(out, j)
		}
		return e.emit(page[nodeJSON]{Items: out}, func(w io.Writer) {
			row(w, "NODE", "HOST", "LOAD", "QUEUES", "CAPABILITIES", "HEARTBEAT", "DRAINING", "HELD")
			for _, n := range out {
				row(w, n.ID, n.Host, fmt.Sprintf("%d/%d", n.Load, n.Capacity), strings.Join(n.Queues, ","), strings.Join(n.Capabilities, ","),
					dur(time.Duration(n.HeartbeatAgeMs)*time.Millisecond)+" ago", yesNo(n.Draining), clip(strings.Join(n.Held, ","), 50))
			}
		})
	})
}

// namedAction is an action on items named on the command line: queues,
// nodes or schedules.
func namedAction(a action.Action, what string) func(*flag.FlagSet) func(*env, []string) error {
	return func(fs *flag.FlagSet) func(*env, []string) error {
		opts := actionFlags(fs)
		return func(e *env, args []string) error {
			if len(args) == 0 {
				return usagef("want one or more %s", what)
			}
			return e.act(a, action.Target{IDs: args}, opts)
		}
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
