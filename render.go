package plait

import (
	"fmt"
	"strconv"
	"strings"
)

// ErrNoSpec: [RenderMermaid] or [RenderDOT] got a nil spec, as from a run
// whose definition was not read (see [Scheduler.RunSpecGet]). It wraps
// [ErrInvalidArgument].
var ErrNoSpec = fmt.Errorf("plait: no workflow spec to render: %w", ErrInvalidArgument)

// Mermaid renders the workflow as a Mermaid flowchart; run, when not nil,
// adds each task's state from that run of it. See [RenderMermaid]; a
// workflow always has a spec, so this cannot fail.
func (w *Workflow) Mermaid(run *Run) string {
	out, _ := RenderMermaid(w.draftSpec(), run)
	return out
}

// DOT renders the workflow as a Graphviz DOT digraph; run, when not nil,
// adds each task's state from that run of it. See [RenderDOT]; a workflow
// always has a spec, so this cannot fail.
func (w *Workflow) DOT(run *Run) string {
	out, _ := RenderDOT(w.draftSpec(), run)
	return out
}

// draftSpec is the workflow's shape as defined so far, valid or not, with
// no payload encoded.
func (w *Workflow) draftSpec() *WorkflowSpec {
	spec := &WorkflowSpec{Name: w.name, Strategy: w.strategy, Tasks: make([]TaskSpec, len(w.tasks))}
	for i, d := range w.tasks {
		spec.Tasks[i] = d.spec
	}
	return spec
}

// statusStyles lists, in the order classes are declared, each task status
// with its fill and stroke colours.
var statusStyles = []struct {
	status       TaskStatus
	fill, stroke string
}{
	{TaskPending, "#eeeeee", "#9e9e9e"},
	{TaskReady, "#e3f2fd", "#1e88e5"},
	{TaskRunning, "#bbdefb", "#1565c0"},
	{TaskRetrying, "#fff3e0", "#fb8c00"},
	{TaskSucceeded, "#c8e6c9", "#2e7d32"},
	{TaskFailed, "#ffcdd2", "#c62828"},
	{TaskDead, "#d7ccc8", "#4e342e"},
	{TaskSkipped, "#f5f5f5", "#bdbdbd"},
	{TaskCancelled, "#fff9c4", "#f9a825"},
}

func styleOf(s TaskStatus) (fill, stroke string, ok bool) {
	for _, st := range statusStyles {
		if st.status == s {
			return st.fill, st.stroke, true
		}
	}
	return "", "", false
}

// renderTask is what a node shows.
type renderTask struct {
	spec  *TaskSpec
	state *TaskInstance // nil without a run, or when the run lacks the task
}

func renderTasks(spec *WorkflowSpec, run *Run) []renderTask {
	out := make([]renderTask, len(spec.Tasks))
	for i := range spec.Tasks {
		out[i].spec = &spec.Tasks[i]
		if run != nil {
			out[i].state = run.Task(spec.Tasks[i].Name)
		}
	}
	return out
}

// labelLines are the lines of a node's label.
func (t renderTask) labelLines() []string {
	lines := []string{t.spec.Name}
	if t.spec.Join == JoinAny && len(t.spec.Deps) > 1 {
		lines = append(lines, "any of")
	}
	if t.state != nil {
		s := string(t.state.Status)
		if t.state.Attempt > 1 {
			s += ", " + strconv.Itoa(t.state.Attempt) + " attempts"
		}
		lines = append(lines, s)
	}
	return lines
}

// edgeLabel is the label of an edge on condition c, empty for success.
func edgeLabel(c Condition) string {
	if c == OnSuccess {
		return ""
	}
	return "on " + c.String()
}

// RenderMermaid renders spec as a Mermaid flowchart, top to bottom: one
// node per task in definition order (ids t0, t1, ...), one edge per
// dependency from parent to child. An edge on a condition other than
// success is labelled with it ("on failure", "on completion"), and a task
// that starts on any one of its edges says "any of" under its name. With a
// run of the workflow (not nil), each node also shows its task's status,
// and its attempt count past the first, and is coloured by status. A
// dependency on a task the workflow lacks is left out. The same input
// renders the same bytes.
//
// A stored run is drawn from its definition and its state:
// [Scheduler.RunSpecGet] and [Scheduler.RunGet]. A nil spec answers
// [ErrNoSpec], which wraps [ErrInvalidArgument].
func RenderMermaid(spec *WorkflowSpec, run *Run) (string, error) {
	if spec == nil {
		return "", ErrNoSpec
	}
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	if run != nil {
		b.WriteString("  %% run " + run.ID + ": " + string(run.Status) + "\n")
	}
	tasks := renderTasks(spec, run)
	index := make(map[string]int, len(tasks))
	for i, t := range tasks {
		index[t.spec.Name] = i
	}
	used := map[TaskStatus]bool{}
	for i, t := range tasks {
		b.WriteString("  t" + strconv.Itoa(i) + "[\"" + mermaidText(strings.Join(t.labelLines(), "\n")) + "\"]")
		if t.state != nil {
			if _, _, ok := styleOf(t.state.Status); ok {
				b.WriteString(":::" + string(t.state.Status))
				used[t.state.Status] = true
			}
		}
		b.WriteString("\n")
	}
	for i, t := range tasks {
		for _, d := range t.spec.Deps {
			p, ok := index[d.Task]
			if !ok {
				continue
			}
			b.WriteString("  t" + strconv.Itoa(p) + " -->")
			if l := edgeLabel(d.On); l != "" {
				b.WriteString("|" + l + "|")
			}
			b.WriteString(" t" + strconv.Itoa(i) + "\n")
		}
	}
	for _, st := range statusStyles {
		if used[st.status] {
			b.WriteString("  classDef " + string(st.status) + " fill:" + st.fill + ",stroke:" + st.stroke + "\n")
		}
	}
	return b.String(), nil
}

// mermaidText escapes a label for a quoted Mermaid node text: quotes and
// angle brackets as entities, line breaks as <br/>.
func mermaidText(s string) string {
	r := strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "\n", "<br/>")
	return r.Replace(s)
}

// RenderDOT renders spec as a Graphviz DOT digraph, with the nodes, edges,
// labels and colours of [RenderMermaid]; nodes are named by their task
// names, and edges on a condition other than success are dashed. A nil
// spec answers [ErrNoSpec].
func RenderDOT(spec *WorkflowSpec, run *Run) (string, error) {
	if spec == nil {
		return "", ErrNoSpec
	}
	var b strings.Builder
	b.WriteString("digraph " + dotQuote(spec.Name) + " {\n")
	if run != nil {
		b.WriteString("  label=" + dotQuote("run "+run.ID+": "+string(run.Status)) + ";\n  labelloc=t;\n")
	}
	b.WriteString("  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\"];\n")
	tasks := renderTasks(spec, run)
	index := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		index[t.spec.Name] = true
	}
	for _, t := range tasks {
		b.WriteString("  " + dotQuote(t.spec.Name) + " [label=" + dotQuote(strings.Join(t.labelLines(), "\n")))
		if t.state != nil {
			if fill, stroke, ok := styleOf(t.state.Status); ok {
				b.WriteString(", fillcolor=\"" + fill + "\", color=\"" + stroke + "\"")
			}
		}
		b.WriteString("];\n")
	}
	for _, t := range tasks {
		for _, d := range t.spec.Deps {
			if !index[d.Task] {
				continue
			}
			b.WriteString("  " + dotQuote(d.Task) + " -> " + dotQuote(t.spec.Name))
			if l := edgeLabel(d.On); l != "" {
				b.WriteString(" [label=" + dotQuote(l) + ", style=dashed]")
			}
			b.WriteString(";\n")
		}
	}
	b.WriteString("}\n")
	return b.String(), nil
}

// dotQuote quotes s as a DOT string: backslashes and quotes escaped, line
// breaks as \n.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
