package redisstore_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// settings answers the findings of rep as "setting severity", sorted.
func settings(rep *redisstore.DoctorReport) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Setting+" "+string(f.Severity))
	}
	slices.Sort(out)
	return out
}

// TestDoctorMisconfigured: an evicting policy, persistence off, no
// maxmemory and a user lacking xadd are each a finding, with the value
// found and the one wanted.
func TestDoctorMisconfigured(t *testing.T) {
	ctx := context.Background()
	srv, err := redistest.Start("--maxmemory-policy", "allkeys-lru")
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { srv.Close() })
	admin := srv.Client()
	t.Cleanup(func() { admin.Close() })
	lacking := slices.DeleteFunc(redisstore.Commands(), func(c string) bool { return c == "xadd" })
	require.NoError(t, admin.Do(ctx, aclSetUser("plait", "d", lacking)...).Err())

	rep, err := redisstore.Doctor(ctx, admin, &redisstore.DoctorParams{Prefix: "d", User: "plait"})
	require.NoError(t, err)
	require.Equal(t, []string{"acl plait xadd error", "appendonly warning", "maxmemory note", "maxmemory-policy error"}, settings(rep))
	require.True(t, rep.Departs())
	require.Empty(t, rep.Unchecked)
	for _, f := range rep.Findings {
		require.Equal(t, srv.Addr, f.Node)
		require.NotEmpty(t, f.Message)
		switch f.Setting {
		case "maxmemory-policy":
			require.Equal(t, "allkeys-lru", f.Found)
			require.Equal(t, "noeviction", f.Want)
		case "acl plait xadd":
			require.Contains(t, f.Found, "xadd")
		}
	}

	// The other prefix: every command is refused for its keys and channels.
	rep, err = redisstore.Doctor(ctx, admin, &redisstore.DoctorParams{Prefix: "e", User: "plait"})
	require.NoError(t, err)
	acl := 0
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Setting, "acl plait ") {
			acl++
		}
	}
	require.Greater(t, acl, len(redisstore.Commands())/2, "the commands on keys or channels of another prefix are refused")

	// The user itself may read no setting: each check it cannot make is
	// named, with Redis's reason, and the doctor does not fail.
	c := aclClient(t, srv.Addr, "plait")
	rep, err = redisstore.Doctor(ctx, c, &redisstore.DoctorParams{Prefix: "d"})
	require.NoError(t, err)
	require.Empty(t, rep.Findings)
	require.False(t, rep.Departs())
	var unchecked []string
	for _, u := range rep.Unchecked {
		unchecked = append(unchecked, u.Setting)
		require.Contains(t, u.Reason, "NOPERM", u.Setting)
	}
	for _, want := range []string{"redis_version", "maxmemory-policy", "maxmemory", "appendonly", "acl"} {
		require.Contains(t, unchecked, want)
	}

	// As on a managed service that refuses CONFIG but answers INFO: the
	// settings INFO shows are checked from it, the others named.
	require.NoError(t, admin.Do(ctx, "acl", "setuser", "plait", "+info").Err())
	rep, err = redisstore.Doctor(ctx, c, &redisstore.DoctorParams{Prefix: "d"})
	require.NoError(t, err)
	require.Equal(t, []string{"maxmemory note", "maxmemory-policy error"}, settings(rep))
	unchecked = nil
	for _, u := range rep.Unchecked {
		unchecked = append(unchecked, u.Setting)
	}
	require.Equal(t, []string{"save", "acl"}, unchecked, "appendonly is read from INFO's aof_enabled, save is not shown there")
}

// TestDoctorWellConfigured: append-only, noeviction and a maxmemory: no
// finding, nothing unchecked, and the version among the facts.
func TestDoctorWellConfigured(t *testing.T) {
	srv, err := redistest.Start("--appendonly", "yes", "--appendfsync", "everysec", "--maxmemory", "64mb",
		"--maxmemory-policy", "noeviction")
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { srv.Close() })
	c := srv.Client()
	t.Cleanup(func() { c.Close() })
	rep, err := redisstore.Doctor(context.Background(), c, &redisstore.DoctorParams{})
	require.NoError(t, err)
	require.Empty(t, rep.Findings)
	require.Empty(t, rep.Unchecked)
	require.False(t, rep.Departs())
	facts := map[string]string{}
	for _, f := range rep.Facts {
		facts[f.Name] = f.Value
	}
	require.NotEmpty(t, facts["redis_version"])
	require.Equal(t, "standalone", facts["redis_mode"])
	require.Equal(t, "default", facts["acl_user"])
}

// TestDoctorReplicaWithoutMinReplicas: a master with a replica and
// min-replicas-to-write 0 is a warning; with 1 it is not.
func TestDoctorReplicaWithoutMinReplicas(t *testing.T) {
	ctx := context.Background()
	master, err := redistest.Start("--appendonly", "yes", "--maxmemory", "64mb")
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { master.Close() })
	host, port, _ := strings.Cut(master.Addr, ":")
	replica, err := redistest.Start("--appendonly", "yes", "--maxmemory", "64mb", "--replicaof", host, port)
	require.NoError(t, err)
	t.Cleanup(func() { replica.Close() })
	c := master.Client()
	t.Cleanup(func() { c.Close() })
	// The replica connects on its own: there is no event to wait on.
	require.Eventually(t, func() bool {
		return strings.Contains(c.Info(ctx, "replication").Val(), "connected_slaves:1")
	}, 10*time.Second, 20*time.Millisecond)

	rep, err := redisstore.Doctor(ctx, c, &redisstore.DoctorParams{})
	require.NoError(t, err)
	require.Equal(t, []string{"min-replicas-to-write warning"}, settings(rep))

	require.NoError(t, c.ConfigSet(ctx, "min-replicas-to-write", "1").Err())
	rep, err = redisstore.Doctor(ctx, c, &redisstore.DoctorParams{})
	require.NoError(t, err)
	require.Empty(t, rep.Findings)
}

// TestDoctorCluster: every node of a Cluster is checked, and its state is
// among the facts.
func TestDoctorCluster(t *testing.T) {
	cluster, err := redistest.StartCluster(3)
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(cluster.Close)
	c := cluster.Client()
	t.Cleanup(func() { _ = c.Close() })
	rep, err := redisstore.Doctor(context.Background(), c, &redisstore.DoctorParams{})
	require.NoError(t, err)
	nodes := map[string]bool{}
	for _, f := range rep.Facts {
		if f.Name == "cluster_state" {
			require.Equal(t, "ok", f.Value)
			nodes[f.Node] = true
		}
	}
	require.Len(t, nodes, 3)
	// redistest's nodes run without persistence or maxmemory.
	require.Equal(t, []string{"appendonly warning", "appendonly warning", "appendonly warning",
		"maxmemory note", "maxmemory note", "maxmemory note"}, settings(rep))
}

// TestDoctorParams: a bad prefix or user is refused before any command.
func TestDoctorParams(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { c.Close() })
	for _, p := range []*redisstore.DoctorParams{nil, {Prefix: "a:b"}, {User: "a b"}} {
		_, err := redisstore.Doctor(context.Background(), c, p)
		require.ErrorIs(t, err, store.ErrInvalidArgument)
	}
}
