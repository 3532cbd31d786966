package storetest

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testTaskLogs is the suite of [store.TaskLogStore].
func testTaskLogs(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "LinesKeptWithTheirAttempt",
			rule: "appended lines are kept in order with their time (ms), level, text, attempt and epoch, readable per task and per attempt number",
			run: func(t *testing.T, h *Harness, rule string) {
				ls := h.Store.(store.TaskLogStore)
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"))})
				got := claimNames(t, h)
				a := got["a"]
				t0 := h.Now()
				res := appendLines(t, ls, a.Lease, a.Attempt, 1, rule, line(t0, slog.LevelInfo, "fetching url=x"), line(t0.Add(time.Millisecond), slog.LevelWarn, "slow, é ü; 中"))
				require.Equal(t, store.TaskLogAppendResult{Stored: 2}, *res, rule)
				require.NoError(t, finish(t, h, store.TaskOutcome{Lease: a.Lease, Outcome: store.OutcomeRetry, Error: "x"}).Err, rule)
				second := claimOne(t, h, "a", rule)
				appendLines(t, ls, second.Lease, second.Attempt, 1, rule, line(t0.Add(time.Second), slog.LevelError, "again"))

				all := readLogs(t, ls, r.ID, "a", 0, rule)
				require.Zero(t, all.Dropped, rule)
				require.Len(t, all.Lines, 3, rule)
				want := []struct {
					text    string
					level   slog.Level
					attempt int
					epoch   int64
					at      time.Time
				}{
					{"fetching url=x", slog.LevelInfo, 1, a.Lease.Epoch, t0},
					{"slow, é ü; 中", slog.LevelWarn, 1, a.Lease.Epoch, t0.Add(time.Millisecond)},
					{"again", slog.LevelError, 2, second.Lease.Epoch, t0.Add(time.Second)},
				}
				for i, w := range want {
					g := all.Lines[i]
					require.Equal(t, w.text, g.Text, rule)
					require.Equal(t, w.level, g.Level, rule)
					require.Equal(t, w.attempt, g.Attempt, rule)
					require.Equal(t, w.epoch, g.Epoch, rule)
					sameTime(t, w.at, g.Time, rule)
				}
				two := readLogs(t, ls, r.ID, "a", 2, rule)
				require.Equal(t, all.Lines[2:], two.Lines, rule)
				require.Empty(t, readLogs(t, ls, r.ID, "b", 0, rule).Lines, rule+": a task that logged nothing has no line")
				_, err := ls.TaskLogRead(bg, &store.TaskLogReadParams{RunID: r.ID, Task: "zz"})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
				_, err = ls.TaskLogRead(bg, &store.TaskLogReadParams{RunID: "no-such-run", Task: "a"})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
			},
		},
		{
			name: "StaleAttemptRefused",
			rule: "lines of an attempt whose epoch is no longer the task's are refused with ErrStaleEpoch and never mixed into the current attempt",
			run: func(t *testing.T, h *Harness, rule string) {
				ls := h.Store.(store.TaskLogStore)
				r := createRun(t, h, nil)
				old := claim(t, h, &claimOpts{Lease: time.Second}).Tasks[0]
				h.Advance(2 * time.Second)
				_, err := h.Store.LeaseSweep(bg, &store.LeaseSweepParams{Limit: 10, CrashLimit: 3})
				require.NoError(t, err, rule)
				cur := claimOne(t, h, "a", rule)
				_, err = ls.TaskLogAppend(bg, &store.TaskLogAppendParams{Lease: old.Lease, Attempt: old.Attempt, Seq: 1, Lines: []store.LogLine{line(h.Now(), slog.LevelInfo, "late")}})
				require.ErrorIs(t, err, store.ErrStaleEpoch, rule)
				appendLines(t, ls, cur.Lease, cur.Attempt, 1, rule, line(h.Now(), slog.LevelInfo, "current"))
				got := readLogs(t, ls, r.ID, "a", 0, rule)
				require.Len(t, got.Lines, 1, rule)
				require.Equal(t, "current", got.Lines[0].Text, rule)
				require.Equal(t, cur.Lease.Epoch, got.Lines[0].Epoch, rule)
				_, err = ls.TaskLogAppend(bg, &store.TaskLogAppendParams{Lease: store.Lease{RunID: r.ID, Task: "zz", Epoch: 1}, Seq: 1, Lines: []store.LogLine{line(h.Now(), slog.LevelInfo, "x")}})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
			},
		},
		{
			name: "ResendStoresOnce",
			rule: "an append sent again with the same epoch and Seq stores nothing twice and answers what the first one did",
			run: func(t *testing.T, h *Harness, rule string) {
				ls := h.Store.(store.TaskLogStore)
				r := createRun(t, h, nil)
				ct := claimOne(t, h, "a", rule)
				first := appendLines(t, ls, ct.Lease, ct.Attempt, 1, rule, line(h.Now(), slog.LevelInfo, "one"), line(h.Now(), slog.LevelInfo, "two"))
				again := appendLines(t, ls, ct.Lease, ct.Attempt, 1, rule, line(h.Now(), slog.LevelInfo, "one"), line(h.Now(), slog.LevelInfo, "two"))
				require.Equal(t, first, again, rule)
				appendLines(t, ls, ct.Lease, ct.Attempt, 2, rule, line(h.Now(), slog.LevelInfo, "three"))
				got := readLogs(t, ls, r.ID, "a", 0, rule)
				require.Equal(t, []string{"one", "two", "three"}, texts(got.Lines), rule)
			},
		},
		{
			name: "CapCountsDropped",
			rule: "a task's lines are capped by count and bytes over all its attempts; the lines past the cap are dropped, counted in the append's answer and in every read",
			run: func(t *testing.T, h *Harness, rule string) {
				if h.Caps.TaskLogLines < 3 || h.Caps.TaskLogBytes < 8 {
					t.Skip("needs Caps.TaskLogLines (at least 3) and Caps.TaskLogBytes")
				}
				ls := h.Store.(store.TaskLogStore)
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b"))})
				got := claimNames(t, h)
				a, b := got["a"], got["b"]
				n := h.Caps.TaskLogLines
				var lines []store.LogLine
				for i := 0; i < n+2; i++ {
					lines = append(lines, line(h.Now(), slog.LevelInfo, "x"))
				}
				res := appendLines(t, ls, a.Lease, a.Attempt, 1, rule, lines...)
				require.Equal(t, store.TaskLogAppendResult{Stored: n, Dropped: 2}, *res, rule)
				res = appendLines(t, ls, a.Lease, a.Attempt, 2, rule, line(h.Now(), slog.LevelInfo, "y"))
				require.Equal(t, store.TaskLogAppendResult{Dropped: 1}, *res, rule)
				ra := readLogs(t, ls, r.ID, "a", 0, rule)
				require.Len(t, ra.Lines, n, rule)
				require.Equal(t, 3, ra.Dropped, rule)

				big := strings.Repeat("b", h.Caps.TaskLogBytes-2)
				res = appendLines(t, ls, b.Lease, b.Attempt, 1, rule, line(h.Now(), slog.LevelInfo, "ok"), line(h.Now(), slog.LevelInfo, big), line(h.Now(), slog.LevelInfo, "z"))
				require.Equal(t, store.TaskLogAppendResult{Stored: 2, Dropped: 1}, *res, rule+": the bytes cap counts every attempt's text")
				rb := readLogs(t, ls, r.ID, "b", 0, rule)
				require.Equal(t, []string{"ok", big}, texts(rb.Lines), rule)
				require.Equal(t, 1, rb.Dropped, rule)
			},
		},
		{
			name: "GoWithTheRun",
			rule: "a task's lines stay readable after the run ends, for its retention, and go with the run",
			run: func(t *testing.T, h *Harness, rule string) {
				if !h.Caps.ExpiresKeys || h.Caps.Retention <= 0 {
					t.Skip("needs Caps.ExpiresKeys and Caps.Retention")
				}
				ls := h.Store.(store.TaskLogStore)
				r := createRun(t, h, nil)
				ct := claimOne(t, h, "a", rule)
				appendLines(t, ls, ct.Lease, ct.Attempt, 1, rule, line(h.Now(), slog.LevelInfo, "before"))
				succeed(t, h, ct.Lease, "", rule)
				appendLines(t, ls, ct.Lease, ct.Attempt, 2, rule, line(h.Now(), slog.LevelInfo, "after the end"))
				h.Advance(h.Caps.Retention - time.Second)
				require.Equal(t, []string{"before", "after the end"}, texts(readLogs(t, ls, r.ID, "a", 0, rule).Lines), rule)
				h.Advance(2 * time.Second)
				_, err := ls.TaskLogRead(bg, &store.TaskLogReadParams{RunID: r.ID, Task: "a"})
				require.ErrorIs(t, err, store.ErrNotFound, rule)
			},
		},
	})
}

func line(at time.Time, level slog.Level, text string) store.LogLine {
	return store.LogLine{Time: at, Level: level, Text: text}
}

func appendLines(t *testing.T, ls store.TaskLogStore, l store.Lease, attempt, seq int, rule string, lines ...store.LogLine) *store.TaskLogAppendResult {
	t.Helper()
	res, err := ls.TaskLogAppend(bg, &store.TaskLogAppendParams{Lease: l, Attempt: attempt, Seq: seq, Lines: lines})
	require.NoError(t, err, rule)
	return res
}

func readLogs(t *testing.T, ls store.TaskLogStore, runID, task string, attempt int, rule string) *store.TaskLogReadResult {
	t.Helper()
	res, err := ls.TaskLogRead(bg, &store.TaskLogReadParams{RunID: runID, Task: task, Attempt: attempt})
	require.NoError(t, err, rule)
	return res
}

func texts(lines []store.LogLine) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.Text
	}
	return out
}
