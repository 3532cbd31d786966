package redisstore_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
	"github.com/plaitdag/plait/store/storetest"
)

// aclSetUser is the ACL SETUSER of the user docs/operations.md tells an
// operator to create: password pw, the keys and channels of prefix, and
// exactly the commands given.
func aclSetUser(user, prefix string, commands []string) []any {
	args := []any{"acl", "setuser", user, "reset", "on", ">pw", "resetkeys", "~" + prefix + ":*",
		"resetchannels", "&" + prefix + ":*", "-@all"}
	for _, c := range commands {
		args = append(args, "+"+c)
	}
	return args
}

// aclClient is a client of addr logged in as user.
func aclClient(t *testing.T, addr, user string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Username: user, Password: "pw"})
	t.Cleanup(func() { c.Close() })
	return c
}

// aclServer starts a redis-server of the test's own and answers its
// address and a client of its default user, which holds every permission.
func aclServer(t *testing.T) (string, *redis.Client) {
	t.Helper()
	srv, err := redistest.Start()
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { srv.Close() })
	admin := srv.Client()
	t.Cleanup(func() { admin.Close() })
	return srv.Addr, admin
}

// TestACLUserRunsTheConformanceSuite: a user allowed exactly
// redisstore.Commands on its prefix's keys and channels runs every case of
// the suite, so a command the store sends and the list lacks fails it.
// Each case has its own prefix and so its own user.
func TestACLUserRunsTheConformanceSuite(t *testing.T) {
	addr, admin := aclServer(t)
	t.Run("functions", func(t *testing.T) { aclConformance(t, addr, admin, "acl", redisstore.Commands()) })
	// A user refused the function commands, as on a service that forbids
	// them: the store runs the same scripts by EVALSHA.
	noFunctions := slices.DeleteFunc(redisstore.Commands(), func(c string) bool {
		return c == "function|load" || c == "fcall" || c == "fcall_ro"
	})
	t.Run("evalsha", func(t *testing.T) { aclConformance(t, addr, admin, "acle", noFunctions) })
}

// aclConformance runs the suite through users allowed commands, one user
// and prefix per case.
func aclConformance(t *testing.T, addr string, admin *redis.Client, name string, commands []string) {
	var n atomic.Int64
	storetest.Run(t, func(t *testing.T) *storetest.Harness {
		id := strconv.FormatInt(n.Add(1), 10)
		prefix, user := name+id, name+"u"+id
		require.NoError(t, admin.Do(context.Background(), aclSetUser(user, prefix, commands)...).Err())
		c := aclClient(t, addr, user)
		clk := fakeclock.New(start)
		s, err := redisstore.New(context.Background(), c, redisstore.WithClock(clk), redisstore.WithPrefix(prefix),
			redisstore.WithMaxResultBytes(maxResultBytes), redisstore.WithStats(0), redisstore.WithTaskLogLimit(5, 64),
			redisstore.WithLogger(quietLogger()))
		require.NoError(t, err)
		return &storetest.Harness{Store: s, Now: clk.Now, Advance: clk.Advance,
			Caps:      storetest.Caps{Retention: store.RetentionDefault, MaxResultBytes: maxResultBytes, TaskLogLines: 5, TaskLogBytes: 64},
			Leftovers: redisLeftovers(admin, prefix)}
	})
}

// TestACLUserRunsTheConformanceSuiteOnACluster: the same on a three-master
// Cluster, the user created on every node, so the commands a cluster
// client sends (CLUSTER SLOTS, COMMAND) are in the list too.
func TestACLUserRunsTheConformanceSuiteOnACluster(t *testing.T) {
	cluster, err := redistest.StartCluster(3)
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(cluster.Close)
	var n atomic.Int64
	storetest.Run(t, func(t *testing.T) *storetest.Harness {
		id := strconv.FormatInt(n.Add(1), 10)
		prefix, user := "aclc"+id, "plait"+id
		for _, a := range cluster.Addrs {
			node := redis.NewClient(&redis.Options{Addr: a})
			err := node.Do(context.Background(), aclSetUser(user, prefix, redisstore.Commands())...).Err()
			node.Close()
			require.NoError(t, err)
		}
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs, Username: user, Password: "pw"})
		t.Cleanup(func() { _ = c.Close() })
		return clusterHarness(t, c, prefix)
	})
}

// TestACLUserCannotTouchAnotherPrefix: the user of prefix "a" reads and
// writes no key of prefix "ab" (the pattern is "a:*", not "a*"), hears no
// channel of it, and a store it opens on "ab" is refused with a
// *PermissionError about keys, while one on "a" works.
func TestACLUserCannotTouchAnotherPrefix(t *testing.T) {
	ctx := context.Background()
	addr, admin := aclServer(t)
	require.NoError(t, admin.Do(ctx, aclSetUser("plait", "a", redisstore.Commands())...).Err())
	other, err := redisstore.New(ctx, admin, redisstore.WithPrefix("ab"), redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "t", Handler: "h", Queue: store.DefaultQueue}}}
	run, err := other.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
	require.NoError(t, err)

	c := aclClient(t, addr, "plait")
	for _, args := range [][]any{
		{"get", "ab:{layout}"},
		{"hgetall", "ab:{0}:r:" + run.Run.ID},
		{"set", "ab:{layout}", "x"},
		{"del", "ab:{seq}"},
	} {
		err := c.Do(ctx, args...).Err()
		require.ErrorContains(t, err, "NOPERM", "%v on another prefix", args)
	}
	require.ErrorContains(t, c.Do(ctx, "publish", "ab:ev", "x").Err(), "NOPERM")

	_, err = redisstore.New(ctx, c, redisstore.WithPrefix("ab"), redisstore.WithLogger(quietLogger()))
	var pe *redisstore.PermissionError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "key", pe.Denied)
	require.ErrorIs(t, err, redisstore.ErrPermission)

	own, err := redisstore.New(ctx, c, redisstore.WithPrefix("a"), redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	_, err = own.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
	require.NoError(t, err)
	got, err := other.RunGet(ctx, &store.RunGetParams{ID: run.Run.ID})
	require.NoError(t, err)
	require.Equal(t, run.Run.ID, got.ID, "the other prefix's run is untouched")
}

// TestACLMissingCommandIsNamed: a user lacking one command of the list
// gets a *PermissionError naming it, whether the store sends the command
// (hgetall, fcall) or a script runs it (xadd: Redis 7.0 names only the
// script's line, which the store reads back), by FCALL or by EVALSHA when
// the function library could not be loaded.
func TestACLMissingCommandIsNamed(t *testing.T) {
	ctx := context.Background()
	addr, admin := aclServer(t)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "t", Handler: "h", Queue: store.DefaultQueue}}}
	create := func(s *redisstore.Store) error {
		_, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		return err
	}
	get := func(s *redisstore.Store) error {
		res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
		_, err = s.RunGet(ctx, &store.RunGetParams{ID: res.Run.ID})
		return err
	}
	for i, tc := range []struct {
		lacks  []string
		call   func(*redisstore.Store) error
		want   string
		script string
	}{
		{[]string{"hgetall"}, get, "hgetall", ""},
		{[]string{"fcall"}, create, "fcall", ""},
		{[]string{"xadd"}, create, "xadd", "run_create"},
		{[]string{"function|load", "xadd"}, create, "xadd", "run_create"},
	} {
		t.Run(tc.want+strconv.Itoa(i), func(t *testing.T) {
			prefix, user := "m"+strconv.Itoa(i), "u"+strconv.Itoa(i)
			allowed := slices.DeleteFunc(redisstore.Commands(), func(c string) bool { return slices.Contains(tc.lacks, c) })
			require.Len(t, allowed, len(redisstore.Commands())-len(tc.lacks), "every lacked command is in the list")
			require.NoError(t, admin.Do(ctx, aclSetUser(user, prefix, allowed)...).Err())
			s, err := redisstore.New(ctx, aclClient(t, addr, user), redisstore.WithPrefix(prefix),
				redisstore.WithLogger(quietLogger()))
			require.NoError(t, err)
			err = tc.call(s)
			var pe *redisstore.PermissionError
			require.ErrorAs(t, err, &pe, "%v", err)
			require.True(t, errors.Is(err, redisstore.ErrPermission))
			require.False(t, errors.Is(err, store.ErrRejected), "a refusal for permissions is about the server, not the call")
			require.Equal(t, tc.want, pe.Command)
			require.Equal(t, tc.script, pe.Script)
			require.Equal(t, "command", pe.Denied)
			require.Contains(t, err.Error(), "("+tc.want+")")
		})
	}
}

// TestACLUserWaitsOnEveryShardOfACluster: the wait of a Cluster store with
// several shards (a blocking connection per shard, CLIENT ID, CLIENT
// UNBLOCK of the others once one wakes) runs through the user of the list.
func TestACLUserWaitsOnEveryShardOfACluster(t *testing.T) {
	cluster, err := redistest.StartCluster(3)
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(cluster.Close)
	ctx := context.Background()
	for _, a := range cluster.Addrs {
		node := redis.NewClient(&redis.Options{Addr: a})
		err := node.Do(ctx, aclSetUser("plait", "wake", redisstore.Commands())...).Err()
		node.Close()
		require.NoError(t, err)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs, Username: "plait", Password: "pw"})
	t.Cleanup(func() { _ = c.Close() })
	s, err := redisstore.New(ctx, c, redisstore.WithShards(8), redisstore.WithPrefix("wake"), redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	wf := &store.WorkflowSpec{Name: "wf", Tasks: []store.TaskSpec{{Name: "a", Handler: "h", Queue: store.DefaultQueue}}}
	for i := 0; i < 8; i++ {
		woke := make(chan error, 1)
		go func() { woke <- s.ReadyWait(ctx, &store.ReadyWaitParams{Timeout: time.Hour}) }()
		_, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
		select {
		case err := <-woke:
			require.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Fatalf("a task on the shard of run %d did not end the wait", i+1)
		}
		res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 10, LeaseDuration: time.Minute})
		require.NoError(t, err)
		require.Len(t, res.Tasks, 1)
	}
}
