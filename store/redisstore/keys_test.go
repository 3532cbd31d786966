package redisstore

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/ids"
)

// crc16 is the CRC-16/XMODEM Redis Cluster hashes keys with.
func crc16(b string) uint16 {
	var crc uint16
	for i := 0; i < len(b); i++ {
		crc ^= uint16(b[i]) << 8
		for j := 0; j < 8; j++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// hashTag returns the part of key Redis Cluster hashes: the text between the
// first '{' and the next '}', when not empty, else the whole key.
func hashTag(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return key
	}
	return key[open+1 : open+1+end]
}

func slot(key string) uint16 { return crc16(hashTag(key)) % 16384 }

// shardKeys returns every kind of shard-local key for one set of names.
func shardKeys(k keys, shard int, run, queue, key string) map[string]string {
	return map[string]string{
		"run":     k.run(shard, run),
		"done":    k.done(shard, run),
		"key":     k.keyIndex(shard, key),
		"ready0":  k.ready(shard, queue, 0),
		"ready3":  k.ready(shard, queue, 3),
		"delayed": k.delayed(shard, queue),
		"active":  k.active(shard),
		"wake":    k.wake(shard, queue),
		"payload": k.payload(shard, run, key),
		"dead":    k.deadLetters(shard, run),
		"logs":    k.taskLogs(shard, run),
		"memo":    k.claimMemo(shard, key),
	}
}

func TestCRC16(t *testing.T) {
	// Reference values from the Redis Cluster specification.
	require.Equal(t, uint16(0x31C3), crc16("123456789"))
	require.Equal(t, uint16(12182), slot("foo"))
	require.Equal(t, slot("{user1000}.following"), slot("{user1000}.followers"))
}

func TestKeysOneTagAndSlot(t *testing.T) {
	k := keys{prefix: "plait"}
	for shard := 0; shard < 5; shard++ {
		var want uint16
		for kind, key := range shardKeys(k, shard, "42", "default", "order-7") {
			require.Equal(t, 1, strings.Count(key, "{"), "%s key %q has exactly one hash tag", kind, key)
			require.Equal(t, 1, strings.Count(key, "}"), "%s key %q has exactly one hash tag", kind, key)
			if want == 0 {
				want = slot(key)
			}
			require.Equal(t, want, slot(key), "every key of shard %d shares one slot (%s)", shard, kind)
		}
		require.True(t, strings.HasPrefix(k.base(shard), "plait:{"))
	}
	require.Equal(t, 1, strings.Count(k.seq(), "{"), "the sequence has its own hash tag")
	require.NotEqual(t, slot(k.seq()), slot(k.run(0, "1")), "the sequence is in its own slot")
}

// TestScriptKeysShareSlot builds the KEYS of every script as the store does
// and checks they hash to one slot.
func TestScriptKeysShareSlot(t *testing.T) {
	s := &Store{keys: keys{prefix: "p"}, cfg: config{shards: 4}}
	for shard := 0; shard < 4; shard++ {
		sets := map[string][]string{
			"run_create":      {s.keys.run(shard, "8"), s.keys.keyIndex(shard, "k")},
			"run_create_part": {s.keys.run(shard, "8")},
			"task_claim": append(append([]string{s.keys.active(shard)}, s.queueKeys(shard, []string{"default", "gpu", "a.b-c_d"})...),
				s.keys.claimMemo(shard, "req-1")),
			"task_finish": {s.keys.active(shard), s.keys.run(shard, "4"), s.keys.run(shard, "12")},
			"task_finish_claim": append(append([]string{s.keys.active(shard)}, s.queueKeys(shard, []string{"default", "gpu"})...),
				s.keys.run(shard, "4"), s.keys.claimMemo(shard, "req-1")),
			"lease_extend": {s.keys.active(shard), s.keys.run(shard, "4")},
			"lease_sweep":  {s.keys.active(shard)},
			"run_cancel":   {s.keys.run(shard, "4")},
			"ready_wait":   s.wakeKeys(shard, []string{"default", "gpu"}),
			"run_wait":     {s.keys.done(shard, "4")},
			// keys the scripts build from the shard base
			"lua-built": {s.keys.base(shard) + "r:99", s.keys.base(shard) + "w:99", s.keys.base(shard) + "q:x:2", s.keys.base(shard) + "z:x",
				s.keys.base(shard) + "n:x", s.keys.base(shard) + "p:99:t", s.keys.base(shard) + "x:99", s.keys.base(shard) + "k:y"},
		}
		sets["node_heartbeat"] = []string{s.keys.node("n1"), s.keys.nodeHistory("n1"), s.keys.nodesLive(), s.keys.pausedQueues(),
			s.keys.control(), s.keys.nodesByCapability("gpu"), s.keys.nodesByCapability("region-eu")}
		sets["queue_pause"] = []string{s.keys.pausedQueues(), s.keys.control()}
		for name, ks := range sets {
			for _, key := range ks {
				require.Equal(t, slot(ks[0]), slot(key), "%s: %q shares the slot of %q", name, key, ks[0])
			}
		}
	}
}

func TestShardOf(t *testing.T) {
	for _, tc := range []struct {
		id     string
		shards int
		want   int
		ok     bool
	}{
		{"1", 1, 0, true}, {"7", 3, 1, true}, {"9", 3, 0, true},
		{"", 1, 0, false}, {"0", 1, 0, false}, {"01", 1, 0, false}, {"1-2", 3, 0, false},
		{"x", 1, 0, false}, {"99999999999999999999", 1, 0, false},
	} {
		got, ok := shardOf(tc.id, tc.shards)
		require.Equal(t, tc.ok, ok, "id %q", tc.id)
		if ok {
			require.Equal(t, tc.want, got, "id %q", tc.id)
		}
	}
}

// TestLuaKeyHelperMatches checks that the Lua key() helper builds the same
// strings as keys.go.
func TestLuaKeyHelperMatches(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	common, err := luaFS.ReadFile("lua/common.lua")
	require.NoError(t, err)
	probe := redis.NewScript(string(common) + `
local b = ARGV[1]
return {key(b, 'r', '42'), key(b, 'w', '42'), key(b, 'k', 'order-7'), key(b, 'q', 'default', '3'), key(b, 'z', 'default'), key(b, 'active'),
  key(b, 'n', 'default'), key(b, 'p', '42', 'load'), key(b, 'x', '42'), key(b, 'tl', '42'), key(b, 'dl'),
  key(b, 'it', 'S'), key(b, 'iw', 'report'), key(b, 'is', 'billing'), key(b, 'iu', 'billing', 'acme'), key(b, 'ia'),
  key(b, 'ie', 86400000), key(b, 'iel')}`)
	k := keys{prefix: "plait"}
	got, err := probe.Run(context.Background(), c, []string{k.active(2)}, k.base(2)).StringSlice()
	require.NoError(t, err)
	require.Equal(t, []string{k.run(2, "42"), k.done(2, "42"), k.keyIndex(2, "order-7"), k.ready(2, "default", 3), k.delayed(2, "default"), k.active(2),
		k.wake(2, "default"), k.payload(2, "42", "load"), k.deadLetters(2, "42"), k.taskLogs(2, "42"), k.deadIndex(2),
		k.statusIndex(2, "S"), k.workflowIndex(2, "report"), k.serviceIndex(2, "billing"), k.tenantIndex(2, "billing", "acme"), k.allIndex(2),
		k.expiryList(2, 86400000), k.expiryLists(2)}, got)
}

func TestKeysInjective(t *testing.T) {
	k := keys{prefix: "plait"}
	seen := map[string]string{}
	names := []string{"a", "b", "a.b", "a-b", "a_b", "r", "q", "1", "12", "active", "wake", "default"}
	add := func(desc, key string) {
		if prev, ok := seen[key]; ok {
			t.Fatalf("%s and %s both build %q", prev, desc, key)
		}
		seen[key] = desc
	}
	for shard := 0; shard < 3; shard++ {
		add("active", k.active(shard))
		add("dead index", k.deadIndex(shard))
		add("all index", k.allIndex(shard))
		add("expiry lists", k.expiryLists(shard))
		for _, ms := range []int64{1, 60000, 86400000} {
			add("expiry list "+strconv.FormatInt(ms, 10), k.expiryList(shard, ms))
		}
		for _, n := range names {
			add("wake "+n, k.wake(shard, n))
			add("dead "+n, k.deadLetters(shard, n))
			add("logs "+n, k.taskLogs(shard, n))
			for _, m := range names {
				add("payload "+n+" "+m, k.payload(shard, n, m))
			}
			add("run "+n, k.run(shard, n))
			add("done "+n, k.done(shard, n))
			add("key "+n, k.keyIndex(shard, n))
			add("memo "+n, k.claimMemo(shard, n))
			add("delayed "+n, k.delayed(shard, n))
			add("status index "+n, k.statusIndex(shard, n))
			add("workflow index "+n, k.workflowIndex(shard, n))
			add("service index "+n, k.serviceIndex(shard, n))
			for _, m := range names {
				add("tenant index "+n+" "+m, k.tenantIndex(shard, n, m))
			}
			for p := 0; p < 4; p++ {
				add("ready "+n, k.ready(shard, n, p))
			}
		}
	}
	add("seq", k.seq())
	add("nodes live", k.nodesLive())
	add("paused", k.pausedQueues())
	add("control", k.control())
	add("layout", k.layout())
	add("prefix registry", prefixRegistry)
	for _, n := range names {
		add("node "+n, k.node(n))
		add("node history "+n, k.nodeHistory(n))
		add("capability "+n, k.nodesByCapability(n))
	}
}

// FuzzKeys checks, for any two tuples of valid names, that every key has one
// hash tag naming its shard, and that different tuples build different keys.
func FuzzKeys(f *testing.F) {
	f.Add(0, "1", "default", "k", 1, "2", "default", "k")
	f.Add(3, "a", "q:1", "x", 3, "a:q", "1", "x")
	f.Add(1, "ab", "c", "d", 1, "a", "bc", "d")
	f.Fuzz(func(t *testing.T, s1 int, n1, q1, k1 string, s2 int, n2, q2, k2 string) {
		if s1 < 0 || s2 < 0 || s1 > MaxShards || s2 > MaxShards {
			return
		}
		for _, n := range []string{n1, q1, k1, n2, q2, k2} {
			if ids.Check(n) != nil {
				return
			}
		}
		k := keys{prefix: "plait"}
		a := shardKeys(k, s1, n1, q1, k1)
		b := shardKeys(k, s2, n2, q2, k2)
		for kind, key := range a {
			if strings.Count(key, "{") != 1 || strings.Count(key, "}") != 1 {
				t.Fatalf("%s key %q must hold exactly one hash tag", kind, key)
			}
			if hashTag(key) != hashTag(k.base(s1)) {
				t.Fatalf("%s key %q is not in shard %d's slot", kind, key, s1)
			}
		}
		// Every kind keeps its inputs apart, and no two kinds collide.
		all := map[string]string{}
		for kind, key := range a {
			all[key] = "a." + kind
		}
		same := map[string]bool{
			"run": s1 == s2 && n1 == n2, "done": s1 == s2 && n1 == n2, "key": s1 == s2 && k1 == k2,
			"ready0": s1 == s2 && q1 == q2, "ready3": s1 == s2 && q1 == q2, "delayed": s1 == s2 && q1 == q2,
			"active": s1 == s2, "wake": s1 == s2 && q1 == q2,
			"payload": s1 == s2 && n1 == n2 && k1 == k2, "dead": s1 == s2 && n1 == n2,
			"memo": s1 == s2 && k1 == k2,
		}
		for kind, key := range b {
			prev, ok := all[key]
			if !ok {
				continue
			}
			if prev != "a."+kind || !same[kind] {
				t.Fatalf("%s and b.%s both build %q", prev, kind, key)
			}
		}
	})
}

// TestKeyHashIsFNV1a pins the shard of a keyed run: processes of every
// version sharing a prefix must find a key on the same shard.
func TestKeyHashIsFNV1a(t *testing.T) {
	for key, want := range map[string]uint32{"": 0x811c9dc5, "a": 0xe40c292c, "foobar": 0xbf9cf968} {
		require.Equal(t, want, keyHash(key), "%q", key)
	}
}
