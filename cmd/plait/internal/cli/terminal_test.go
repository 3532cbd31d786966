package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/action"
)

// The tests run with pipes, never a terminal: these set the terminal
// flags by hand to check what a terminal gets, and what a pipe does not.

func TestProgressOnlyOnATerminal(t *testing.T) {
	f := newFixture(t)
	for _, tty := range []bool{true, false} {
		out, errb := newSyncBuffer(), newSyncBuffer()
		e := &env{ctx: context.Background(), stdout: out, stderr: errb, open: f.open, output: "table", tty: tty}
		if err := e.act(action.QueuePause, action.Target{IDs: []string{"a", "b"}}, &actOpts{}); err != nil {
			t.Fatal(err)
		}
		drawn := strings.Contains(errb.String(), "\rqueue.pause 1/2") && strings.Contains(errb.String(), "\rqueue.pause 2/2\n")
		if drawn != tty {
			t.Fatalf("terminal %v: progress drawn %v: %q", tty, drawn, errb.String())
		}
	}
}

func TestWatchRedrawsInPlaceOnATerminal(t *testing.T) {
	f := newFixture(t)
	s, err := f.open(context.Background(), Conn{})
	must(t, err)
	out := newSyncBuffer()
	e := &env{ctx: context.Background(), stdout: out, stderr: out, output: "table"}
	w := &watcher{e: e, s: s, id: f.live, every: 0, width: 80, tty: true}
	run, spec, err := readRun(e, s, f.live)
	must(t, err)
	w.spec = spec
	must(t, w.draw(run))
	must(t, w.draw(run)) // the same frame: not drawn again
	run.Tasks[1].Status = plait.TaskSucceeded
	must(t, w.draw(run))
	if got := strings.Count(out.String(), "\x1b[H\x1b[2J"); got != 2 || strings.Contains(out.String(), "--- ") {
		t.Fatalf("%d clears, want 2 and no frame separator:\n%q", got, out.String())
	}
}
