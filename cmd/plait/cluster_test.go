package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestBinaryOnCluster reads a store on a three-master Redis Cluster,
// sharded, through each cluster form of -redis.
func TestBinaryOnCluster(t *testing.T) {
	cluster, err := redistest.StartCluster(3)
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(cluster.Close)
	bin := binary(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := cluster.Client()
	defer client.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := redisstore.New(ctx, client, redisstore.WithShards(6), redisstore.WithPrefix("c"), redisstore.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	w, err := plait.New(st, plait.WithLogger(quiet), plait.WithIdleWait(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Handle("noop", func(context.Context, *plait.Task) (any, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	for i := 0; i < 4; i++ {
		run, err := w.Submit(ctx, plait.NewWorkflow("diamond").
			Task("a", "noop", nil).
			Task("b", "noop", nil, plait.After("a")).
			Task("c", "noop", nil, plait.After("a")).
			Task("d", "noop", nil, plait.After("b", "c")))
		if err != nil {
			t.Fatal(err)
		}
		wctx, c := context.WithTimeout(ctx, 20*time.Second)
		_, err = w.RunWait(wctx, run.ID)
		c()
		if err != nil {
			t.Fatal(err)
		}
	}
	e := &binaryEnv{bin: bin}
	hosts := strings.Join(cluster.Addrs, ",")
	for _, args := range [][]string{
		{"-redis", "redis+cluster://" + hosts},
		{"-redis", "redis://" + hosts},
		{"-redis", "redis://" + cluster.Addrs[1], "-cluster"},
	} {
		out, errs, code := e.plaitWith(t, args[1], "c", append(append([]string{"-shards", "6"}, args[2:]...), "runs", "ls", "-status", "completed", "-o", "json")...)
		var runs struct{ Items []runItem }
		if code != 0 || json.Unmarshal([]byte(out), &runs) != nil || len(runs.Items) != 4 {
			t.Fatalf("%s: exit %d, %s %s", args, code, out, errs)
		}
	}
	// Another shard count than the store's: refused with the recorded one.
	if _, errs, code := e.plaitWith(t, "redis+cluster://"+hosts, "c", "runs", "ls"); code != 1 || !strings.Contains(errs, "layout") {
		t.Fatalf("without -shards: exit %d: %s", code, errs)
	}
}
