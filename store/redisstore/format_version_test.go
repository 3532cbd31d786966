package redisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
	"github.com/plaitdag/plait/store/storetest"
)

// TestConformancePreviousFormat runs the whole conformance suite on a
// store that creates its runs in the previous format version, as the
// upgraded processes of a rolling upgrade do: what that version writes
// must keep meaning what it meant.
func TestConformancePreviousFormat(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) *storetest.Harness {
		return miniredisHarness(t, redisstore.WithFormatVersion(redisstore.FormatVersionPrevious))
	})
}

// TestRunEventsOfEachFormat reads the events of one run's life from a
// store writing each format version: the newest writes a run's moves as
// its status letter alone, the previous its whole record, which a reader
// of that version expects; both read back as the same events.
func TestRunEventsOfEachFormat(t *testing.T) {
	t.Parallel()
	c := redistest.Private(t)
	ctx := context.Background()
	var read [2][]store.StoreEvent
	for i, v := range []int{redisstore.FormatVersionPrevious, redisstore.FormatVersionNewest} {
		prefix := "fv" + string(rune('a'+i))
		clk := fakeclock.New(start)
		s, err := redisstore.New(ctx, c, redisstore.WithPrefix(prefix), redisstore.WithFormatVersion(v), redisstore.WithClock(clk))
		require.NoError(t, err)
		wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}}}
		created, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
		got, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute})
		require.NoError(t, err)
		require.Len(t, got.Tasks, 1)
		clk.Advance(time.Second)
		_, err = s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w",
			Outcomes: []store.TaskOutcome{{Lease: got.Tasks[0].Lease, Outcome: store.OutcomeSucceeded}}})
		require.NoError(t, err)

		var runMoves []string
		pairs, events := 0, 0
		raw, err := c.Do(ctx, "XRANGE", prefix+":{0}:e", "-", "+").Slice()
		require.NoError(t, err)
		for _, entry := range raw {
			fields := entry.([]any)[1].([]any)
			for j := 2; j+1 < len(fields); j += 2 {
				pairs++
				for _, ev := range splitEvents(fields[j+1].(string)) {
					events++
					if strings.HasPrefix(ev, "!") {
						runMoves = append(runMoves, ev)
					}
				}
			}
		}
		require.Len(t, runMoves, 3, "created, started, completed")
		if v == redisstore.FormatVersionNewest {
			require.Less(t, pairs, events, "a run's adjacent moves of one call share a pair")
		} else {
			require.Equal(t, pairs, events, "one pair per event")
		}
		for _, m := range runMoves {
			if v == redisstore.FormatVersionNewest {
				require.Len(t, m, 2, "a run's move as its status letter: %q", m)
			} else {
				require.Contains(t, m, ",", "a run's move as its whole record: %q", m)
			}
		}
		res, err := s.EventRead(ctx, &store.EventReadParams{RunID: created.Run.ID, Limit: 100})
		require.NoError(t, err)
		for _, ev := range res.Events {
			ev.At, ev.RunID, ev.Cursor = time.Time{}, "", ""
			read[i] = append(read[i], ev)
		}
	}
	require.NotEmpty(t, read[0])
	require.Equal(t, read[0], read[1])
}

// TestEventCapCountsEvents fills a shard's stream with calls of many
// events each: the stream keeps about its cap in events, not in entries
// (which would keep a hundred times as many here).
func TestEventCapCountsEvents(t *testing.T) {
	t.Parallel()
	c := redistest.Private(t)
	ctx := context.Background()
	const eventCap = 1000
	s, err := redisstore.New(ctx, c, redisstore.WithEventCap(eventCap))
	require.NoError(t, err)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}}}
	params := make([]*store.RunCreateParams, 50)
	for i := range params {
		params[i] = &store.RunCreateParams{Workflow: wf}
	}
	for range 100 {
		out, err := s.RunCreateMany(ctx, params)
		require.NoError(t, err)
		require.NoError(t, out[0].Err)
	}
	raw, err := c.Do(ctx, "XRANGE", "plait:{0}:e", "-", "+").Slice()
	require.NoError(t, err)
	events, most := 0, 0
	for _, entry := range raw {
		fields := entry.([]any)[1].([]any)
		n := 0
		for j := 3; j < len(fields); j += 2 { // the values, but "t"'s
			n += len(splitEvents(fields[j].(string)))
		}
		events += n
		most = max(most, n)
	}
	t.Logf("FIGURE %d events in %d entries kept for a cap of %d, of %d written", events, len(raw), eventCap, 100*100)
	require.GreaterOrEqual(t, events, eventCap, "the cap's newest events are kept")
	require.LessOrEqual(t, events, eventCap+2*most, "no more than about the cap is kept")
}

// upgradedStore is a store of the newest format on a prefix whose first
// runs (those of its first three creating calls) were created by a store
// of the previous format: the prefix of a rolling upgrade, its runs in
// both records and both forms of the name indexes (lua/lib_names.lua),
// read, worked on, deleted and pruned by the newest. The older runs come
// first, as in an upgrade, which also keeps run ids growing in creation
// order (each store takes its ids in blocks).
type upgradedStore struct {
	*redisstore.Store
	previous *redisstore.Store
	n        int
}

func (u *upgradedStore) RunCreate(ctx context.Context, p *store.RunCreateParams) (*store.RunCreateResult, error) {
	u.n++
	if u.n <= 3 {
		return u.previous.RunCreate(ctx, p)
	}
	return u.Store.RunCreate(ctx, p)
}

func (u *upgradedStore) RunCreateMany(ctx context.Context, ps []*store.RunCreateParams) ([]store.RunCreateOutcome, error) {
	u.n++
	if u.n <= 3 {
		return u.previous.RunCreateMany(ctx, ps)
	}
	return u.Store.RunCreateMany(ctx, ps)
}

// TestConformanceUpgradedPrefix runs the whole conformance suite, its
// query suites included, on a prefix upgraded from the previous format:
// every answer stays exact with runs of both formats mixed.
func TestConformanceUpgradedPrefix(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) *storetest.Harness {
		h, open := miniredisHarnessAndOpen(t)
		s := h.Store.(*redisstore.Store)
		previous := open(redisstore.WithFormatVersion(redisstore.FormatVersionPrevious))
		h.Store = &upgradedStore{Store: s, previous: previous}
		return h
	})
}

// splitEvents splits a value of the event stream into its events, as the
// store's reader does: format 8 joins a run's adjacent events of one call
// by the byte 0x1f (lua/lib_status.lua, note), never the free-text ones.
func splitEvents(v string) []string {
	if v == "" || strings.ContainsRune("?%#", rune(v[0])) {
		return []string{v}
	}
	head, _, _ := strings.Cut(v, "\n")
	return strings.Split(head, "\x1f")
}
