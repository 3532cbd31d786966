package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/plaitdag/plait"
)

// noStore is an Opener for the commands that must not reach the store.
func noStore(t *testing.T) Opener {
	return func(context.Context, Conn) (*plait.Scheduler, error) {
		t.Error("the store was opened")
		return nil, context.Canceled
	}
}

func TestHelpListsEveryCommand(t *testing.T) {
	var out, errb syncBuffer
	if code := Main(context.Background(), []string{"--help"}, &out, &errb, noStore(t)); code != ExitOK {
		t.Fatalf("--help: exit %d", code)
	}
	for _, c := range commands() {
		if !strings.Contains(out.String(), "  "+c.path+" ") {
			t.Errorf("--help does not list %q:\n%s", c.path, out.String())
		}
	}
	for _, want := range []string{"-redis", "-prefix", "-o ", "Exit codes"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help does not say %q", want)
		}
	}
}

func TestGroupNamesItsCommands(t *testing.T) {
	var out, errb syncBuffer
	if code := Main(context.Background(), []string{"dlq", "frobnicate"}, &out, &errb, noStore(t)); code != ExitUsage ||
		!strings.Contains(errb.String(), "plait dlq: want one of: ls, groups, show, replay, purge") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}

func TestCommandHelp(t *testing.T) {
	for _, c := range commands() {
		var out, errb syncBuffer
		args := append(strings.Fields(c.path), "-h")
		if code := Main(context.Background(), args, &out, &errb, noStore(t)); code != ExitOK {
			t.Errorf("%s -h: exit %d: %s", c.path, code, errb.String())
		}
		if !strings.Contains(out.String(), "Usage: plait "+c.path) {
			t.Errorf("%s -h: %s", c.path, out.String())
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"nope"},
		{"runs"},
		{"runs", "frobnicate"},
		{"runs", "ls", "-bogus"},
		{"runs", "ls", "-o", "yaml"},
		{"runs", "ls", "-limit", "0"},
		{"runs", "ls", "-status", "sleeping"},
		{"runs", "ls", "-created-from", "yesterday"},
		{"runs", "show"},
		{"runs", "cancel"},
		{"runs", "cancel", "r1", "-status", "running"},
		{"runs", "delete", "-status", "completed", "-yes"}, // a query needs a reason
		{"runs", "cancel", "r1", "-rps", "5000"},
		{"tasks", "skip", "r1"},
		{"dlq", "replay", "not-a-ref"},
		{"dlq", "show", "r1"},
		{"queues", "pause"},
		{"schedules", "backfill", "s1"},
		{"export"},
		{"export", "-from", "24h", "-by", "started"},
		{"serve", "-addr", "no-port"},
		{"serve", "-actions", "queue.pause"},
	} {
		var out, errb syncBuffer
		if code := Main(context.Background(), args, &out, &errb, noStore(t)); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d; stderr: %s", args, code, ExitUsage, errb.String())
		}
		if errb.String() == "" {
			t.Errorf("%q: nothing on stderr", args)
		}
	}
}

func TestRedisClientForms(t *testing.T) {
	for _, c := range []struct {
		url     string
		cluster bool
		kind    string
		addrs   string
	}{
		{url: "redis://127.0.0.1:6390/2", kind: "*redis.Client", addrs: "127.0.0.1:6390"},
		{url: "rediss://alice:secret@cache.example:6380", kind: "*redis.Client", addrs: "cache.example:6380"},
		{url: "redis://a:7000,b:7001", kind: "*redis.ClusterClient", addrs: "a:7000,b:7001"},
		{url: "redis://a:7000", cluster: true, kind: "*redis.ClusterClient", addrs: "a:7000"},
		{url: "redis+cluster://alice:pw@a:7000,b", kind: "*redis.ClusterClient", addrs: "a:7000,b:6379"},
		{url: "redis+sentinel://s1:26379,s2:26379/mymaster/1", kind: "*redis.Client", addrs: "FailoverClient"},
	} {
		cl, err := RedisClient(Conn{Redis: c.url, Cluster: c.cluster})
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		got := typeName(cl)
		if got != c.kind {
			t.Errorf("%s: a %s, want %s", c.url, got, c.kind)
		}
		if addrs := addrsOf(cl); c.addrs != "FailoverClient" && addrs != c.addrs {
			t.Errorf("%s: addresses %s, want %s", c.url, addrs, c.addrs)
		}
		cl.Close()
	}
	for _, bad := range []string{"http://x", "redis+sentinel://s1:26379", "redis://x/notadb", "redis+cluster://a/1", "redis://a,,b"} {
		if cl, err := RedisClient(Conn{Redis: bad}); err == nil {
			cl.Close()
			t.Errorf("%s: no error", bad)
		}
	}
}
