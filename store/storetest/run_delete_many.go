package storetest

import (
	"fmt"
	"testing"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testRunDeleteMany is the suite of [store.RunDeleteManyStore].
func testRunDeleteMany(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "OneAnswerPerID",
			rule: "RunDeleteMany deletes every finished run named and answers, per id in order, nil, ErrRunActive for a run not finished (left as it is) or ErrNotFound for an unknown or already deleted one",
			run: func(t *testing.T, h *Harness, rule string) {
				ds := h.Store.(store.RunDeleteManyStore)
				done1 := createRun(t, h, nil)
				succeed(t, h, claimOne(t, h, "a", rule).Lease, "ok", rule)
				active := createRun(t, h, nil)
				done2 := createRun(t, h, nil)
				_, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: done2.ID})
				require.NoError(t, err, rule)

				errs, err := ds.RunDeleteMany(bg, &store.RunDeleteManyParams{IDs: []string{done1.ID, active.ID, "no-such-run", done2.ID, done1.ID}})
				require.NoError(t, err, rule)
				require.Len(t, errs, 5, rule)
				require.NoError(t, errs[0], rule)
				require.ErrorIs(t, errs[1], store.ErrRunActive, rule)
				require.ErrorIs(t, errs[2], store.ErrNotFound, rule)
				require.NoError(t, errs[3], rule)
				require.ErrorIs(t, errs[4], store.ErrNotFound, rule+": a run named twice is deleted once")

				for _, id := range []string{done1.ID, done2.ID} {
					_, err := h.Store.RunGet(bg, &store.RunGetParams{ID: id})
					require.ErrorIs(t, err, store.ErrNotFound, rule)
				}
				require.Equal(t, store.RunPending, getRun(t, h, active.ID).Status, rule)
				if qs, ok := h.Store.(store.QueryStore); ok {
					res, err := qs.RunList(bg, &store.RunListParams{Limit: 10})
					require.NoError(t, err, rule)
					require.Len(t, res.Runs, 1, rule)
					require.Equal(t, active.ID, res.Runs[0].ID, rule)
				}
				if h.Leftovers != nil {
					_, err := h.Store.RunCancel(bg, &store.RunCancelParams{ID: active.ID})
					require.NoError(t, err, rule)
					// nothing is left once its retention would have passed (an
					// expiry entry may wait for it, as after RunDelete)
					goneAfterRetention(t, h, done1.ID, rule)
					require.Empty(t, h.Leftovers(done2.ID), rule)
				}
			},
		},
		{
			name: "ManyRunsAndTheirLetters",
			rule: "RunDeleteMany deletes many finished runs in one call, their dead letters with them",
			run: func(t *testing.T, h *Harness, rule string) {
				ds := h.Store.(store.RunDeleteManyStore)
				var ids []string
				for i := range 40 {
					r := createRun(t, h, &runOpts{Tenant: fmt.Sprintf("t%d", i%3)})
					ids = append(ids, r.ID)
				}
				for _, ct := range claim(t, h, nil).Tasks {
					failTask(t, h, ct.Lease, "boom", rule)
				}
				errs, err := ds.RunDeleteMany(bg, &store.RunDeleteManyParams{IDs: ids})
				require.NoError(t, err, rule)
				require.Len(t, errs, len(ids), rule)
				for i, e := range errs {
					require.NoError(t, e, "%s: run %d", rule, i)
				}
				if d, ok := h.Store.(store.DeadLetterStore); ok {
					require.Empty(t, listDead(t, d, store.DeadLetterListParams{Limit: 100}, rule).Letters, rule)
				}
				if qs, ok := h.Store.(store.QueryStore); ok {
					c, err := qs.RunCount(bg, &store.RunCountParams{Filter: store.RunFilter{Tenant: "t1"}, Limit: 100})
					require.NoError(t, err, rule)
					var n int64
					for _, v := range c.Counts {
						n += v
					}
					require.Zero(t, n, rule)
				}
			},
		},
		{
			name: "Bounds",
			rule: "RunDeleteMany takes at most GetManyMax ids (ErrInvalidArgument beyond, nothing deleted) and answers no error for no id",
			run: func(t *testing.T, h *Harness, rule string) {
				ds := h.Store.(store.RunDeleteManyStore)
				r := createRun(t, h, nil)
				succeed(t, h, claimOne(t, h, "a", rule).Lease, "ok", rule)
				ids := make([]string, store.GetManyMax+1)
				for i := range ids {
					ids[i] = r.ID
				}
				_, err := ds.RunDeleteMany(bg, &store.RunDeleteManyParams{IDs: ids})
				require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
				getRun(t, h, r.ID)
				errs, err := ds.RunDeleteMany(bg, &store.RunDeleteManyParams{})
				require.NoError(t, err, rule)
				require.Empty(t, errs, rule)
			},
		},
	})
}
