package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestAdmissionOfARunSentInParts: a run of more than 256 tasks, whose task
// fields are written in parts before the commit, is checked and counted by
// the commit with every task: a refused one leaves none of its parts.
func TestAdmissionOfARunSentInParts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	big := func(queue string) *store.WorkflowSpec {
		wf := &store.WorkflowSpec{Name: "big"}
		for i := range 300 {
			q := store.DefaultQueue
			if i%3 == 0 {
				q = queue
			}
			wf.Tasks = append(wf.Tasks, store.TaskSpec{Name: "t" + strconv.Itoa(i), Handler: "h", Queue: q})
		}
		return wf
	}
	for _, p := range []store.AdmissionSetParams{
		{AdmissionScope: store.AdmissionScope{Tenant: "acme"}, MaxPending: 500},
		{AdmissionScope: store.AdmissionScope{Queue: "side"}, MaxPending: 1000},
	} {
		_, err := s.AdmissionSet(ctx, &p)
		require.NoError(t, err)
	}
	pending := func(sc store.AdmissionScope) int64 {
		got, err := s.AdmissionGet(ctx, &store.AdmissionGetParams{AdmissionScope: sc})
		require.NoError(t, err)
		return got.Pending
	}
	_, err = s.RunCreate(ctx, &store.RunCreateParams{Workflow: big("side"), Tenant: "acme"})
	require.NoError(t, err)
	require.Equal(t, int64(300), pending(store.AdmissionScope{Tenant: "acme"}), "every task counts on its tenant")
	require.Equal(t, int64(100), pending(store.AdmissionScope{Queue: "side"}), "the tasks of the capped queue count on it")

	_, err = s.RunCreate(ctx, &store.RunCreateParams{Workflow: big("side"), Tenant: "acme", Key: "big-2"})
	var ae *store.AdmissionError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, store.AdmissionError{Tenant: "acme", MaxPending: 500, Pending: 300, Tasks: 300}, *ae)
	runs := 0
	for _, k := range m.Keys() {
		if strings.Contains(k, ":r:") {
			runs++
		}
		require.NotContains(t, k, ":k:big-2", "the refused run's key is not taken")
	}
	require.Equal(t, 1, runs, "the refused run's parts are deleted")
	require.Equal(t, int64(100), pending(store.AdmissionScope{Queue: "side"}))
}

// TestAdmissionPerShard: a cap is written to every shard and applies to
// each shard's count: with 3 shards a tenant capped at one pending task
// holds three, one per shard, and AdmissionGet answers their sum and the
// fullest shard's.
func TestAdmissionPerShard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()), redisstore.WithShards(3))
	require.NoError(t, err)
	acme := store.AdmissionScope{Tenant: "acme"}
	_, err = s.AdmissionSet(ctx, &store.AdmissionSetParams{AdmissionScope: acme, MaxPending: 1})
	require.NoError(t, err)
	for sh := range 3 {
		require.Equal(t, "1", m.HGet("plait:{"+strconv.Itoa(sh)+"}:ac", "t:acme"), "shard %d holds the cap", sh)
	}
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h", Queue: store.DefaultQueue}}}
	shards := map[string]bool{}
	var refused *store.AdmissionError
	for range 6 {
		res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf, Tenant: "acme"})
		if err != nil {
			require.ErrorAs(t, err, &refused)
			break
		}
		n, err := strconv.Atoi(res.Run.ID[:strings.Index(res.Run.ID, "-")])
		require.NoError(t, err)
		shards[strconv.Itoa(n%3)] = true // a run's shard is its number modulo the shards
	}
	require.NotNil(t, refused, "a shard already holding the tenant's one task refuses the next")
	require.Equal(t, int64(1), refused.Pending, "checked against its shard's count")
	got, err := s.AdmissionGet(ctx, &store.AdmissionGetParams{AdmissionScope: acme})
	require.NoError(t, err)
	require.Equal(t, store.AdmissionGetResult{MaxPending: 1, Pending: 3, PendingShardMax: 1}, *got)
	require.Len(t, shards, 3, "one run admitted on each shard")
}
