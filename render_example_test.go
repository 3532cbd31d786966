package plait_test

import (
	"fmt"

	"github.com/plaitdag/plait"
)

// renderWorkflow is a diamond with a cleanup edge on failure and a task
// that starts on either of two parents.
func renderWorkflow() *plait.Workflow {
	return plait.NewWorkflow("report").
		Task("fetch", "fetch", nil).
		Task("count", "count", nil, plait.After("fetch")).
		Task("longest", "longest", nil, plait.After("fetch")).
		Task("report", "report", nil, plait.After("count", "longest")).
		Task("cleanup", "cleanup", nil, plait.AfterFailure("report")).
		Task("notify", "notify", nil, plait.AfterCompletion("report", "cleanup"), plait.AnyOf())
}

// renderRun is a finished run of renderWorkflow, as Scheduler.Wait would
// return it.
func renderRun() *plait.Run {
	return &plait.Run{ID: "1-abc", Workflow: "report", Status: plait.RunCompleted, Tasks: []plait.TaskInstance{
		{Name: "fetch", Status: plait.TaskSucceeded, Attempt: 1},
		{Name: "count", Status: plait.TaskSucceeded, Attempt: 2},
		{Name: "longest", Status: plait.TaskSucceeded, Attempt: 1},
		{Name: "report", Status: plait.TaskSucceeded, Attempt: 1},
		{Name: "cleanup", Status: plait.TaskSkipped},
		{Name: "notify", Status: plait.TaskSucceeded, Attempt: 1},
	}}
}

// A workflow rendered as a Mermaid flowchart, before any run.
func ExampleWorkflow_Mermaid() {
	fmt.Print(renderWorkflow().Mermaid(nil))
	// Output:
	// flowchart TD
	//   t0["fetch"]
	//   t1["count"]
	//   t2["longest"]
	//   t3["report"]
	//   t4["cleanup"]
	//   t5["notify<br/>any of"]
	//   t0 --> t1
	//   t0 --> t2
	//   t1 --> t3
	//   t2 --> t3
	//   t3 -->|on failure| t4
	//   t3 -->|on completion| t5
	//   t4 -->|on completion| t5
}

// A finished run rendered as a Mermaid flowchart: each task with its status,
// coloured by it.
func ExampleRenderMermaid() {
	spec, err := renderWorkflow().Spec(nil, plait.Limits{})
	if err != nil {
		panic(err)
	}
	chart, err := plait.RenderMermaid(spec, renderRun())
	if err != nil {
		panic(err)
	}
	fmt.Print(chart)
	// Output:
	// flowchart TD
	//   %% run 1-abc: completed
	//   t0["fetch<br/>succeeded"]:::succeeded
	//   t1["count<br/>succeeded, 2 attempts"]:::succeeded
	//   t2["longest<br/>succeeded"]:::succeeded
	//   t3["report<br/>succeeded"]:::succeeded
	//   t4["cleanup<br/>skipped"]:::skipped
	//   t5["notify<br/>any of<br/>succeeded"]:::succeeded
	//   t0 --> t1
	//   t0 --> t2
	//   t1 --> t3
	//   t2 --> t3
	//   t3 -->|on failure| t4
	//   t3 -->|on completion| t5
	//   t4 -->|on completion| t5
	//   classDef succeeded fill:#c8e6c9,stroke:#2e7d32
	//   classDef skipped fill:#f5f5f5,stroke:#bdbdbd
}

// A finished run rendered as Graphviz DOT, for dot -Tsvg.
func ExampleWorkflow_DOT() {
	fmt.Print(renderWorkflow().DOT(renderRun()))
	// Output:
	// digraph "report" {
	//   label="run 1-abc: completed";
	//   labelloc=t;
	//   node [shape=box, style="rounded,filled", fillcolor="#ffffff"];
	//   "fetch" [label="fetch\nsucceeded", fillcolor="#c8e6c9", color="#2e7d32"];
	//   "count" [label="count\nsucceeded, 2 attempts", fillcolor="#c8e6c9", color="#2e7d32"];
	//   "longest" [label="longest\nsucceeded", fillcolor="#c8e6c9", color="#2e7d32"];
	//   "report" [label="report\nsucceeded", fillcolor="#c8e6c9", color="#2e7d32"];
	//   "cleanup" [label="cleanup\nskipped", fillcolor="#f5f5f5", color="#bdbdbd"];
	//   "notify" [label="notify\nany of\nsucceeded", fillcolor="#c8e6c9", color="#2e7d32"];
	//   "fetch" -> "count";
	//   "fetch" -> "longest";
	//   "count" -> "report";
	//   "longest" -> "report";
	//   "report" -> "cleanup" [label="on failure", style=dashed];
	//   "report" -> "notify" [label="on completion", style=dashed];
	//   "cleanup" -> "notify" [label="on completion", style=dashed];
	// }
}
