package redisstore_test

import (
	"context"
	"maps"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// pieceClasses are the payload sizes of the four ways a payload is stored:
// in its definition, in a few pieces, in the most pieces one payload is cut
// into (8: 512 B with its flag byte), and past that in its own key. pieces
// is what format version 8 writes (0: none); version 7 keeps every payload
// that leaves d: in its own key.
var pieceClasses = []struct {
	task   string
	size   int
	pieces int
	key    bool
}{
	{"short", 10, 0, false},
	{"few", 100, 2, false},
	{"longest", 511, 8, false},
	{"longer", 512, 0, true},
}

// piecesWorkflow has one root task per payload size class, each with the
// payload of that size, random so that nothing compresses it.
func piecesWorkflow() (*store.WorkflowSpec, map[string][]byte) {
	rnd := rand.New(rand.NewSource(8))
	wf := &store.WorkflowSpec{Name: "pieces"}
	want := map[string][]byte{}
	for _, c := range pieceClasses {
		p := make([]byte, c.size)
		rnd.Read(p)
		want[c.task] = p
		wf.Tasks = append(wf.Tasks, store.TaskSpec{Name: c.task, Handler: "h", Payload: p})
	}
	return wf, want
}

// TestPayloadPiecesBothVersions creates a run in format version 7 and one
// in version 8 on the same Redis and prefix, each with a payload of every
// size class, and checks where each payload is stored, then that every
// path reads it the same: RunSpecGet, TaskPayloads (the dead-letter read),
// a claim and the same claim sent again, a replay of the failed tasks,
// and that a success drops the key or pieces and a deletion leaves no key
// of the run behind. Claims from either store work on both runs.
func TestPayloadPiecesBothVersions(t *testing.T) {
	c := redistest.Private(t)
	ctx := context.Background()
	open := func(v int) *redisstore.Store {
		s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()), redisstore.WithFormatVersion(v))
		require.NoError(t, err)
		return s
	}
	stores := map[int]*redisstore.Store{7: open(redisstore.FormatVersionPrevious), 8: open(redisstore.FormatVersionNewest)}
	wf, want := piecesWorkflow()
	ids := map[int]string{}
	for _, v := range []int{7, 8} {
		res, err := stores[v].RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
		require.NoError(t, err)
		ids[v] = res.Run.ID
	}
	runKey := func(v int) string { return "plait:{0}:r:" + ids[v] }
	keyOf := func(v int, task string) string { return "plait:{0}:p:" + ids[v] + ":" + task }
	// pieces answers the payload fields of task in run v's hash.
	pieces := func(v int, task string) []string {
		var out []string
		for f := range c.HGetAll(ctx, runKey(v)).Val() {
			if strings.HasPrefix(f, "p:"+task+":") {
				out = append(out, f)
			}
		}
		return out
	}
	for _, v := range []int{7, 8} {
		require.Equal(t, "listpack", c.ObjectEncoding(ctx, runKey(v)).Val(), "version %d: the run hash stays compact", v)
		for _, pc := range pieceClasses {
			wantKey, wantPieces := pc.key, pc.pieces
			if v == 7 {
				wantKey, wantPieces = pc.size > 10, 0
			}
			require.Equal(t, wantKey, c.Exists(ctx, keyOf(v, pc.task)).Val() == 1, "version %d %s: payload key", v, pc.task)
			require.Len(t, pieces(v, pc.task), wantPieces, "version %d %s: pieces", v, pc.task)
			if wantPieces > 0 {
				require.LessOrEqual(t, len(c.HGet(ctx, runKey(v), "p:"+pc.task+":1").Val()), 64)
			}
		}
	}

	payloads := func(v int) map[string][]byte {
		t.Helper()
		names := make([]string, 0, len(pieceClasses))
		for _, pc := range pieceClasses {
			names = append(names, pc.task)
		}
		res, err := stores[v].TaskPayloads(ctx, &store.TaskPayloadsParams{RunID: ids[v], Tasks: names})
		require.NoError(t, err)
		return res.Payloads
	}
	specPayloads := func(v int) (map[string][]byte, []string) {
		t.Helper()
		res, err := stores[v].RunSpecGet(ctx, &store.RunSpecGetParams{ID: ids[v], Payloads: true})
		require.NoError(t, err)
		got := map[string][]byte{}
		for _, ts := range res.Spec.Tasks {
			got[ts.Name] = ts.Payload
		}
		return got, res.PayloadsDropped
	}
	for _, v := range []int{7, 8} {
		require.Equal(t, want, payloads(v), "version %d: TaskPayloads", v)
		got, dropped := specPayloads(v)
		require.Equal(t, want, got, "version %d: RunSpecGet", v)
		require.Empty(t, dropped)
	}

	// claim all eight tasks, half from each store; the claim sent again
	// (its reply lost) answers the same payloads.
	claim := func(s *redisstore.Store, req string, limit int) []*store.ClaimedTask {
		t.Helper()
		res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: limit, LeaseDuration: time.Minute, RequestID: req})
		require.NoError(t, err)
		return res.Tasks
	}
	var claimed []*store.ClaimedTask
	for i, v := range []int{8, 7} {
		req := "pieces-" + strconv.Itoa(i)
		got := claim(stores[v], req, 4)
		require.Len(t, got, 4)
		again := claim(stores[v], req, 4)
		require.Len(t, again, 4)
		for j := range got {
			require.Equal(t, got[j].Spec.Payload, again[j].Spec.Payload, "a claim sent again answers the same payload")
		}
		claimed = append(claimed, got...)
	}
	require.Len(t, claimed, 8)
	// few succeeds (its payload goes), the others fail.
	var outs []store.TaskOutcome
	for _, ct := range claimed {
		require.Equal(t, want[ct.Spec.Name], ct.Spec.Payload, "%s %s: claimed payload", ct.Lease.RunID, ct.Spec.Name)
		o := store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeFailed, Error: "boom"}
		if ct.Spec.Name == "few" {
			o.Outcome, o.Error = store.OutcomeSucceeded, ""
		}
		outs = append(outs, o)
	}
	fin, err := stores[8].TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: outs})
	require.NoError(t, err)
	for _, f := range fin {
		require.NoError(t, f.Err)
	}
	gone := maps.Clone(want)
	gone["few"] = nil
	for _, v := range []int{7, 8} {
		require.Zero(t, c.Exists(ctx, keyOf(v, "few")).Val(), "version %d: a succeeded task's payload key goes", v)
		require.Empty(t, pieces(v, "few"), "version %d: a succeeded task's pieces go", v)
		require.Len(t, pieces(v, "longest"), map[int]int{7: 0, 8: 8}[v], "version %d: a failed task keeps its pieces", v)
		require.Equal(t, gone, payloads(v), "version %d: TaskPayloads after the ends", v)
		got, dropped := specPayloads(v)
		require.Equal(t, gone, got, "version %d: RunSpecGet after the ends", v)
		require.Equal(t, []string{"few"}, dropped)
	}

	// a replay of the failed tasks runs them again with their payloads.
	for _, v := range []int{7, 8} {
		res, err := stores[v].RunReplay(ctx, &store.RunReplayParams{RunID: ids[v]})
		require.NoError(t, err, "version %d", v)
		require.ElementsMatch(t, []string{"short", "longest", "longer"}, res.Reset)
	}
	claimed = claim(stores[7], "", 8)
	require.Len(t, claimed, 6)
	outs = outs[:0]
	for _, ct := range claimed {
		require.Equal(t, want[ct.Spec.Name], ct.Spec.Payload, "%s %s: payload after a replay", ct.Lease.RunID, ct.Spec.Name)
		outs = append(outs, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded})
	}
	fin, err = stores[7].TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: outs})
	require.NoError(t, err)
	for _, f := range fin {
		require.NoError(t, f.Err)
	}
	for _, v := range []int{7, 8} {
		for _, pc := range pieceClasses {
			require.Zero(t, c.Exists(ctx, keyOf(v, pc.task)).Val(), "version %d %s: key gone at success", v, pc.task)
			require.Empty(t, pieces(v, pc.task), "version %d %s: pieces gone at success", v, pc.task)
		}
		require.NoError(t, stores[v].RunDelete(ctx, &store.RunDeleteParams{ID: ids[v]}))
		require.Empty(t, keysOfRun(t, c, ids[v]), "version %d: a deleted run leaves no key", v)
	}
}

// TestPayloadPiecesCancelAndDelete cancels a version 8 run whose tasks keep
// payloads in pieces and in a key: the payloads stay readable with the
// cancelled run (a replay could run them again), and its deletion takes
// every key of it, the payload key too.
func TestPayloadPiecesCancelAndDelete(t *testing.T) {
	c := redistest.Private(t)
	ctx := context.Background()
	s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()), redisstore.WithRetention(time.Hour))
	require.NoError(t, err)
	wf, want := piecesWorkflow()
	created, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
	require.NoError(t, err)
	id := created.Run.ID
	_, err = s.RunCancel(ctx, &store.RunCancelParams{ID: id, Reason: "stop"})
	require.NoError(t, err)
	names := []string{"short", "few", "longest", "longer"}
	res, err := s.TaskPayloads(ctx, &store.TaskPayloadsParams{RunID: id, Tasks: names})
	require.NoError(t, err)
	require.Equal(t, want, res.Payloads)
	require.Positive(t, c.PTTL(ctx, "plait:{0}:p:"+id+":longer").Val(), "the payload key expires with its run")
	require.NoError(t, s.RunDelete(ctx, &store.RunDeleteParams{ID: id}))
	require.Empty(t, keysOfRun(t, c, id))
}

// keysOfRun lists the keys whose name holds run id (a test may SCAN).
func keysOfRun(t *testing.T, c *redis.Client, id string) []string {
	t.Helper()
	var out []string
	iter := c.Scan(context.Background(), 0, "*"+id+"*", 1000).Iterator()
	for iter.Next(context.Background()) {
		out = append(out, iter.Val())
	}
	require.NoError(t, iter.Err())
	slices.Sort(out)
	return out
}

// TestPayloadPiecesCreateMany creates version 8 runs in one RunCreateMany
// call, then a run of 20 tasks (past the 16 whose long payloads get a key)
// and one of 300 (sent in parts, too many fields for pieces): the first
// keep their payloads in pieces or keys as one RunCreate would, the run of
// 20 in pieces while its fields leave room and in d: after, the run of 300
// in d:; every claim answers each payload whole.
func TestPayloadPiecesCreateMany(t *testing.T) {
	c := redistest.Private(t)
	ctx := context.Background()
	s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()))
	require.NoError(t, err)
	wf, want := piecesWorkflow()
	out, err := s.RunCreateMany(ctx, []*store.RunCreateParams{{Workflow: wf}, {Workflow: wf}})
	require.NoError(t, err)
	wantOf := map[string][]byte{}
	for _, o := range out {
		require.NoError(t, o.Err)
		id := o.Result.Run.ID
		require.Equal(t, "listpack", c.ObjectEncoding(ctx, "plait:{0}:r:"+id).Val())
		require.True(t, c.HExists(ctx, "plait:{0}:r:"+id, "p:longest:8").Val(), "pieces written by the create of many")
		require.Equal(t, int64(1), c.Exists(ctx, "plait:{0}:p:"+id+":longer").Val(), "a longer payload keeps its key")
		for name, p := range want {
			wantOf[id+" "+name] = p
		}
	}
	big := func(tasks int) *store.WorkflowSpec {
		w := &store.WorkflowSpec{Name: "big"}
		for i := 0; i < tasks; i++ {
			w.Tasks = append(w.Tasks, store.TaskSpec{Name: "t" + strconv.Itoa(i), Handler: "h", Payload: []byte(strings.Repeat(strconv.Itoa(i%10), 100))})
		}
		return w
	}
	var piecedRuns, inlineRuns []string
	for _, n := range []int{20, 300} {
		w := big(n)
		res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: w})
		require.NoError(t, err)
		id := res.Run.ID
		for _, ts := range w.Tasks {
			wantOf[id+" "+ts.Name] = ts.Payload
		}
		if n == 20 {
			piecedRuns = append(piecedRuns, id)
		} else {
			inlineRuns = append(inlineRuns, id)
		}
	}
	h := c.HGetAll(ctx, "plait:{0}:r:"+piecedRuns[0]).Val()
	require.Contains(t, h, "p:t0:2", "a run of 20 tasks has room for pieces")
	require.Contains(t, h, "p:t14:2", "a run of 20 tasks has room for pieces")
	require.NotContains(t, h, "p:t15:1", "past the run's room a payload stays in d:")
	require.LessOrEqual(t, len(h), 96, "the fields at create stay within pieceFieldsMax")
	require.Empty(t, keysOfRun(t, c, piecedRuns[0])[1:], "no payload key: only the run hash")
	for f := range c.HGetAll(ctx, "plait:{0}:r:"+inlineRuns[0]).Val() {
		require.False(t, strings.HasPrefix(f, "p:"), "a run sent in parts keeps its payloads in d:")
	}
	claimed := 0
	for {
		res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 64, LeaseDuration: time.Minute})
		require.NoError(t, err)
		if len(res.Tasks) == 0 {
			break
		}
		for _, ct := range res.Tasks {
			require.Equal(t, wantOf[ct.Lease.RunID+" "+ct.Spec.Name], ct.Spec.Payload, "%s %s", ct.Lease.RunID, ct.Spec.Name)
			claimed++
		}
	}
	require.Equal(t, len(wantOf), claimed)
}

// TestPayloadPiecesLeaseSweep: a task with its payload in pieces whose
// lease expires (its worker crashed) goes back to ready with its pieces
// kept, and the next claim answers the payload whole; its success then
// drops them.
func TestPayloadPiecesLeaseSweep(t *testing.T) {
	c := redistest.Private(t)
	ctx := context.Background()
	clk := fakeclock.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()), redisstore.WithClock(clk))
	require.NoError(t, err)
	wf, want := piecesWorkflow()
	created, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
	require.NoError(t, err)
	rk := "plait:{0}:r:" + created.Run.ID
	first, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w1", Limit: 8, LeaseDuration: time.Second})
	require.NoError(t, err)
	require.Len(t, first.Tasks, 4)
	clk.Advance(2 * time.Second)
	swept, err := s.LeaseSweep(ctx, &store.LeaseSweepParams{Limit: 100, CrashLimit: 3})
	require.NoError(t, err)
	require.Len(t, swept.Requeued, 4)
	require.True(t, c.HExists(ctx, rk, "p:longest:8").Val(), "a requeued task keeps its pieces")
	again, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w2", Limit: 8, LeaseDuration: time.Minute})
	require.NoError(t, err)
	require.Len(t, again.Tasks, 4)
	var outs []store.TaskOutcome
	for _, ct := range again.Tasks {
		require.Equal(t, want[ct.Spec.Name], ct.Spec.Payload, ct.Spec.Name)
		outs = append(outs, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded})
	}
	fin, err := s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w2", Outcomes: outs})
	require.NoError(t, err)
	for _, f := range fin {
		require.NoError(t, f.Err)
	}
	for f := range c.HGetAll(ctx, rk).Val() {
		require.False(t, strings.HasPrefix(f, "p:"), "%s: pieces go with their task's success", f)
	}
}

// TestPayloadPiecesHistoryCopy: the copy of a run's attempt records kept
// past it (WithHistoryRetention) takes none of its payload pieces, which
// a failed task keeps in the run hash.
func TestPayloadPiecesHistoryCopy(t *testing.T) {
	c := redistest.Private(t)
	ctx := context.Background()
	s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()),
		redisstore.WithRetention(time.Hour), redisstore.WithHistoryRetention(2*time.Hour))
	require.NoError(t, err)
	wf, _ := piecesWorkflow()
	created, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: wf})
	require.NoError(t, err)
	got, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Limit: 8, LeaseDuration: time.Minute})
	require.NoError(t, err)
	var outs []store.TaskOutcome
	for _, ct := range got.Tasks {
		outs = append(outs, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeFailed, Error: "boom"})
	}
	_, err = s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: outs})
	require.NoError(t, err)
	require.True(t, c.HExists(ctx, "plait:{0}:r:"+created.Run.ID, "p:few:2").Val(), "the failed task keeps its pieces")
	h := c.HGetAll(ctx, "plait:{0}:h:"+created.Run.ID).Val()
	require.NotEmpty(t, h, "the run's records were copied")
	for f := range h {
		require.False(t, strings.HasPrefix(f, "p:"), "%s: no piece in the history copy", f)
	}
}
