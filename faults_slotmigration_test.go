package plait_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store/redisstore"
)

// errKinds counts the error replies a go-redis client met, by kind: the
// first word of a Redis error (MOVED, ASK, TRYAGAIN...), or "net" for a
// failed connection. Added to the client of each node of a cluster client
// it sees every redirection; added to the cluster client (or a failover
// client) it sees what reached the store, after go-redis's own retries.
type errKinds struct {
	mu sync.Mutex
	n  map[string]int
	// example holds the first error of each kind, for a failure's message.
	example map[string]string
}

func newErrKinds() *errKinds { return &errKinds{n: map[string]int{}, example: map[string]string{}} }

func (k *errKinds) add(err error) {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) {
		return
	}
	kind := "other"
	var re redis.Error
	var ne net.Error
	switch {
	case errors.As(err, &re):
		kind, _, _ = strings.Cut(re.Error(), " ")
		if strings.Contains(re.Error(), "non local key") {
			kind = "ERR non local key"
		}
	case errors.As(err, &ne), errors.Is(err, io.EOF):
		kind = "net"
	case errors.Is(err, context.DeadlineExceeded):
		kind = "deadline"
	}
	k.mu.Lock()
	k.n[kind]++
	if _, ok := k.example[kind]; !ok {
		k.example[kind] = err.Error()
	}
	k.mu.Unlock()
}

// examples lists the first error of each kind.
func (k *errKinds) examples() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var parts []string
	for kind, e := range k.example {
		parts = append(parts, kind+": "+e)
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

func (k *errKinds) get(kind string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n[kind]
}

// String lists the kinds in a stable order: "ASK=3 MOVED=12".
func (k *errKinds) String() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.n) == 0 {
		return "none"
	}
	var parts []string
	for kind, n := range k.n {
		parts = append(parts, kind+"="+strconv.Itoa(n))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func (k *errKinds) DialHook(next redis.DialHook) redis.DialHook { return next }

func (k *errKinds) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		// Not counted: go-redis's handshake, which older servers refuse
		// in part, and New's FUNCTION LOAD of a library already loaded.
		if name := cmd.Name(); name != "client" && name != "function" {
			k.add(err)
		}
		return err
	}
}

func (k *errKinds) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if c.Name() != "client" {
				k.add(c.Err())
			}
		}
		return err
	}
}

// attemptCounter counts the handler calls of each task of each run.
type attemptCounter struct {
	mu    sync.Mutex
	calls map[string]int
	total atomic.Int64
	// progress receives a token (dropped when one is waiting) at each call.
	progress chan struct{}
	// work is how long each call works before it returns.
	work time.Duration
}

func newAttemptCounter() *attemptCounter {
	return &attemptCounter{calls: map[string]int{}, progress: make(chan struct{}, 1)}
}

func (a *attemptCounter) handler(ctx context.Context, task *plait.Task) (any, error) {
	a.mu.Lock()
	a.calls[task.RunID+"/"+task.Name]++
	a.mu.Unlock()
	a.total.Add(1)
	select {
	case a.progress <- struct{}{}:
	default:
	}
	if a.work > 0 {
		time.Sleep(a.work) // the handler's work, not a wait on a condition
	}
	return nil, nil
}

// check answers, over the runs given, how many tasks never ran and how
// many ran more than once.
func (a *attemptCounter) check(runIDs []string, tasks []string) (never, twice int, example string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, id := range runIDs {
		for _, name := range tasks {
			switch n := a.calls[id+"/"+name]; {
			case n == 0:
				never++
				example = fmt.Sprintf("%s/%s never ran", id, name)
			case n > 1:
				twice++
				example = fmt.Sprintf("%s/%s ran %d times", id, name, n)
			}
		}
	}
	return never, twice, example
}

// TestSlotMigrationUnderLoad moves every slot holding runs (the slot of
// each shard's hash tag, and the id sequence's) to another master of a
// three-master Cluster, keys ten at a time as redis-cli --cluster reshard
// does, while four worker schedulers drain two-task runs and a submitter
// keeps adding runs. Between two batches of keys the migration waits for
// a handler call (or 20 ms while the split slot holds the load up), so the
// load runs all along it. Every run must complete, each task having run
// exactly once; the redirections and refusals go-redis met, those that
// reached the store and the submits sent again are counted by kind.
// It fails if the store took a TRYAGAIN or an ASK go-redis gave up on for
// a refusal of what the call carries (removing them from serverState in
// store/redisstore/scripts.go: the engine then records a failure in place
// of the outcome, and runs end failed). A script stopped half-way on a
// split slot is what TestClusterSplitSlotRefusesScriptsWhole
// (store/redisstore) pins down: under this load the claim memory key
// each finish-and-claim declares happens to keep those calls off a split
// slot too.
func TestSlotMigrationUnderLoad(t *testing.T) {
	cluster, err := redistest.StartCluster(3)
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(cluster.Close)
	ctx := context.Background()
	const shards, workers, preload = 4, 4, 2000
	prefix := "mig"
	opts := []redisstore.Option{redisstore.WithShards(shards), redisstore.WithPrefix(prefix), redisstore.WithLogger(quietSlog())}
	nodeErrs, storeErrs := newErrKinds(), newErrKinds()
	newStore := func() *redisstore.Store {
		c := cluster.Client()
		c.OnNewNode(func(n *redis.Client) { n.AddHook(nodeErrs) })
		c.AddHook(storeErrs)
		t.Cleanup(func() { _ = c.Close() })
		s, err := redisstore.New(ctx, c, opts...)
		require.NoError(t, err)
		return s
	}

	tasks := []string{"a", "b"}
	// a and b on queues of their own, served by different workers: the
	// finish of a pushes b on a ready list the call does not declare.
	wf := plait.NewWorkflow("moved").
		Task("a", "step", nil, plait.Retry(0), plait.OnQueue("first")).
		Task("b", "step", nil, plait.After("a"), plait.Retry(0), plait.OnQueue("second"))
	submitter, err := plait.New(newStore(), plait.WithRemoteHandlers())
	require.NoError(t, err)
	var runIDs []string
	subs := make([]plait.Submission, 0, 100)
	for i := 0; i < preload; i += 100 {
		subs = subs[:0]
		for j := i; j < i+100; j++ {
			subs = append(subs, plait.Submission{Workflow: wf, Options: []plait.SubmitOption{plait.WithRunKey("k" + strconv.Itoa(j))}})
		}
		runs, err := submitter.SubmitMany(ctx, subs)
		require.NoError(t, err)
		for _, r := range runs {
			runIDs = append(runIDs, r.ID)
		}
	}

	counter, logs := newAttemptCounter(), newLogTally()
	var ws []*worker
	for i := 0; i < workers; i++ {
		queue := []string{"first", "second"}[i%2]
		w := newWorker(t, newStore(), "w"+strconv.Itoa(i), plait.WithConcurrency(8), plait.WithLogger(logs.logger()),
			plait.WithQueues(queue))
		ws = append(ws, w)
		require.NoError(t, w.s.Handle("step", counter.handler))
		w.start(t)
	}

	// The submitter adds keyed runs at a steady rate while the slots
	// move. A create whose slot is split is refused with TRYAGAIN (it
	// writes keys the source no longer, or the target not yet, has) until
	// the slot is moved; its key is sent again later, so it makes one run
	// at most, and the next tick goes on with a new key (most likely of
	// another shard).
	migrated := make(chan struct{})
	submitErrs := newErrKinds()
	var submitted sync.WaitGroup
	var late []string
	submitted.Add(1)
	go func() {
		defer submitted.Done()
		var again []string
		submit := func(key string) {
			run, err := submitter.Submit(ctx, wf, plait.WithRunKey(key))
			if err != nil {
				submitErrs.add(err)
				again = append(again, key)
				return
			}
			late = append(late, run.ID)
		}
		tick := time.NewTicker(4 * time.Millisecond) // the load's rate: 250 runs a second
		defer tick.Stop()
		for i := preload; ; i++ {
			select {
			case <-migrated:
				for try := 0; len(again) > 0; try++ {
					if try == 100 {
						t.Errorf("%d submits still refused after the migration, last key %s", len(again), again[0])
						return
					}
					keys := again
					again = nil
					for _, k := range keys {
						submit(k)
					}
					<-tick.C
				}
				return
			case <-tick.C:
			}
			if len(again) > 0 && i%2 == 0 {
				k := again[0]
				again = again[1:]
				submit(k)
			} else {
				submit("k" + strconv.Itoa(i))
			}
		}
	}()

	slots := map[int]bool{}
	for s := 0; s < shards; s++ {
		slot, err := cluster.SlotOf(ctx, prefix+":{"+strconv.Itoa(s)+"}:r:x")
		require.NoError(t, err)
		slots[slot] = true
	}
	seqSlot, err := cluster.SlotOf(ctx, prefix+":{seq}")
	require.NoError(t, err)
	slots[seqSlot] = true
	// Between two batches the migration waits for a handler call, or
	// 20 ms when the load is held up (while a slot is split, the claims
	// of its shard are refused with TRYAGAIN): it moves a slot about as
	// fast as redis-cli's reshard paced to let the load run beside it.
	between := func(int) {
		select {
		case <-counter.progress:
		case <-time.After(20 * time.Millisecond):
		}
	}
	began := time.Now()
	keysMoved := 0
	for slot := range slots {
		from, err := cluster.SlotOwner(ctx, slot)
		require.NoError(t, err)
		n := migrateSlot(t, cluster, slot, (from+1)%3, between)
		keysMoved += n
		t.Logf("slot %d moved from node %d: %d keys, %d handler calls so far", slot, from, n, counter.total.Load())
	}
	took := time.Since(began)
	close(migrated)
	submitted.Wait()
	runIDs = append(runIDs, late...)

	// Every run is waited for through the store (RunWait ends on the
	// message its end publishes), one after another under one deadline.
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	notCompleted := 0
	for _, id := range runIDs {
		run, err := submitter.RunWait(wctx, id)
		require.NoError(t, err, "run %s did not finish; %d handler calls", id, counter.total.Load())
		if run.Status != plait.RunCompleted {
			notCompleted++
			var states []string
			for _, ti := range run.Tasks {
				states = append(states, fmt.Sprintf("%s:%s attempts=%d crashes=%d", ti.Name, ti.Status, len(ti.Attempts), ti.Crashes))
			}
			t.Logf("run %s is %s: %v", id, run.Status, states)
		}
	}
	never, twice, example := counter.check(runIDs, tasks)
	t.Logf("FIGURE slotmigration: %d runs (%d submitted during the migration), %d slots moved (%d keys, %s), "+
		"redirections and refusals met by go-redis: %s; errors reaching the store: %s; submits sent again: %s; "+
		"runs lost %d (tasks never run %d), tasks run twice %d",
		len(runIDs), len(late), len(slots), keysMoved, took.Round(time.Millisecond),
		nodeErrs, storeErrs, submitErrs, notCompleted, never, twice)
	t.Logf("first error of each kind: %s", nodeErrs.examples())
	lost := 0
	for _, w := range ws {
		lost += w.events.count(is(plait.EventTaskLeaseLost, ""))
	}
	t.Logf("leases lost: %d; the schedulers logged: %s", lost, logs)
	require.Zero(t, notCompleted, "runs not completed")
	require.Zero(t, never+twice, "every task runs exactly once: %s", example)
	require.Positive(t, nodeErrs.get("ASK")+nodeErrs.get("TRYAGAIN"), "the migration must have been met mid-way")
	require.Positive(t, nodeErrs.get("MOVED"), "the moved slots must have been found moved")
}

// migrateSlot moves slot to node to, ten keys at a time, calling between
// after each batch, and answers how many keys it moved. The ready and wake
// lists of queue "second" go first: the keys a finish of task a reaches
// without declaring them (its child's queue), which the workers of
// "first" do not claim from; redis-cli moves keys in whatever order the
// slot lists them, this being the worst it could pick.
func migrateSlot(t *testing.T, cluster *redistest.Cluster, slot, to int, between func(int)) int {
	t.Helper()
	ctx := context.Background()
	move, err := cluster.SlotMoveBegin(ctx, slot, to)
	require.NoError(t, err)
	keys, err := move.KeysLeft(ctx, 100000)
	require.NoError(t, err)
	var lists []string
	for _, k := range keys {
		if strings.Contains(k, "}:q:second:") || strings.HasSuffix(k, "}:n:second") {
			lists = append(lists, k)
		}
	}
	t.Logf("slot %d: moving %v first", slot, lists)
	moved := len(lists)
	if len(lists) > 0 {
		require.NoError(t, move.Keys(ctx, lists...))
		between(moved)
	}
	for {
		n, err := move.Next(ctx, 10)
		require.NoError(t, err)
		if n == 0 {
			break
		}
		moved += n
		between(moved)
	}
	require.NoError(t, move.End(ctx))
	return moved
}

func quietSlog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// logTally is a slog handler that counts the warnings and errors a
// scheduler logs, by message, keeping the first record of each.
type logTally struct {
	mu    sync.Mutex
	n     map[string]int
	first map[string]string
}

func newLogTally() *logTally { return &logTally{n: map[string]int{}, first: map[string]string{}} }

func (l *logTally) logger() *slog.Logger { return slog.New(l) }

func (l *logTally) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelWarn }

func (l *logTally) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n[r.Message]++
	if _, ok := l.first[r.Message]; !ok {
		l.first[r.Message] = b.String()
	}
	return nil
}

func (l *logTally) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logTally) WithGroup(string) slog.Handler      { return l }

// String lists each message with its count and its first record's
// attributes.
func (l *logTally) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.n) == 0 {
		return "none"
	}
	var parts []string
	for m, n := range l.n {
		parts = append(parts, fmt.Sprintf("%q x%d (first:%s)", m, n, l.first[m]))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}
