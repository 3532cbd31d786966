package cli

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/plaitdag/plait/internal/apijson"
)

func TestRunsList(t *testing.T) {
	f := newFixture(t)
	var all page[runJSON]
	decode(t, f.ok(t, "runs", "ls", "-o", "json"), &all)
	if len(all.Items) != 3 {
		t.Fatalf("runs ls: %d runs, want 3: %+v", len(all.Items), all.Items)
	}
	var failed page[runJSON]
	decode(t, f.ok(t, "-o", "json", "runs", "ls", "-status", "failed"), &failed)
	if len(failed.Items) != 1 || failed.Items[0].ID != f.failed || failed.Items[0].Workflow != "billing" {
		t.Fatalf("runs ls -status failed: %+v", failed.Items)
	}
	var one page[runJSON]
	decode(t, f.ok(t, "runs", "ls", "-limit", "1", "-o", "json"), &one)
	if len(one.Items) != 1 || one.NextCursor == "" {
		t.Fatalf("runs ls -limit 1: %+v", one)
	}
	var next page[runJSON]
	decode(t, f.ok(t, "runs", "ls", "-limit", "2", "-cursor", one.NextCursor, "-o", "json"), &next)
	if len(next.Items) != 2 || next.Items[0].ID == one.Items[0].ID {
		t.Fatalf("the page after the cursor: %+v", next.Items)
	}
	table := f.ok(t, "runs", "ls", "-workflow", "etl")
	if lines := strings.Split(strings.TrimSpace(table), "\n"); !strings.HasPrefix(table, "RUN ") || len(lines) != 2 ||
		strings.Fields(lines[1])[0] != f.done {
		t.Fatalf("runs ls -workflow etl:\n%s", table)
	}
}

func TestRunsShow(t *testing.T) {
	f := newFixture(t)
	var run runJSON
	decode(t, f.ok(t, "runs", "show", f.done, "-o", "json"), &run)
	if run.ID != f.done || run.Status != "completed" || len(run.Tasks) != 4 {
		t.Fatalf("runs show: %+v", run)
	}
	load := run.Tasks[3]
	if load.Name != "load" || len(load.Deps) != 2 || load.Deps[0].Task != "shard-a" || len(load.Attempts) != 1 || load.Attempts[0].Outcome == "" {
		t.Fatalf("runs show: the load task %+v", load)
	}
	table := f.ok(t, "runs", "show", f.failed)
	if !strings.Contains(table, "payment gateway: card declined") || !strings.Contains(table, "failed") {
		t.Fatalf("runs show of a failed run:\n%s", table)
	}
	_, errs := f.exit(t, ExitNotFound, "runs", "show", "no-such-run")
	if !strings.Contains(errs, "no-such-run") {
		t.Fatalf("runs show of an unknown run: %s", errs)
	}
}

func TestTasksList(t *testing.T) {
	f := newFixture(t)
	var tasks page[taskJSON]
	decode(t, f.ok(t, "tasks", "ls", "-o", "json"), &tasks)
	if len(tasks.Items) != 1 || tasks.Items[0].RunID != f.live || tasks.Items[0].Name != "hold" || tasks.Items[0].Status != "running" {
		t.Fatalf("tasks ls: %+v", tasks.Items)
	}
	decode(t, f.ok(t, "tasks", "ls", "-status", "failed,dead", "-o", "json"), &tasks)
	if len(tasks.Items) != 1 || tasks.Items[0].Name != "charge" {
		t.Fatalf("tasks ls -status failed,dead: %+v", tasks.Items)
	}
	f.exit(t, ExitUsage, "tasks", "ls", "-status", "asleep")
}

func TestDeadLettersRead(t *testing.T) {
	f := newFixture(t)
	var letters page[letterJSON]
	decode(t, f.ok(t, "dlq", "ls", "-o", "json"), &letters)
	if len(letters.Items) != 1 || letters.Items[0].RunID != f.failed || letters.Items[0].Task != "charge" ||
		!strings.HasPrefix(letters.Items[0].Error, "payment gateway") {
		t.Fatalf("dlq ls: %+v", letters.Items)
	}
	decode(t, f.ok(t, "dlq", "ls", "-workflow", "etl", "-o", "json"), &letters)
	if len(letters.Items) != 0 {
		t.Fatalf("dlq ls -workflow etl: %+v", letters.Items)
	}
	var detail struct {
		RunID   string `json:"runId"`
		Name    string `json:"name"`
		Error   string `json:"error"`
		Payload string `json:"payload"`
	}
	decode(t, f.ok(t, "dlq", "show", f.failed+"/charge", "-o", "json"), &detail)
	if detail.Name != "charge" || detail.Payload != "42" || detail.Error == "" {
		t.Fatalf("dlq show: %+v", detail)
	}
	if out := f.ok(t, "dlq", "show", f.failed, "charge"); !strings.Contains(out, "card declined") {
		t.Fatalf("dlq show table:\n%s", out)
	}
	f.exit(t, ExitNotFound, "dlq", "show", f.done, "load")
}

func TestQueuesNodesList(t *testing.T) {
	f := newFixture(t)
	var queues page[queueJSON]
	decode(t, f.ok(t, "queues", "ls", "-o", "json"), &queues)
	if len(queues.Items) == 0 || queues.Items[0].Queue != "default" || queues.Items[0].Running != 1 || queues.Items[0].Paused {
		t.Fatalf("queues ls: %+v", queues.Items)
	}
	var nodes page[nodeJSON]
	decode(t, f.ok(t, "nodes", "ls", "-o", "json"), &nodes)
	if len(nodes.Items) != 1 || nodes.Items[0].ID != f.worker.NodeID() || nodes.Items[0].Capacity != 4 {
		t.Fatalf("nodes ls: %+v", nodes.Items)
	}
	if out := f.ok(t, "nodes", "ls"); !strings.Contains(out, f.worker.NodeID()) {
		t.Fatalf("nodes ls:\n%s", out)
	}
}

func TestSchedulesList(t *testing.T) {
	f := newFixture(t)
	var list page[apijson.Schedule]
	decode(t, f.ok(t, "schedules", "ls", "-o", "json"), &list)
	if len(list.Items) != 1 || list.Items[0].Name != "heartbeat" || list.Items[0].Spec != "@every 1h" || list.Items[0].Paused {
		t.Fatalf("schedules ls: %+v", list.Items)
	}
}

func TestStats(t *testing.T) {
	f := newFixture(t)
	var st statsJSON
	decode(t, f.ok(t, "stats", "-o", "json"), &st)
	byName := map[string]countersJSON{}
	for _, w := range st.Workflows {
		byName[w.Name] = w
	}
	if byName["etl"].Submitted != 1 || byName["billing"].Submitted != 1 || len(st.Tasks) == 0 {
		t.Fatalf("stats: %+v", st)
	}
	if out := f.ok(t, "stats"); !strings.Contains(out, "WORKFLOW") || !strings.Contains(out, "billing") {
		t.Fatalf("stats table:\n%s", out)
	}
}

func TestExport(t *testing.T) {
	f := newFixture(t)
	out := f.ok(t, "export", "-from", "1h", "-o", "json")
	var runs []runJSON
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r runJSON
		decode(t, sc.Text(), &r)
		runs = append(runs, r)
	}
	if len(runs) != 2 { // the live run has not ended
		t.Fatalf("export by end: %d runs, want 2:\n%s", len(runs), out)
	}
	for _, r := range runs {
		if len(r.Tasks) == 0 || r.EndedAt.IsZero() {
			t.Fatalf("export: a run without tasks or end: %+v", r)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(f.ok(t, "export", "-from", "1h", "-by", "created", "-format", "csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// The header, the 4+2+3 tasks of the three runs: one row per attempt,
	// one for a task that never started.
	if len(rows) != 1+9 || rows[0][0] != "run_id" {
		t.Fatalf("export csv: %d rows: %q", len(rows), rows)
	}
	f.exit(t, ExitUsage, "export", "-from", "1h", "-format", "xml")
}

func TestServe(t *testing.T) {
	f := newFixture(t)
	url, stop := f.serve(t, "serve", "-addr", "127.0.0.1:0")
	resp, err := noKeepAlive().Get(url + "api/v1/runs/" + f.done)
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		Run struct {
			ID string `json:"id"`
		} `json:"run"`
	}
	err = json.NewDecoder(resp.Body).Decode(&run)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || run.Run.ID != f.done {
		t.Fatalf("GET the run: %d %+v %v", resp.StatusCode, run, err)
	}
	if code := postAction(t, url, "queue.pause"); code != http.StatusForbidden {
		t.Fatalf("an action on a read-only view: %d", code)
	}
	stop()

	// -write: the actions -actions names, and only those.
	url, stop = f.serve(t, "serve", "-addr", "127.0.0.1:0", "-write", "-actions", "queue.pause,queue.resume")
	defer stop()
	if code := postAction(t, url, "queue.pause"); code != http.StatusOK {
		t.Fatalf("queue.pause on a -write view: %d", code)
	}
	var queues page[queueJSON]
	decode(t, f.ok(t, "queues", "ls", "-o", "json"), &queues)
	if !queues.Items[0].Paused {
		t.Fatalf("the view's pause did not pause: %+v", queues.Items)
	}
	if code := postAction(t, url, "node.drain"); code != http.StatusForbidden {
		t.Fatalf("an action -actions leaves out: %d", code)
	}
}

// serve starts `plait serve` and answers its URL and the function that
// stops it and checks it exited 0.
func (f *fixture) serve(t *testing.T, args ...string) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	errb := newSyncBuffer()
	code := make(chan int, 1)
	go func() {
		code <- Main(ctx, args, pw, errb, f.open)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("serve printed nothing: %v; stderr %s", err, errb.String())
	}
	go io.Copy(io.Discard, pr)
	url := strings.Fields(line)[3]
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("serve: %q", line)
	}
	return url, func() {
		cancel()
		select {
		case c := <-code:
			if c != ExitOK {
				t.Errorf("serve: exit %d: %s", c, errb.String())
			}
		case <-time.After(10 * time.Second):
			t.Error("serve did not stop with its context")
		}
	}
}

// noKeepAlive answers an HTTP client that keeps no connection open past
// its request, so none outlives the server (and the leak check).
func noKeepAlive() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}

// postAction posts action on the ids ["default"] to the view and answers
// the status.
func postAction(t *testing.T, url, action string) int {
	t.Helper()
	body := `{"ids": ["default"], "reason": "test"}`
	req, err := http.NewRequest(http.MethodPost, url+"api/v1/actions/"+action, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := noKeepAlive().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
