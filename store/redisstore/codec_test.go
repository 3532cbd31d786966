package redisstore

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

func TestTaskDefRoundTrip(t *testing.T) {
	in := plait.TaskSpec{
		Name: "load", Handler: "loader", Payload: []byte("x\n,;:{}\x00"), Queue: "gpu", Priority: plait.PriorityUrgent,
		Deps: []plait.Dep{{Task: "a", On: plait.OnFailure}, {Task: "b", On: plait.OnCompletion}}, Join: plait.JoinAny,
		Retry:   plait.RetryPolicy{MaxAttempts: 4, Backoff: plait.BackoffConstant, InitialInterval: time.Second, MaxInterval: time.Minute, Multiplier: 1.5, Jitter: -1, MaxElapsed: time.Hour},
		Timeout: 3 * time.Second, Requires: []string{"gpu", "ssd"},
		RunAt: time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC), Delay: 1500 * time.Microsecond,
	}
	enc := encodeTaskDef(&in, []edgeRef{{Task: "c", On: plait.OnSuccess}})
	head, _, _ := strings.Cut(enc, "\n")
	require.Equal(t, "gpu,3,1893553445001,2,1,a:2 b:1,c:0", head, "the Lua header rounds times up to the ms")
	out, err := decodeTaskDef("load", enc)
	require.NoError(t, err)
	require.Equal(t, in, out)

	empty := plait.TaskSpec{Name: "e", Queue: "default"}
	out, err = decodeTaskDef("e", encodeTaskDef(&empty, nil))
	require.NoError(t, err)
	require.Equal(t, empty, out)
}

func TestRunInfoRoundTrip(t *testing.T) {
	for _, in := range []runInfo{
		{},
		{Workflow: "wf", Tenant: "t", Service: "s", Metadata: map[string]string{"b": "2", "a": "1", "": ""}},
		{Workflow: "wf", Metadata: map[string]string{}},
	} {
		out, err := decodeRunInfo(encodeRunInfo(in))
		require.NoError(t, err)
		require.Equal(t, in, out)
	}
}

func TestDecodeAttempts(t *testing.T) {
	a, err := decodeAttempts("1,2,5,10,c,2,3;w1err2,3,0,0,s,0,0;", 1000)
	require.NoError(t, err)
	require.Equal(t, []plait.Attempt{
		{Attempt: 1, Epoch: 2, StartedAt: msTime(1005), Duration: 10 * time.Millisecond, Outcome: "crashed", Worker: "w1", Error: "err"},
		{Attempt: 2, Epoch: 3, StartedAt: msTime(1000), Outcome: "succeeded", Worker: "", Error: ""},
	}, a)
	for _, bad := range []string{"1,2", "1,2,3,4,s,5,0;ab", "1,2,3,4,q,0,0;", "1,2,3,4,s,-1,0;", "x,2,3,4,s,0,0;"} {
		_, err := decodeAttempts(bad, 0)
		require.ErrorIs(t, err, errCorrupt, "%q", bad)
	}
}

func TestDecodeStateAndMeta(t *testing.T) {
	st, err := decodeState("U,1,2,0,0,0,5,5,,worker,with,commas")
	require.NoError(t, err)
	require.Equal(t, plait.TaskRunning, st.status)
	require.Equal(t, "worker,with,commas", st.worker)
	require.Equal(t, int64(-1), st.ended)
	m, err := decodeMeta("U,1,0,0,0,0,1000,5,,k")
	require.NoError(t, err)
	require.Equal(t, plait.StrategySkip, m.strategy)
	for _, bad := range []string{"", "Z,1,2,0,0,0,,,,", "U,-1,2,0,0,0,,,,", "U,1,2,0,0,0,x,,,"} {
		_, err := decodeState(bad)
		require.ErrorIs(t, err, errCorrupt, "%q", bad)
	}
	for _, bad := range []string{"", "U,1,0,0,0,0,1000,5,,z", "U,1,0,0,0,0,1000,5,", "X,1,0,0,0,0,1000,,,c"} {
		_, err := decodeMeta(bad)
		require.ErrorIs(t, err, errCorrupt, "%q", bad)
	}
}

// FuzzDecodeRun feeds arbitrary field values to the run decoder: it may
// reject them but must never panic.
func FuzzDecodeRun(f *testing.F) {
	spec := plait.TaskSpec{Name: "a", Handler: "h", Queue: "default", Payload: []byte("p")}
	f.Add("P,1,0,0,0,0,1000,,,c", encodeRunInfo(runInfo{Workflow: "wf", Metadata: map[string]string{"k": "v"}}), "a",
		"P,0,0,0,0,0,,,,", encodeTaskDef(&spec, nil), "1,1,0,5,s,1,0;w", "key")
	f.Add("S,1,1,0,0,0,1000,1,2,s", "\x01\x02wf\x00\x00\x00", "a b", "S,1,1,0,0,0,1,1,2,w", "q,1,0,0,0,,\n\x01", "", "")
	f.Fuzz(func(t *testing.T, m, info, order, state, def, attempts, key string) {
		h := map[string]string{"m": m, "i": info, "o": order, "k": key}
		for _, name := range strings.Split(order, " ") {
			h["s:"+name] = state
			h["d:"+name] = def
			h["a:"+name] = attempts
			h["r:"+name] = attempts
		}
		run, err := decodeRun("1", h)
		if err == nil {
			require.Equal(t, len(run.Tasks), run.Total)
		}
	})
}

// FuzzDecodeTaskDef checks that any definition either decodes or fails
// cleanly, and that what decodes encodes back to a definition that decodes
// to the same spec.
func FuzzDecodeTaskDef(f *testing.F) {
	spec := plait.TaskSpec{Name: "a", Handler: "h", Queue: "default", Payload: []byte("p"), Requires: []string{"gpu"},
		Deps: []plait.Dep{{Task: "b"}}}
	f.Add(encodeTaskDef(&spec, []edgeRef{{Task: "c", On: plait.OnFailure}}))
	f.Add("default,2,0,0,0,,\n")
	f.Add("default,2,0,0,0,,\n\x01\x00\x00")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := decodeTaskDef("a", s)
		if err != nil {
			return
		}
		again, err := decodeTaskDef("a", encodeTaskDef(&got, nil))
		if err != nil {
			return // a header field the encoder normalises (e.g. an empty queue)
		}
		require.Equal(t, got.Handler, again.Handler)
		require.Equal(t, got.Payload, again.Payload)
	})
}
