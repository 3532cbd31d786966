package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testDeadLetterGroups is the suite of [store.DeadLetterGroupStore].
func testDeadLetterGroups(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "GroupsCountTheWindow",
			rule: "DeadLetterGroups groups the window's letters by error key, each group with its count, oldest and newest time and newest letter, the counts adding up to the letters of the window",
			run: func(t *testing.T, h *Harness, rule string) {
				g := h.Store.(store.DeadLetterGroupStore)
				want := deadLetterMix(t, h, rule)
				for _, p := range []store.DeadLetterGroupsParams{{}, {Tenant: "acme"}, {Queue: "q2", ErrorPrefix: "timeout"}, {Service: "nobody"}} {
					p.Window = store.DeadLetterGroupsWindowMax
					res, err := g.DeadLetterGroups(bg, &p)
					require.NoError(t, err, rule)
					lp := p.ListParams()
					var match []store.DeadLetter
					for _, w := range want {
						if lp.Matches(&w) {
							match = append(match, w)
						}
					}
					requireGroups(t, match, res, rule)
					require.False(t, res.Truncated, rule)
					require.Empty(t, res.NextCursor, rule)
				}
				res, err := g.DeadLetterGroups(bg, &store.DeadLetterGroupsParams{Window: store.DeadLetterGroupsWindowMax})
				require.NoError(t, err, rule)
				var keys []string
				for _, gr := range res.Groups {
					keys = append(keys, gr.Key)
				}
				require.ElementsMatch(t, []string{"timeout after #", "bad input: order #", "timeout: db", "no route to #.#.#.#"}, keys, rule+": words with digits fall out of the key")
			},
		},
		{
			name: "WindowsPageTheLetters",
			rule: "a window smaller than the letters is reported truncated, and the windows that follow its cursor group every letter once",
			run: func(t *testing.T, h *Harness, rule string) {
				g := h.Store.(store.DeadLetterGroupStore)
				want := deadLetterMix(t, h, rule)
				p := store.DeadLetterGroupsParams{Window: 5}
				seen := 0
				for calls := 0; ; calls++ {
					require.Less(t, calls, len(want)+2, rule)
					res, err := g.DeadLetterGroups(bg, &p)
					require.NoError(t, err, rule)
					end := min(seen+res.Letters, len(want))
					requireGroups(t, want[seen:end], res, rule)
					seen = end
					require.Equal(t, res.NextCursor != "", res.Truncated, rule)
					if !res.Truncated {
						break
					}
					p.Cursor = res.NextCursor
				}
				require.Equal(t, len(want), seen, rule)
				for _, bad := range []store.DeadLetterGroupsParams{{}, {Window: store.DeadLetterGroupsWindowMax + 1}, {Window: 1, Cursor: "x"}} {
					_, err := g.DeadLetterGroups(bg, &bad)
					require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
				}
			},
		},
	})
}

// requireGroups checks res against the letters of its window, newest
// first, grouped here by brute force.
func requireGroups(t *testing.T, window []store.DeadLetter, res *store.DeadLetterGroupsResult, rule string) {
	t.Helper()
	require.Equal(t, len(window), res.Letters, rule)
	type agg struct {
		count          int
		oldest, newest time.Time
		sample         string
	}
	byKey := map[string]*agg{}
	for _, l := range window {
		k := store.DeadLetterErrorKey(l.Error)
		a := byKey[k]
		if a == nil {
			byKey[k] = &agg{count: 1, oldest: l.At, newest: l.At, sample: l.RunID + " " + l.Task}
			continue
		}
		a.count++
		a.oldest = l.At
	}
	require.Len(t, res.Groups, len(byKey), rule)
	sum := 0
	for i, gr := range res.Groups {
		a := byKey[gr.Key]
		require.NotNil(t, a, rule+": group %q", gr.Key)
		require.Equal(t, a.count, gr.Count, rule+": group %q", gr.Key)
		sameTime(t, a.oldest, gr.Oldest, rule)
		sameTime(t, a.newest, gr.Newest, rule)
		require.Equal(t, a.sample, gr.Sample.RunID+" "+gr.Sample.Task, rule)
		require.Equal(t, gr.Key, store.DeadLetterErrorKey(gr.Sample.Error), rule)
		if i > 0 {
			require.GreaterOrEqual(t, res.Groups[i-1].Count, gr.Count, rule+": largest first")
		}
		sum += gr.Count
	}
	require.Equal(t, len(window), sum, rule)
}
