package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/plaitdag/plait"
)

// The text DAG of `runs watch`: the run's tasks in layers, as the web view
// lays them out (a task one layer below its deepest parent), each task a
// box of its name, its state and its parents, the layers top to bottom and
// a layer's boxes side by side, wrapped to the width.

// boxWidth bounds a box's inner width; longer names are cut.
const boxWidth = 24

// layers answers the tasks of spec in layers: roots first, each task one
// layer below its deepest parent, definition order within a layer.
func layers(spec *plait.WorkflowSpec) [][]*plait.TaskSpec {
	depth := make(map[string]int, len(spec.Tasks))
	var at func(t *plait.TaskSpec, seen int) int
	byName := make(map[string]*plait.TaskSpec, len(spec.Tasks))
	for i := range spec.Tasks {
		byName[spec.Tasks[i].Name] = &spec.Tasks[i]
	}
	at = func(t *plait.TaskSpec, seen int) int {
		if d, ok := depth[t.Name]; ok {
			return d
		}
		d := 0
		if seen <= len(spec.Tasks) { // a stored DAG has no cycle; the bound keeps a bad one finite
			for _, dep := range t.Deps {
				if p := byName[dep.Task]; p != nil {
					d = max(d, at(p, seen+1)+1)
				}
			}
		}
		depth[t.Name] = d
		return d
	}
	var out [][]*plait.TaskSpec
	for i := range spec.Tasks {
		d := at(&spec.Tasks[i], 0)
		for len(out) <= d {
			out = append(out, nil)
		}
		out[d] = append(out[d], &spec.Tasks[i])
	}
	return out
}

// mark is a status's sign in a box: a glance tells done from waiting from
// wrong.
func mark(st plait.TaskStatus) string {
	switch st {
	case plait.TaskSucceeded:
		return "[ok]"
	case plait.TaskRunning:
		return "[>>]"
	case plait.TaskReady:
		return "[..]"
	case plait.TaskRetrying:
		return "[~~]"
	case plait.TaskFailed, plait.TaskDead:
		return "[XX]"
	case plait.TaskSkipped:
		return "[--]"
	case plait.TaskCancelled:
		return "[ x]"
	}
	return "[  ]"
}

// stateLine is a box's second line: the status and what is known of the
// attempt: its progress, its duration, its attempt number past the first.
func stateLine(t *plait.TaskInstance) string {
	if t == nil {
		return mark(plait.TaskPending) + " pending"
	}
	s := mark(t.Status) + " " + string(t.Status)
	if t.Status == plait.TaskRunning && t.Progress != nil {
		s += fmt.Sprintf(" %d%%", int(t.Progress.Value*100))
	}
	if d := took(t.StartedAt, t.EndedAt); d != "-" {
		s += " " + d
	}
	if t.Attempt > 1 {
		s += fmt.Sprintf(" #%d", t.Attempt)
	}
	return s
}

// drawDAG writes run's DAG as text, width columns at most.
func drawDAG(w io.Writer, spec *plait.WorkflowSpec, run *plait.Run, width int) {
	fmt.Fprintf(w, "%s  %s  %s  generation %d\n", run.Workflow, run.ID, strings.ToUpper(string(run.Status)), run.Generation)
	running := 0
	for i := range run.Tasks {
		if run.Tasks[i].Status == plait.TaskRunning {
			running++
		}
	}
	fmt.Fprintf(w, "%d/%d succeeded, %d running, %d failed, %d skipped, %d cancelled\n",
		run.Succeeded, run.Total, running, run.Failed, run.Skipped, run.Cancelled)
	for i, layer := range layers(spec) {
		if i > 0 {
			fmt.Fprintln(w, "      |")
			fmt.Fprintln(w, "      v")
		} else {
			fmt.Fprintln(w)
		}
		boxes := layerBoxes(layer, run)
		drawRow(w, boxes, width)
	}
	if failed := failures(run); failed != "" {
		fmt.Fprintln(w)
		fmt.Fprint(w, failed)
	}
}

// groupAbove is the number of boxes of a layer past which siblings (tasks
// of one handler with the same parents) are drawn as one box, as the web
// view groups them (same handler, same parents on the same conditions):
// a fan-out of a hundred shards is one box, not twenty rows.
const groupAbove = 8

// layerBoxes answers the boxes of one layer: a box per task, or, in a
// layer wider than groupAbove, a box per group of three siblings or more.
func layerBoxes(layer []*plait.TaskSpec, run *plait.Run) [][3]string {
	type group struct {
		members []*plait.TaskSpec
	}
	var order []*group
	byKey := map[string]*group{}
	for _, t := range layer {
		key := t.Handler
		for _, d := range t.Deps {
			key += "\x00" + d.Task + "\x00" + d.On.String()
		}
		if len(layer) <= groupAbove {
			key = t.Name // no grouping: one task a group
		}
		g := byKey[key]
		if g == nil {
			g = &group{}
			byKey[key] = g
			order = append(order, g)
		}
		g.members = append(g.members, t)
	}
	var boxes [][3]string
	for _, g := range order {
		if len(g.members) < 3 {
			for _, t := range g.members {
				boxes = append(boxes, taskBox(t, run))
			}
			continue
		}
		boxes = append(boxes, groupBox(g.members, run))
	}
	return boxes
}

func taskBox(t *plait.TaskSpec, run *plait.Run) [3]string {
	b := [3]string{cut(t.Name, boxWidth), cut(stateLine(run.Task(t.Name)), boxWidth), ""}
	b[2] = parentsLine(t)
	return b
}

func parentsLine(t *plait.TaskSpec) string {
	if len(t.Deps) == 0 {
		return ""
	}
	parents := make([]string, len(t.Deps))
	for k, d := range t.Deps {
		parents[k] = d.Task
	}
	if len(parents) > 3 {
		// Many parents are a fan-in: named by what their names share.
		if prefix := commonPrefix(parents); prefix != "" {
			return cut(fmt.Sprintf("<- %s* (%d)", prefix, len(parents)), boxWidth)
		}
		return fmt.Sprintf("<- %d parents", len(parents))
	}
	return cut("<- "+strings.Join(parents, ","), boxWidth)
}

// commonPrefix is the longest start all names share.
func commonPrefix(names []string) string {
	prefix := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	return prefix
}

// groupBox is one box for sibling tasks: their names' common start and
// their number, and how many are in each state.
func groupBox(members []*plait.TaskSpec, run *plait.Run) [3]string {
	names := make([]string, len(members))
	counts := map[plait.TaskStatus]int{}
	for i, t := range members {
		names[i] = t.Name
		st := plait.TaskPending
		if ti := run.Task(t.Name); ti != nil {
			st = ti.Status
		}
		counts[st]++
	}
	var state []string
	for _, st := range []plait.TaskStatus{plait.TaskSucceeded, plait.TaskRunning, plait.TaskReady, plait.TaskRetrying,
		plait.TaskFailed, plait.TaskDead, plait.TaskSkipped, plait.TaskCancelled, plait.TaskPending} {
		if n := counts[st]; n > 0 {
			state = append(state, mark(st)+strconv.Itoa(n))
		}
	}
	prefix := commonPrefix(names)
	name := fmt.Sprintf("%s* (%d)", prefix, len(members))
	if prefix == "" {
		name = fmt.Sprintf("%s and %d more", members[0].Name, len(members)-1)
	}
	return [3]string{cut(name, boxWidth), cut(strings.Join(state, " "), boxWidth), parentsLine(members[0])}
}

// drawRow writes boxes side by side, as many per line as width holds.
func drawRow(w io.Writer, boxes [][3]string, width int) {
	inner := 0
	lines := 2
	for _, b := range boxes {
		for _, s := range b {
			inner = max(inner, len([]rune(s)))
		}
		if b[2] != "" {
			lines = 3
		}
	}
	per := max(1, (width-2)/(inner+6))
	edge := "+" + strings.Repeat("-", inner+2) + "+"
	for start := 0; start < len(boxes); start += per {
		part := boxes[start:min(len(boxes), start+per)]
		var b strings.Builder
		put := func(cell func(box [3]string) string) {
			b.WriteString("  ")
			for i, box := range part {
				if i > 0 {
					b.WriteString("  ")
				}
				b.WriteString(cell(box))
			}
			b.WriteString("\n")
		}
		put(func([3]string) string { return edge })
		for l := 0; l < lines; l++ {
			put(func(box [3]string) string {
				s := box[l]
				return "| " + s + strings.Repeat(" ", inner-len([]rune(s))) + " |"
			})
		}
		put(func([3]string) string { return edge })
		fmt.Fprint(w, strings.ReplaceAll(b.String(), " \n", "\n"))
	}
}

// failures lists the errors of the tasks that failed, one a line.
func failures(run *plait.Run) string {
	var b strings.Builder
	for i := range run.Tasks {
		t := &run.Tasks[i]
		if t.Error != "" && (t.Status == plait.TaskFailed || t.Status == plait.TaskDead || t.Status == plait.TaskRetrying) {
			fmt.Fprintf(&b, "  %s: %s\n", t.Name, clip(t.Error, 100))
		}
	}
	return b.String()
}

// cut cuts s to n runes, marking the cut.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "~"
}
