package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
)

// The writes added for operators and for batched creates, each with its
// reply lost on a real redis-server through the fault proxy, so that what
// their script headers say of a resend is what happens.

// runEvents reads every kept event of run id of the given type.
func runEvents(t *testing.T, s store.EventStore, id string, typ store.StoreEventType) []store.StoreEvent {
	t.Helper()
	res, err := s.EventRead(context.Background(), &store.EventReadParams{RunID: id, Limit: 1000})
	require.NoError(t, err)
	var out []store.StoreEvent
	for _, e := range res.Events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// TestLostTaskProgressReply: the caller sends the report again; the task
// holds the one report, and its event is recorded twice, as task_progress's
// header says.
func TestLostTaskProgressReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, -1, nil)
	ids := e.createOneTaskRuns(t, 1)
	claimed, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed.Tasks, 1)
	p := &store.TaskProgressParams{Reports: []store.ProgressReport{{Lease: claimed.Tasks[0].Lease, Value: 0.5, Note: "lost-progress-1"}}}

	e.proxy.DropReplyTo("lost-progress-1")
	_, err = e.store.TaskProgress(ctx, p)
	require.Error(t, err, "the reply was lost")
	require.Equal(t, 1, e.proxy.Dropped())
	res, err := e.store.TaskProgress(ctx, p)
	require.NoError(t, err)
	require.NoError(t, res[0].Err, "sent again, the report is stored again")

	run, err := e.store.RunGet(ctx, &store.RunGetParams{ID: ids[0]})
	require.NoError(t, err)
	require.NotNil(t, run.Tasks[0].Progress)
	require.Equal(t, [...]any{0.5, "lost-progress-1"}, [...]any{run.Tasks[0].Progress.Value, run.Tasks[0].Progress.Note})
	require.Len(t, runEvents(t, e.store, ids[0], store.EventTaskProgress), 2, "the resend's event is recorded a second time")
}

// TestLostRunNoteReply: the caller sends the note again and it is appended
// a second time, as run_note's header says; nothing else changes.
func TestLostRunNoteReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, -1, nil)
	ids := e.createOneTaskRuns(t, 1)
	p := &store.RunNoteParams{RunID: ids[0], Text: "lost-note-1"}

	e.proxy.DropReplyTo("lost-note-1")
	require.Error(t, e.store.RunNote(ctx, p), "the reply was lost")
	require.Equal(t, 1, e.proxy.Dropped())
	require.NoError(t, e.store.RunNote(ctx, p))

	notes := runEvents(t, e.store, ids[0], store.EventRunNote)
	require.Len(t, notes, 2)
	require.Equal(t, [...]string{"lost-note-1", "lost-note-1"}, [...]string{notes[0].Note, notes[1].Note})
	run, err := e.store.RunGet(ctx, &store.RunGetParams{ID: ids[0]})
	require.NoError(t, err)
	require.Equal(t, store.RunPending, run.Status, "a note changes no status")
}

// TestLostRunDeleteManyReply: the caller sends the delete again; the run
// deleted the first time answers not found, the active one is refused
// again, and the active one is untouched.
func TestLostRunDeleteManyReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, -1, nil)
	ids := e.createOneTaskRuns(t, 2)
	claimed, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed.Tasks, 1)
	done := claimed.Tasks[0].Lease
	fin, err := e.store.TaskFinish(ctx, &store.TaskFinishParams{Outcomes: []store.TaskOutcome{{Lease: done, Outcome: store.OutcomeSucceeded}}})
	require.NoError(t, err)
	require.NoError(t, fin[0].Err)
	active := ids[0]
	if active == done.RunID {
		active = ids[1]
	}
	p := &store.RunDeleteManyParams{IDs: []string{done.RunID, active}}

	e.proxy.DropReplyTo(done.RunID)
	_, err = e.store.RunDeleteMany(ctx, p)
	require.Error(t, err, "the reply was lost")
	require.Equal(t, 1, e.proxy.Dropped())
	errs, err := e.store.RunDeleteMany(ctx, p)
	require.NoError(t, err)
	require.ErrorIs(t, errs[0], store.ErrNotFound, "deleted by the first try")
	require.ErrorIs(t, errs[1], store.ErrRunActive)
	_, err = e.store.RunGet(ctx, &store.RunGetParams{ID: done.RunID})
	require.ErrorIs(t, err, store.ErrNotFound)
	run, err := e.store.RunGet(ctx, &store.RunGetParams{ID: active})
	require.NoError(t, err)
	require.Equal(t, store.RunPending, run.Status)
}

// TestLostRunCreateManyReply: go-redis sends the batched create again with
// the same ids; every run is answered as created once, none twice, keyed or
// not, as run_create_many's header says.
func TestLostRunCreateManyReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFaultEnv(t, 3, nil)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "t", Handler: "h", Queue: store.DefaultQueue}}}
	params := []*store.RunCreateParams{{Workflow: wf, Key: "lost-many-1"}, {Workflow: wf}, {Workflow: wf, Key: "lost-many-3"}}

	e.proxy.DropReplyTo("lost-many-1")
	out, err := e.store.RunCreateMany(ctx, params)
	require.NoError(t, err, "go-redis sent the call again")
	require.Equal(t, 1, e.proxy.Dropped())
	require.Len(t, out, 3)
	seen := map[string]bool{}
	for i, o := range out {
		require.NoError(t, o.Err, "run %d", i)
		require.False(t, seen[o.Result.Run.ID], "run %d answered twice", i)
		seen[o.Result.Run.ID] = true
	}
	claimed, err := e.store.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed.Tasks, 3, "three runs, each queued once")
	again, err := e.store.RunCreateMany(ctx, params[:1])
	require.NoError(t, err)
	require.True(t, again[0].Result.Existing, "the key names the run the lost call created")
	require.Equal(t, out[0].Result.Run.ID, again[0].Result.Run.ID)
}
