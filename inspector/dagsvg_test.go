package inspector

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/plaitdag/plait"
)

func TestDAG(t *testing.T) {
	f := newFixture(t)
	rec := do(newHandler(t, f.s), "GET", "/api/v1/runs/"+f.etl+"/dag.svg", nil)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/svg+xml" || !strings.Contains(rec.Body.String(), `class="dag"`) {
		t.Fatalf("dag: %d %s %.200s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	g := graphOf(mustSpec(t, f), mustRun(t, f))
	if len(g.Nodes) != 3 || len(g.Edges) != 2 || g.Edges[1].Condition != "completion" || g.Nodes[0].State != "succeeded" {
		t.Errorf("graph %+v", g)
	}
}

// A run whose graph stays over the box limit after grouping answers 422
// dag_too_large: 12 roots and 2,100 tasks each after its own subset of
// them, so that no two siblings have the same parents.
func TestDAGTooLarge(t *testing.T) {
	f := newFixture(t)
	wf := plait.NewWorkflow("wide")
	var roots []string
	for i := range 12 {
		roots = append(roots, "root-"+strconv.Itoa(i))
		wf.Task(roots[i], "ok", nil)
	}
	for i := range 2100 {
		var deps []string
		for b := range 12 {
			if (i+1)&(1<<b) != 0 {
				deps = append(deps, roots[b])
			}
		}
		wf.Task("t-"+strconv.Itoa(i), "ok", nil, plait.After(deps...))
	}
	run, err := f.s.Submit(context.Background(), wf)
	must(t, err)
	rec := do(newHandler(t, f.s), "GET", "/api/v1/runs/"+run.ID+"/dag.svg", nil)
	if rec.Code != http.StatusUnprocessableEntity || errorCode(t, rec) != "dag_too_large" {
		t.Errorf("a run too large to draw: %d %.300s", rec.Code, rec.Body)
	}
	if rec := do(newHandler(t, f.s), "GET", "/api/v1/runs/"+run.ID, nil); rec.Code != http.StatusOK {
		t.Errorf("its run answer: %d", rec.Code)
	}
}
