package inspector

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/inspector/internal/dag"
	"github.com/plaitdag/plait/internal/apijson"
)

// graphOf builds the graph the run page draws: one node per task of the
// definition, coloured by the task's status in run, one edge per
// dependency with its condition.
func graphOf(spec *plait.WorkflowSpec, run *plait.Run) *dag.Graph {
	status := make(map[string]*plait.TaskInstance, len(run.Tasks))
	for i := range run.Tasks {
		status[run.Tasks[i].Name] = &run.Tasks[i]
	}
	g := &dag.Graph{Nodes: make([]dag.Node, 0, len(spec.Tasks))}
	for i := range spec.Tasks {
		ts := &spec.Tasks[i]
		n := dag.Node{ID: ts.Name, State: string(plait.TaskPending)}
		if t := status[ts.Name]; t != nil {
			n.State = string(t.Status)
			n.Detail = detailOf(t)
		}
		g.Nodes = append(g.Nodes, n)
		for _, d := range ts.Deps {
			g.Edges = append(g.Edges, dag.Edge{From: d.Task, To: ts.Name, Condition: d.On.String()})
		}
	}
	return g
}

// detailOf is the second line of a task's box: its attempt past the first
// and its duration once it ended.
func detailOf(t *plait.TaskInstance) string {
	var b []byte
	if t.Attempt > 1 {
		b = append(b, "attempt "...)
		b = strconv.AppendInt(b, int64(t.Attempt), 10)
	}
	if ms := apijson.Span(t.StartedAt, t.EndedAt); ms > 0 {
		if len(b) > 0 {
			b = append(b, " · "...)
		}
		b = append(b, (time.Duration(ms) * time.Millisecond).String()...)
	}
	return string(b)
}

// serveDAG answers the run's DAG as SVG: GET /api/v1/runs/{id}/dag.svg.
func (h *handler) serveDAG(w http.ResponseWriter, r *http.Request, p params) {
	run, err := h.s.RunGet(r.Context(), p.id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	spec, err := h.s.RunSpecGet(r.Context(), p.id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d, err := dag.Layout(graphOf(spec.Spec, run), dag.Options{})
	if err != nil {
		if errors.Is(err, dag.ErrTooLarge) {
			h.fail(w, r, &apiError{status: http.StatusUnprocessableEntity, code: "dag_too_large", message: err.Error()})
			return
		}
		h.fail(w, r, err)
		return
	}
	var buf bytes.Buffer
	if err := d.WriteSVG(&buf); err != nil {
		h.fail(w, r, err)
		return
	}
	hdr := w.Header()
	hdr.Set("Cache-Control", "no-store")
	// The SVG is inlined by the page, never run on its own: no script.
	hdr.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	writeBody(w, r, http.StatusOK, "image/svg+xml", buf.Bytes())
}
