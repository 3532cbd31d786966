package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

// eventStartCases are the cases of the event suite that pin where a read
// starts without a cursor of its own: the end of the stream or a time.
func eventStartCases() []testCase {
	return []testCase{
		{
			name: "LatestStartsAtTheEnd",
			rule: "a read after EventCursorLatest answers none of the events kept and a cursor at the end, from which exactly the new events follow, on the store's stream and on a run's",
			run: func(t *testing.T, h *Harness, rule string) {
				es := h.Store.(store.EventStore)
				empty, err := es.EventRead(bg, &store.EventReadParams{After: store.EventCursorLatest, Limit: 10})
				require.NoError(t, err, rule)
				require.Empty(t, empty.Events, rule)
				r1 := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				res, err := es.EventRead(bg, &store.EventReadParams{After: empty.Cursor, Limit: 10})
				require.NoError(t, err, rule)
				require.Equal(t, []string{"run_pending", "task_ready a"}, eventTypes(res.Events), rule+": an empty stream's end is its start")

				end, err := es.EventRead(bg, &store.EventReadParams{After: store.EventCursorLatest, Limit: 10})
				require.NoError(t, err, rule)
				require.Empty(t, end.Events, rule)
				require.NotEqual(t, store.EventCursorLatest, end.Cursor, rule+": the answer is a position")
				runEnd, err := es.EventRead(bg, &store.EventReadParams{RunID: r1.ID, After: store.EventCursorLatest, Limit: 10})
				require.NoError(t, err, rule)
				require.Empty(t, runEnd.Events, rule)

				succeed(t, h, claimOne(t, h, "a", rule).Lease, "ok", rule)
				r2 := createRun(t, h, nil)
				more, _ := readEvents(t, h, "", end.Cursor, 3)
				var byRun [2][]string
				for _, e := range more {
					i := 0
					if e.RunID == r2.ID {
						i = 1
					}
					byRun[i] = append(byRun[i], eventTypes([]store.StoreEvent{e})[0])
				}
				require.Equal(t, []string{"run_pending", "task_ready a"}, byRun[1], rule)
				runMore, _ := readEvents(t, h, r1.ID, runEnd.Cursor, 2)
				require.Equal(t, byRun[0], eventTypes(runMore), rule)
				require.NotEmpty(t, runMore, rule)
				require.Equal(t, "task_running a", eventTypes(runMore)[0], rule)
			},
		},
		{
			name: "SinceStartsAtATime",
			rule: "a read from Since starts at the first event at or after that time, on the store's stream and on a run's, and one after every event starts at the end",
			run: func(t *testing.T, h *Harness, rule string) {
				es := h.Store.(store.EventStore)
				r1 := createRun(t, h, nil)
				drain(t, h, rule)
				h.Advance(time.Second)
				mark := h.Now()
				h.Advance(time.Second)
				r2 := createRun(t, h, nil)
				drain(t, h, rule)
				all, _ := readEvents(t, h, "", "", 100)
				at := 0
				for at < len(all) && all[at].RunID != r2.ID {
					at++
				}
				require.Less(t, at, len(all), rule)

				for _, since := range []time.Time{mark, all[at].At} {
					res, err := es.EventRead(bg, &store.EventReadParams{Since: since, Limit: 100})
					require.NoError(t, err, rule)
					require.False(t, res.FellBehind, rule)
					require.Equal(t, eventTypes(all[at:]), eventTypes(res.Events), rule)
					require.Equal(t, all[len(all)-1].Cursor, res.Cursor, rule)
					run, err := es.EventRead(bg, &store.EventReadParams{RunID: r2.ID, Since: since, Limit: 100})
					require.NoError(t, err, rule)
					require.Equal(t, eventTypes(all[at:]), eventTypes(run.Events), rule)
					old, err := es.EventRead(bg, &store.EventReadParams{RunID: r1.ID, Since: since, Limit: 100})
					require.NoError(t, err, rule)
					require.Empty(t, old.Events, rule)
				}
				late, err := es.EventRead(bg, &store.EventReadParams{Since: h.Now().Add(time.Hour), Limit: 100})
				require.NoError(t, err, rule)
				require.Empty(t, late.Events, rule)
				r3 := createRun(t, h, nil)
				next, _ := readEvents(t, h, "", late.Cursor, 10)
				require.Equal(t, []string{"run_pending", "task_ready a"}, eventTypes(next), rule)
				require.Equal(t, r3.ID, next[0].RunID, rule)

				_, err = es.EventRead(bg, &store.EventReadParams{After: all[0].Cursor, Since: mark, Limit: 1})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
				var se *store.EventStartError
				require.True(t, errors.As(err, &se), rule)
			},
		},
		{
			name: "SubscribeFromNowAndSince",
			rule: "Subscribe with FromNow delivers only the events appended after it returned, with Since those from that time on, and refuses two starts at once",
			run: func(t *testing.T, h *Harness, rule string) {
				s, err := plait.New(h.Store)
				require.NoError(t, err, rule)
				ctx, cancel := context.WithTimeout(bg, time.Minute)
				defer cancel()
				createRun(t, h, nil)
				drain(t, h, rule)
				h.Advance(time.Second)
				mark := h.Now()
				now, err := s.Subscribe(ctx, &plait.SubscribeFilter{FromNow: true})
				require.NoError(t, err, rule)
				since, err := s.Subscribe(ctx, &plait.SubscribeFilter{Since: mark})
				require.NoError(t, err, rule)
				r := createRun(t, h, nil)
				for _, sub := range []*plait.Subscription{now, since} {
					ev, err := sub.Next(ctx)
					require.NoError(t, err, rule)
					require.Equal(t, r.ID, ev.RunID, rule)
					require.Equal(t, store.RunEventType(store.RunPending), ev.Type, rule)
				}
				_, err = s.Subscribe(ctx, &plait.SubscribeFilter{FromNow: true, Since: mark})
				var se *plait.EventStartError
				require.ErrorAs(t, err, &se, rule)
				require.Equal(t, []string{"FromNow", "Since"}, se.Starts, rule)
				require.ErrorIs(t, err, plait.ErrInvalidArgument, rule)
			},
		},
	}
}
