package redisstore

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
)

// TestCreateCallsBounds: createCalls puts the runs of one shard together,
// in the order given, in calls of at most createManyRuns runs and, past a
// call's first run, createManyBytes of arguments.
func TestCreateCallsBounds(t *testing.T) {
	req := func(base, id string, payload int) *createReq {
		return &createReq{id: id, keys: []string{base + "r:" + id},
			args: []any{"step", base, id, "c", 1, 0, 1, 0, 0, "o", strings.Repeat("x", payload)}}
	}
	var reqs []*createReq
	for i := 0; i < 150; i++ {
		reqs = append(reqs, req("p:{0}:", "a"+strconv.Itoa(i), 10))
		if i%15 == 0 {
			reqs = append(reqs, req("p:{1}:", "b"+strconv.Itoa(i), 10))
		}
	}
	calls, at := createCalls(reqs)
	var sizes []int
	for c, call := range calls {
		sizes = append(sizes, len(at[c]))
		require.Len(t, call.keys, len(at[c]), "one key per unkeyed run")
		base := call.args[1]
		for j, i := range at[c] {
			require.Equal(t, base, reqs[i].args[1], "one shard per call")
			require.Equal(t, reqs[i].keys[0], call.keys[j], "keys in the order of the runs")
			if j > 0 {
				require.Greater(t, i, at[c][j-1], "the runs of a call in the order given")
			}
		}
	}
	require.Equal(t, []int{64, 10, 64, 22}, sizes, "150 runs of shard 0 in calls of 64, 64 and 22; the 10 of shard 1 in one")

	big := []*createReq{req("p:{0}:", "1", createManyBytes/2), req("p:{0}:", "2", createManyBytes/2), req("p:{0}:", "3", 2*createManyBytes), req("p:{0}:", "4", 10)}
	_, at = createCalls(big)
	require.Equal(t, [][]int{{0}, {1}, {2}, {3}}, at, "a call closes before it passes createManyBytes; a run over it goes alone")
}

// TestRunCreateManyRunByRun: in one run_create_many.lua call, a run the
// script refuses (its root's definition unreadable) answers its own error
// and leaves nothing behind (no hash, no index entry, no event), while the
// runs before and after it are created; the same call sent again (its
// reply lost) answers the created runs again and writes nothing.
func TestRunCreateManyRunByRun(t *testing.T) {
	luaServers(t, func(t *testing.T, c *redis.Client) {
		ctx := context.Background()
		s, err := New(ctx, c, WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		require.NoError(t, err)
		var reqs []*createReq
		for i := 0; i < 3; i++ {
			p := &store.RunCreateParams{Workflow: &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h"}}}}
			if i == 2 {
				p.Key = "k" // a keyed run, shard of its key: force shard 0 below
			}
			req, found, err := s.prepareCreate(ctx, p)
			require.NoError(t, err)
			require.Nil(t, found)
			reqs = append(reqs, req)
		}
		// one shard (a store of one shard), so one call
		calls, _ := createCalls(reqs)
		require.Len(t, calls, 1)
		bad := reqs[1]
		for i, a := range bad.args {
			if a == "d:a" {
				bad.args[i+1] = "garbage"
			}
		}
		send := func() []error {
			replies, errs, err := s.sendCreates(ctx, reqs)
			require.NoError(t, err)
			out := make([]error, len(reqs))
			for i := range reqs {
				require.NoError(t, errs[i])
				res, err := s.createAnswer(ctx, reqs[i], replies[i])
				out[i] = err
				if err == nil {
					require.False(t, res.Existing)
					require.Equal(t, reqs[i].id, res.Run.ID)
				}
			}
			return out
		}
		errs := send()
		require.NoError(t, errs[0])
		require.Error(t, errs[1], "the refused run answers its own error")
		require.NoError(t, errs[2])
		base := reqs[0].args[1].(string)
		n, err := c.Exists(ctx, bad.keys[0]).Result()
		require.NoError(t, err)
		require.Zero(t, n, "the refused run has no hash")
		ids, err := c.ZRange(ctx, base+"ia", 0, -1).Result()
		require.NoError(t, err)
		require.ElementsMatch(t, []string{reqs[0].id, reqs[2].id}, ids, "only the created runs are indexed")
		// the stream raw: an entry repeats its field (the run id) per event
		events := func() []string {
			v, err := c.Do(ctx, "XRANGE", base+"e", "-", "+").Slice()
			require.NoError(t, err)
			var vs []string
			for _, x := range v {
				for _, f := range x.([]any)[1].([]any) {
					vs = append(vs, f.(string))
				}
			}
			return vs
		}
		before := events()
		require.Contains(t, before, reqs[0].id)
		require.Contains(t, before, reqs[2].id)
		require.NotContains(t, before, bad.id, "no event of the refused run")

		errs = send()
		require.NoError(t, errs[0])
		require.Error(t, errs[1])
		require.NoError(t, errs[2])
		require.Equal(t, before, events(), "a resend writes no event")
		res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
		require.NoError(t, err)
		require.Len(t, res.Tasks, 2, "each created run's root ready once")
		require.Equal(t, reqs[0].id, res.Tasks[0].Lease.RunID, "in the order of the call")
	})
}
