package storetest

import (
	"strings"
	"testing"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testRunNotes is the suite of [store.RunNoteStore].
func testRunNotes(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "NoteIsOneEventOfTheRun",
			rule: "a note is one run_note event of the run, its text in Note, after the run's own events, and changes nothing of the run",
			run: func(t *testing.T, h *Harness, rule string) {
				ns := h.Store.(store.RunNoteStore)
				r := createRun(t, h, nil)
				succeed(t, h, claimOne(t, h, "a", rule).Lease, "ok", rule)
				before := getRun(t, h, r.ID)
				require.NoError(t, ns.RunNote(bg, &store.RunNoteParams{RunID: r.ID, Text: "replayed by ops: disk full"}), rule)
				require.NoError(t, ns.RunNote(bg, &store.RunNoteParams{RunID: r.ID, Text: "second; with\na newline"}), rule)
				after := getRun(t, h, r.ID)
				require.Equal(t, before.Status, after.Status, rule)
				require.Equal(t, before.Succeeded, after.Succeeded, rule)
				sameTime(t, before.EndedAt, after.EndedAt, rule)
				if _, ok := h.Store.(store.EventStore); !ok {
					return
				}
				evs, _ := readEvents(t, h, r.ID, "", 100)
				require.GreaterOrEqual(t, len(evs), 2, rule)
				n := len(evs)
				require.Equal(t, store.RunEventType(store.RunCompleted), evs[n-3].Type, rule+": the notes come after the run's end")
				for i, text := range []string{"replayed by ops: disk full", "second; with\na newline"} {
					e := evs[n-2+i]
					require.Equal(t, store.EventRunNote, e.Type, rule)
					require.Equal(t, text, e.Note, rule)
					require.Equal(t, r.ID, e.RunID, rule)
					require.Empty(t, e.Task, rule)
					require.Equal(t, "wf", e.Workflow, rule)
					sameTime(t, h.Now(), e.At, rule)
				}
			},
		},
		{
			name: "NoteRefusals",
			rule: "a note on an unknown run answers ErrNotFound; an empty note or one over RunNoteTextMax bytes ErrInvalidArgument",
			run: func(t *testing.T, h *Harness, rule string) {
				ns := h.Store.(store.RunNoteStore)
				r := createRun(t, h, nil)
				require.ErrorIs(t, ns.RunNote(bg, &store.RunNoteParams{RunID: "no-such-run", Text: "x"}), store.ErrNotFound, rule)
				require.ErrorIs(t, ns.RunNote(bg, &store.RunNoteParams{RunID: r.ID}), store.ErrInvalidArgument, rule)
				long := strings.Repeat("n", store.RunNoteTextMax+1)
				require.ErrorIs(t, ns.RunNote(bg, &store.RunNoteParams{RunID: r.ID, Text: long}), store.ErrInvalidArgument, rule)
				require.NoError(t, ns.RunNote(bg, &store.RunNoteParams{RunID: r.ID, Text: long[1:]}), rule+": the longest note is kept")
				if _, ok := h.Store.(store.EventStore); ok {
					evs, _ := readEvents(t, h, r.ID, "", 100)
					require.Equal(t, long[1:], evs[len(evs)-1].Note, rule)
				}
			},
		},
		{
			name: "NoteCarriesTheGeneration",
			rule: "a note written after a replay carries the run's new generation",
			run: func(t *testing.T, h *Harness, rule string) {
				rs, ok := h.Store.(store.ReplayStore)
				if _, ev := h.Store.(store.EventStore); !ok || !ev {
					t.Skip("needs ReplayStore and EventStore")
				}
				r := createRun(t, h, nil)
				failTask(t, h, claimOne(t, h, "a", rule).Lease, "boom", rule)
				_, err := rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID})
				require.NoError(t, err, rule)
				require.NoError(t, h.Store.(store.RunNoteStore).RunNote(bg, &store.RunNoteParams{RunID: r.ID, Text: "replayed"}), rule)
				evs, _ := readEvents(t, h, r.ID, "", 100)
				last := evs[len(evs)-1]
				require.Equal(t, store.EventRunNote, last.Type, rule)
				require.Equal(t, int64(1), last.Generation, rule)
			},
		},
	})
}
