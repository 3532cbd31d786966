package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestBinaryThroughSentinel reads a store whose master the binary finds
// through a Sentinel (redis+sentinel://), with the master's ACL user.
func TestBinaryThroughSentinel(t *testing.T) {
	master, err := redistest.Start()
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { master.Close() })
	admin := master.Client()
	defer admin.Close()
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "ops", "on", ">s3cret", "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := redisstore.New(ctx, admin, redisstore.WithPrefix("sen")); err != nil {
		t.Fatal(err)
	}
	sentinel := startSentinel(t, master.Addr)
	bin := binary(t)
	url := "redis+sentinel://ops:s3cret@" + sentinel + "/mymaster"
	cmd := exec.Command(bin, "-redis", url, "-prefix", "sen", "runs", "ls", "-o", "json")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	var runs struct{ Items []runItem }
	if code := cmd.ProcessState.ExitCode(); code != 0 || json.Unmarshal([]byte(out.String()), &runs) != nil {
		t.Fatalf("%s: exit %d: %s %s", url, code, out.String(), errb.String())
	}
}

// startSentinel starts a redis-server in sentinel mode monitoring the
// master at addr as "mymaster", and answers its address once it knows the
// master.
func startSentinel(t *testing.T, addr string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	host, mport, _ := net.SplitHostPort(addr)
	conf := filepath.Join(dir, "sentinel.conf")
	body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor mymaster %s %s 1\nsentinel auth-user mymaster ops\nsentinel auth-pass mymaster s3cret\n",
		port, dir, host, mport)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		redistest.Skip(t, err)
	}
	cmd := exec.Command(bin, conf, "--sentinel")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sentinelAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	c := redis.NewSentinelClient(&redis.Options{Addr: sentinelAddr})
	defer c.Close()
	// The sentinel is an outside process: poll until it names the master.
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := c.GetMasterAddrByName(context.Background(), "mymaster").Result()
		if err == nil && len(got) == 2 && net.JoinHostPort(got[0], got[1]) == addr {
			return sentinelAddr
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sentinel does not know the master: %v %v", got, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
