package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/plaitdag/plait"
)

func TestRunsWatchLive(t *testing.T) {
	f := newFixture(t)
	out, errb := newSyncBuffer(), newSyncBuffer()
	code := make(chan int, 1)
	go func() {
		code <- Main(context.Background(), []string{"runs", "watch", f.live, "-every", "10ms", "-width", "80"}, out, errb, f.open)
	}()
	out.waitFor(t, "[>>] running")
	first := out.String()
	for _, want := range []string{"live  " + f.live + "  RUNNING", "| extract ", "| [ok] succeeded", "| hold ", "<- extract", "| load ", "<- hold", "[  ] pending"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first frame has no %q:\n%s", want, first)
		}
	}
	f.release()
	select {
	case c := <-code:
		if c != ExitOK {
			t.Fatalf("runs watch: exit %d: %s", c, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("runs watch did not end with the run")
	}
	all := out.String()
	frames := strings.Split(all, "--- ")
	last := frames[len(frames)-1]
	if len(frames) < 3 || !strings.Contains(last, "COMPLETED") || strings.Contains(last, "[>>]") || strings.Count(last, "[ok] succeeded") != 3 {
		t.Fatalf("runs watch: %d frames, the last:\n%s", len(frames)-1, last)
	}
	if path := os.Getenv("PLAIT_WATCH_CAPTURE"); path != "" {
		_ = os.WriteFile(path, []byte(all), 0o644)
	}
}

func TestRunsWatchEnded(t *testing.T) {
	f := newFixture(t)
	out := f.ok(t, "runs", "watch", f.done)
	if strings.Count(out, "--- ") != 1 || !strings.Contains(out, "COMPLETED") || !strings.Contains(out, "<- shard-a,shard-b") {
		t.Fatalf("runs watch of a finished run:\n%s", out)
	}
	// Both shards side by side in the second layer.
	if !strings.Contains(out, "| shard-a ") || !regexpLine(out, "shard-a", "shard-b") {
		t.Fatalf("the shards are not in one row:\n%s", out)
	}
	out, _ = f.exit(t, ExitFailure, "runs", "watch", f.failed, "-exit-status")
	if !strings.Contains(out, "charge: payment gateway: card declined") || !strings.Contains(out, "[XX] failed") {
		t.Fatalf("runs watch of a failed run:\n%s", out)
	}
	f.ok(t, "runs", "watch", f.failed)
	f.exit(t, ExitNotFound, "runs", "watch", "no-such-run")
}

func TestRunsWatchJSON(t *testing.T) {
	f := newFixture(t)
	out := f.ok(t, "runs", "watch", f.live, "-once", "-o", "json")
	sc := bufio.NewScanner(strings.NewReader(out))
	n := 0
	for sc.Scan() {
		var r runJSON
		decode(t, sc.Text(), &r)
		if r.ID != f.live || r.Status != "running" || len(r.Tasks) != 3 || r.Tasks[1].Status != "running" || r.Tasks[2].Deps[0].Task != "hold" {
			t.Fatalf("a line of runs watch -o json: %+v", r)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("runs watch -once: %d lines", n)
	}
}

// regexpLine reports whether one line holds every word.
func regexpLine(s string, words ...string) bool {
	for _, line := range strings.Split(s, "\n") {
		all := true
		for _, w := range words {
			all = all && strings.Contains(line, w)
		}
		if all {
			return true
		}
	}
	return false
}

func TestRunsWatchInterrupted(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	out, errb := newSyncBuffer(), newSyncBuffer()
	code := make(chan int, 1)
	go func() { code <- Main(ctx, []string{"runs", "watch", f.live}, out, errb, f.open) }()
	out.waitFor(t, "[>>] running")
	cancel()
	select {
	case c := <-code:
		if c != ExitInterrupted || errb.String() != "" {
			t.Fatalf("an interrupted watch: exit %d, stderr %q", c, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("runs watch did not stop with its context")
	}
}

func TestRunsWatchGroupsAWideLayer(t *testing.T) {
	f := newFixture(t)
	wf := plait.NewWorkflow("wide").Task("extract", "step", nil)
	var shards []string
	for i := 0; i < 12; i++ {
		name := fmt.Sprintf("shard-%02d", i)
		shards = append(shards, name)
		wf.Task(name, "step", nil, plait.After("extract"))
	}
	wf.Task("audit", "step", nil, plait.AfterCompletion("extract")).Task("load", "step", nil, plait.After(shards...))
	id := f.finish(t, context.Background(), wf, plait.RunCompleted)
	out := f.ok(t, "runs", "watch", id, "-once")
	for _, want := range []string{"| shard-* (12) ", "| [ok]12 ", "| audit ", "| load ", "| <- shard-* (12) "} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "shard-03") {
		t.Fatalf("a grouped shard drawn alone:\n%s", out)
	}
}
