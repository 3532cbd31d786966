package redisstore

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
)

// The letters of the store's records and the plait status each stands for,
// written out here rather than taken from scripts.go, so that the tests
// below compare the rendered Lua tables with plait's table and not with a
// copy of the rendering.
var (
	testTaskLetters = map[string]store.TaskStatus{
		"P": store.TaskPending, "W": store.TaskPending, "R": store.TaskReady,
		"U": store.TaskRunning, "Y": store.TaskRetrying, "S": store.TaskSucceeded,
		"F": store.TaskFailed, "K": store.TaskSkipped, "C": store.TaskCancelled,
		"D": store.TaskDead,
	}
	testRunLetters = map[string]store.RunStatus{
		"P": store.RunPending, "U": store.RunRunning, "S": store.RunCompleted,
		"F": store.RunFailed, "C": store.RunCancelled,
	}
)

func sortedLetters[S any](m map[string]S) []string {
	out := make([]string, 0, len(m))
	for l := range m {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// taskAllowed is plait's task table in letters: the status may change as
// plait allows, and a record may move between the two letters of pending
// (P waits for its parents, W for its run-at time), which is no status
// change. "" is a record being created.
func taskAllowed(from, to string) bool {
	fs := testTaskLetters[from]
	ts := testTaskLetters[to]
	if from != "" && fs == ts {
		return from != to
	}
	return fs.CanBecome(ts)
}

func runAllowed(from, to string) bool {
	return testRunLetters[from].CanBecome(testRunLetters[to])
}

// taskReplayAllowed is plait's replay table for tasks in letters: a
// replayed task goes back to P, pending for its parents, whatever its
// run-at time (the replay makes it due afterwards as a create would).
func taskReplayAllowed(from, to string) bool {
	return to == "P" && from != "" && slices.Contains(testTaskLetters[from].ReplayNext(), testTaskLetters[to])
}

func runReplayAllowed(from, to string) bool {
	return from != "" && slices.Contains(testRunLetters[from].ReplayNext(), testRunLetters[to])
}

// luaServers runs f against a real redis-server and against miniredis,
// each with its own empty database.
func luaServers(t *testing.T, f func(t *testing.T, c *redis.Client)) {
	t.Run("redis-server", func(t *testing.T) {
		srv, err := redistest.Start()
		if err != nil {
			redistest.Skip(t, err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		c := srv.Client()
		t.Cleanup(func() { _ = c.Close() })
		f(t, c)
	})
	t.Run("miniredis", func(t *testing.T) {
		m := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { _ = c.Close() })
		f(t, c)
	})
}

// snapshot is every key of the database with its value.
func snapshot(t *testing.T, c *redis.Client) map[string]any {
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	out := map[string]any{}
	for _, k := range keys {
		typ, err := c.Type(ctx, k).Result()
		require.NoError(t, err)
		switch typ {
		case "hash":
			out[k], err = c.HGetAll(ctx, k).Result()
		case "string":
			out[k], err = c.Get(ctx, k).Result()
		default:
			t.Fatalf("key %s of type %s", k, typ)
		}
		require.NoError(t, err)
	}
	return out
}

// TestStatusTableMatchesPlait checks that the Lua tables task_to and
// run_to check, as rendered and as Lua reads them, are plait's status
// machine: every (from, to) pair of letters, the terminal letters, and the
// reply code of a refused move.
func TestStatusTableMatchesPlait(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	probe := redis.NewScript(codesTable() + statusTable() + `
local out = {}
local function list(kind, moves, final)
  for from, tos in pairs(moves) do
    for to in pairs(tos) do out[#out + 1] = kind .. ' ' .. from .. '>' .. to end
  end
  for l in pairs(final) do out[#out + 1] = kind .. ' final ' .. l end
end
list('task', task_moves, task_final)
list('run', run_moves, run_final)
for from, tos in pairs(task_replay) do
  for to in pairs(tos) do out[#out + 1] = 'task replay ' .. from .. '>' .. to end
end
for from, tos in pairs(run_replay) do
  for to in pairs(tos) do out[#out + 1] = 'run replay ' .. from .. '>' .. to end
end
out[#out + 1] = 'code ' .. ILLEGAL
return out`)
	got, err := probe.Run(context.Background(), c, nil).StringSlice()
	require.NoError(t, err)
	sort.Strings(got)

	var want []string
	for _, from := range append([]string{""}, sortedLetters(testTaskLetters)...) {
		for _, to := range sortedLetters(testTaskLetters) {
			if taskAllowed(from, to) {
				want = append(want, "task "+from+">"+to)
			}
		}
	}
	for _, l := range sortedLetters(testTaskLetters) {
		if len(testTaskLetters[l].Next()) == 0 {
			want = append(want, "task final "+l)
		}
	}
	for _, from := range append([]string{""}, sortedLetters(testRunLetters)...) {
		for _, to := range sortedLetters(testRunLetters) {
			if runAllowed(from, to) {
				want = append(want, "run "+from+">"+to)
			}
		}
	}
	for _, l := range sortedLetters(testRunLetters) {
		if len(testRunLetters[l].Next()) == 0 {
			want = append(want, "run final "+l)
		}
	}
	for _, from := range sortedLetters(testTaskLetters) {
		for _, to := range sortedLetters(testTaskLetters) {
			if taskReplayAllowed(from, to) {
				want = append(want, "task replay "+from+">"+to)
			}
		}
	}
	for _, from := range sortedLetters(testRunLetters) {
		for _, to := range sortedLetters(testRunLetters) {
			if runReplayAllowed(from, to) {
				want = append(want, "run replay "+from+">"+to)
			}
		}
	}
	want = append(want, fmt.Sprintf("code %d", codeIllegal))
	sort.Strings(want)
	require.Equal(t, want, got)

	// every plait status has a letter, and the Go side maps the code to
	// plait's sentinel.
	seen := map[store.TaskStatus]bool{}
	for _, s := range testTaskLetters {
		seen[s] = true
	}
	for _, s := range store.TaskStatuses() {
		require.True(t, seen[s], "task status %s has no letter", s)
	}
	seenRun := map[store.RunStatus]bool{}
	for _, s := range testRunLetters {
		seenRun[s] = true
	}
	for _, s := range store.RunStatuses() {
		require.True(t, seenRun[s], "run status %s has no letter", s)
	}
	require.ErrorIs(t, codeErr(codeIllegal), store.ErrIllegalTransition)
}

// moveScript calls task_to or run_to on the hand-written records of run
// "1" and flushes the call's buffers either way, so that a refused move
// that had changed anything would show in the database.
//
// KEYS[1] the run hash; ARGV: shard base, record ("task" or "run"), task
// name, target letter, "replay" to make the move inside a replay. Returns {0} or {ILLEGAL, 1 when ctx.refused}.
var moveScript = redis.NewScript(libSource() + `
local rk = KEYS[1]
local ctx = new_ctx(ARGV[1], '2000;100;1000', 0)
local r = meta_get(rk)
if not r then
  r = {st = '', total = 3, succ = 0, failed = 0, skipped = 0, cancelled = 0, created = 1000,
    strat = 'c'}
end
ctx.replay = ARGV[5] == 'replay'
local ok
if ARGV[2] == 'task' then
  local t = state_get(rk, ARGV[3])
  if not t then
    t = {st = '', attempt = 0, epoch = 0, crashes = 0, resolved = 0, satisfied = 0, worker = ''}
  end
  ok = task_to(ctx, rk, '1', r, ARGV[3], t, ARGV[4])
  if ok then meta_put(rk, r) end
else
  ok = run_to(ctx, rk, '1', r, ARGV[4])
end
flush()
if not ok then
  local refused = 0
  if ctx.refused then refused = 1 end
  return {ILLEGAL, refused}
end
return {0}
`)

const (
	testBase  = "t:{0}:"
	testRun   = testBase + "r:1"
	testApart = testBase + "p:1:a"
)

// seed writes a run in status run (none when "") holding task a in status
// task (absent when ""), whose payload is kept in its own key.
func seed(t *testing.T, c *redis.Client, run, task string) {
	ctx := context.Background()
	require.NoError(t, c.FlushDB(ctx).Err())
	fields := []any{"d:a", "default,1,0,0,0,0,1\nspec", "o", "a"}
	if run != "" {
		fields = append(fields, "m", run+",3,1,0,0,0,1000,5,,c")
	}
	if task != "" {
		fields = append(fields, "s:a", task+",1,2,0,0,0,10,20,,w")
	}
	require.NoError(t, c.HSet(ctx, testRun, fields...).Err())
	require.NoError(t, c.Set(ctx, testApart, "payload", 0).Err())
}

func move(t *testing.T, c *redis.Client, record, to string) []any {
	return moveIn(t, c, record, to, "")
}

func moveIn(t *testing.T, c *redis.Client, record, to, mode string) []any {
	v, err := moveScript.Run(context.Background(), c, []string{testRun}, testBase, record, "a", to, mode).Slice()
	require.NoError(t, err)
	return v
}

// TestTaskTransitions moves a task between every pair of letters: a move
// plait's table does not allow is refused with codeIllegal and leaves the
// database as it was; every allowed move is made, with its offsets and
// counts.
func TestTaskTransitions(t *testing.T) {
	luaServers(t, func(t *testing.T, c *redis.Client) {
		ctx := context.Background()
		for _, from := range append([]string{""}, sortedLetters(testTaskLetters)...) {
			for _, to := range sortedLetters(testTaskLetters) {
				seed(t, c, "U", from)
				before := snapshot(t, c)
				got := move(t, c, "task", to)
				name := fmt.Sprintf("%q -> %s", from, to)
				if !taskAllowed(from, to) {
					require.Equal(t, []any{int64(codeIllegal), int64(1)}, got, name)
					require.Equal(t, before, snapshot(t, c), "%s: a refused move changed the database", name)
					continue
				}
				require.Equal(t, []any{int64(0)}, got, name)
				h, err := c.HGetAll(ctx, testRun).Result()
				require.NoError(t, err)
				st := strings.Split(h["s:a"], ",")
				require.Equal(t, to, st[0], name)
				final := len(testTaskLetters[to].Next()) == 0
				switch {
				case to == "U":
					require.Equal(t, "1000", st[7], "%s: claim offset", name)
				case final:
					require.Equal(t, "1000", st[8], "%s: end offset", name)
					// A succeeded task's payload goes; one that ended
					// otherwise stays for inspection and a replay.
					require.Equal(t, map[bool]int64{true: 0, false: 1}[to == "S"], c.Exists(ctx, testApart).Val(), "%s: payload", name)
					counts := strings.Split(h["m"], ",")[2:6]
					require.NotEqual(t, []string{"1", "0", "0", "0"}, counts, "%s: end not counted", name)
				default:
					require.Equal(t, before[testRun].(map[string]string)["m"], h["m"], "%s: run changed", name)
				}
			}
		}
	})
}

// TestRunTransitions is TestTaskTransitions for runs.
func TestRunTransitions(t *testing.T) {
	luaServers(t, func(t *testing.T, c *redis.Client) {
		ctx := context.Background()
		for _, from := range append([]string{""}, sortedLetters(testRunLetters)...) {
			for _, to := range sortedLetters(testRunLetters) {
				seed(t, c, from, "")
				before := snapshot(t, c)
				got := move(t, c, "run", to)
				name := fmt.Sprintf("%q -> %s", from, to)
				if !runAllowed(from, to) {
					require.Equal(t, []any{int64(codeIllegal), int64(1)}, got, name)
					require.Equal(t, before, snapshot(t, c), "%s: a refused move changed the database", name)
					continue
				}
				require.Equal(t, []any{int64(0)}, got, name)
				m := strings.Split(c.HGet(ctx, testRun, "m").Val(), ",")
				require.Equal(t, to, m[0], name)
				switch {
				case to == "U":
					require.Equal(t, "1000", m[7], "%s: start offset", name)
				case len(testRunLetters[to].Next()) == 0:
					require.Equal(t, "1000", m[8], "%s: end offset", name)
				}
			}
		}
	})
}

// TestTaskReplayTransitions moves a task between every pair of letters
// inside a replay: the moves of plait's table and of its replay table are
// made, every other move is refused and changes nothing. A replay move
// takes the task's end off the run's counters and clears its offsets.
func TestTaskReplayTransitions(t *testing.T) {
	luaServers(t, func(t *testing.T, c *redis.Client) {
		ctx := context.Background()
		for _, from := range append([]string{""}, sortedLetters(testTaskLetters)...) {
			for _, to := range sortedLetters(testTaskLetters) {
				seed(t, c, "U", from)
				before := snapshot(t, c)
				got := moveIn(t, c, "task", to, "replay")
				name := fmt.Sprintf("replay %q -> %s", from, to)
				if !taskAllowed(from, to) && !taskReplayAllowed(from, to) {
					require.Equal(t, []any{int64(codeIllegal), int64(1)}, got, name)
					require.Equal(t, before, snapshot(t, c), "%s: a refused move changed the database", name)
					continue
				}
				require.Equal(t, []any{int64(0)}, got, name)
				if taskAllowed(from, to) {
					continue // TestTaskTransitions checks these moves
				}
				h, err := c.HGetAll(ctx, testRun).Result()
				require.NoError(t, err)
				require.Equal(t, "P,1,2,0,0,0,,,,w", h["s:a"], "%s: offsets kept", name)
				// The seeded run counts one success and nothing else.
				want := map[string][]string{
					"S": {"0", "0", "0", "0"}, "F": {"1", "-1", "0", "0"}, "D": {"1", "-1", "0", "0"},
					"K": {"1", "0", "-1", "0"}, "C": {"1", "0", "0", "-1"},
				}[from]
				require.Equal(t, want, strings.Split(h["m"], ",")[2:6], "%s: counters", name)
			}
		}
	})
}

// TestRunReplayTransitions is TestTaskReplayTransitions for runs: a replay
// move takes a finished run back to running, out of its finished status
// index into it:U, with its end cleared.
func TestRunReplayTransitions(t *testing.T) {
	luaServers(t, func(t *testing.T, c *redis.Client) {
		ctx := context.Background()
		for _, from := range append([]string{""}, sortedLetters(testRunLetters)...) {
			for _, to := range sortedLetters(testRunLetters) {
				name := fmt.Sprintf("replay %q -> %s", from, to)
				seed(t, c, from, "")
				if from == "" || runAllowed(from, to) {
					// TestRunTransitions checks these, the replay flag
					// changes nothing about them.
					require.Equal(t, runAllowed(from, to), len(moveIn(t, c, "run", to, "replay")) == 1, name)
					continue
				}
				// A finished run with its query field, in its status index.
				require.NoError(t, c.HSet(ctx, testRun, "m", from+",3,1,0,0,0,1000,5,7,c", "q", "wf:::").Err())
				require.NoError(t, c.ZAdd(ctx, testBase+"it:"+from, redis.Z{Score: 1000, Member: "1"}).Err())
				before := c.HGetAll(ctx, testRun).Val()
				got := moveIn(t, c, "run", to, "replay")
				if !runReplayAllowed(from, to) {
					require.Equal(t, []any{int64(codeIllegal), int64(1)}, got, name)
					require.Equal(t, before, c.HGetAll(ctx, testRun).Val(), "%s: a refused move changed the run", name)
					require.Equal(t, []string{"1"}, indexed(ctx, c, testBase+"it:"+from), name)
					continue
				}
				require.Equal(t, []any{int64(0)}, got, name)
				m := strings.Split(c.HGet(ctx, testRun, "m").Val(), ",")
				require.Equal(t, to, m[0], name)
				require.Equal(t, "1000", m[7], "%s: start offset", name)
				require.Equal(t, "", m[8], "%s: end offset kept", name)
				require.Empty(t, indexed(ctx, c, testBase+"it:"+from), "%s: left in it:%s", name, from)
				require.Equal(t, []string{"1"}, indexed(ctx, c, testBase+"it:"+to), "%s: not in it:%s", name, to)
			}
		}
	})
}

// indexed lists the runs of a status index, without the running index's
// skiplist pin (scored -1).
func indexed(ctx context.Context, c redis.Cmdable, key string) []string {
	return c.ZRangeByScore(ctx, key, &redis.ZRangeBy{Min: "0", Max: "+inf"}).Val()
}
