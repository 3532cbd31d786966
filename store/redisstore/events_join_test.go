package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestJoinedEventsReadApart finishes two tasks of one run in one call, the
// second failed with an error holding spaces and a newline, by a worker
// whose id holds a space (the store takes any): format 8
// writes the run's events of the call in one pair, and they read back as
// the events of format 7, each error with its own task, each event with a
// position of its own that a read can resume after.
func TestJoinedEventsReadApart(t *testing.T) {
	t.Parallel()
	c := redistest.Private(t)
	ctx := context.Background()
	const boom = "boom: with spaces\nand a second line"
	var read [2][]store.StoreEvent
	var joined [2]int
	for i, v := range []int{redisstore.FormatVersionPrevious, redisstore.FormatVersionNewest} {
		prefix := "join" + string(rune('a'+i))
		clk := fakeclock.New(start)
		s, err := redisstore.New(ctx, c, redisstore.WithPrefix(prefix), redisstore.WithFormatVersion(v), redisstore.WithClock(clk))
		require.NoError(t, err)
		wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}, {Name: "b", Handler: "h"}}}
		created, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
		got, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w 1", Limit: 2, LeaseDuration: time.Minute})
		require.NoError(t, err)
		require.Len(t, got.Tasks, 2)
		clk.Advance(time.Second)
		_, err = s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w 1", Outcomes: []store.TaskOutcome{
			{Lease: got.Tasks[0].Lease, Outcome: store.OutcomeSucceeded},
			{Lease: got.Tasks[1].Lease, Outcome: store.OutcomeFailed, Error: boom},
		}})
		require.NoError(t, err)
		raw, err := c.Do(ctx, "XRANGE", prefix+":{0}:e", "-", "+").Slice()
		require.NoError(t, err)
		for _, entry := range raw {
			fields := entry.([]any)[1].([]any)
			for j := 3; j < len(fields); j += 2 {
				if strings.Contains(strings.SplitN(fields[j].(string), "\n", 2)[0], "\x1f") {
					joined[i]++
				}
			}
		}

		all, err := s.EventRead(ctx, &store.EventReadParams{RunID: created.Run.ID, Limit: 100})
		require.NoError(t, err)
		var errs []string
		for k, ev := range all.Events {
			if ev.Error != "" {
				errs = append(errs, ev.Task+": "+ev.Error)
			}
			// every position resumes right after its event
			rest, err := s.EventRead(ctx, &store.EventReadParams{RunID: created.Run.ID, After: ev.Cursor, Limit: 100})
			require.NoError(t, err)
			require.Len(t, rest.Events, len(all.Events)-k-1, "after event %d (%s %s)", k, ev.Task, ev.Type)
			if k+1 < len(all.Events) {
				require.Equal(t, all.Events[k+1].Cursor, rest.Events[0].Cursor)
			}
		}
		require.Equal(t, []string{"b: " + boom}, errs, "the error is the failed task's, whole")
		for _, ev := range all.Events {
			ev.Cursor, ev.RunID = "", ""
			read[i] = append(read[i], ev)
		}
	}
	require.Zero(t, joined[0], "format 7 joins nothing")
	require.NotZero(t, joined[1], "format 8 joins a run's adjacent events")
	require.Equal(t, read[0], read[1], "both formats read as the same events")
}

// TestWideReleaseJoinsLittle finishes the root of 500 children: its
// finish releases them all in one call, and no pair of the event stream
// takes more than a few of them (a joined pair grows by a copy per event).
func TestWideReleaseJoinsLittle(t *testing.T) {
	t.Parallel()
	c := redistest.Private(t)
	ctx := context.Background()
	s, err := redisstore.New(ctx, c)
	require.NoError(t, err)
	tasks := []store.TaskSpec{{Name: "root", Handler: "h"}}
	for i := range 500 {
		tasks = append(tasks, store.TaskSpec{Name: "c" + strconv.Itoa(i), Handler: "h", Deps: []store.Dep{{Task: "root"}}})
	}
	created, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: &store.WorkflowSpec{Name: "wide", Tasks: tasks}})
	require.NoError(t, err)
	got, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, got.Tasks, 1)
	_, err = s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w",
		Outcomes: []store.TaskOutcome{{Lease: got.Tasks[0].Lease, Outcome: store.OutcomeSucceeded}}})
	require.NoError(t, err)
	raw, err := c.Do(ctx, "XRANGE", "plait:{0}:e", "-", "+").Slice()
	require.NoError(t, err)
	longest := 0
	for _, entry := range raw {
		fields := entry.([]any)[1].([]any)
		for j := 3; j < len(fields); j += 2 {
			longest = max(longest, len(fields[j].(string)))
		}
	}
	require.Less(t, longest, 160, "a pair stops taking events once it is 64 bytes long")
	all, err := s.EventRead(ctx, &store.EventReadParams{RunID: created.Run.ID, Limit: 1000})
	require.NoError(t, err)
	ready := 0
	for _, ev := range all.Events {
		if ev.Type == store.TaskEventType(store.TaskReady) {
			ready++
		}
	}
	require.Equal(t, 501, ready, "the root and every child read as ready once")
}
