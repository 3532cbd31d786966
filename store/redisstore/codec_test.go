package redisstore

import (
	"strings"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

func TestTaskDefRoundTrip(t *testing.T) {
	in := store.TaskSpec{
		Name: "load", Handler: "loader", Payload: []byte("x\n,;:{}\x00"), Queue: "gpu", Priority: store.PriorityUrgent,
		Deps: []store.Dep{{Task: "a", On: store.OnFailure}, {Task: "b", On: store.OnCompletion}}, Join: store.JoinAny,
		Retry:   store.RetryPolicy{MaxAttempts: 4, Backoff: store.BackoffConstant, InitialInterval: time.Second, MaxInterval: time.Minute, Multiplier: 1.5, Jitter: -1, MaxElapsed: time.Hour},
		Timeout: 3 * time.Second, Requires: []string{"gpu", "ssd"},
		RunAt: time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC), Delay: 1500 * time.Microsecond,
	}
	tf := encodeTask(&in, valueCodec{}, false, formatVersion)
	head, _, _ := strings.Cut(tf.def, "\n")
	require.Equal(t, "gpu+gpu+ssd,3,1893553445001,2,1,2,0", head, "the Lua header names the routed queue and rounds times up to the ms")
	require.Equal(t, "a:2 b:1", tf.parents)
	require.False(t, tf.apart, "a large run keeps its payloads inline")
	out, err := decodeTaskDef("load", tf.def, tf.parents, tf.payload, false)
	require.NoError(t, err)
	require.Equal(t, in, out)

	empty := store.TaskSpec{Name: "e", Queue: "default"}
	tf = encodeTask(&empty, valueCodec{}, true, formatVersion)
	out, err = decodeTaskDef("e", tf.def, tf.parents, tf.payload, false)
	require.NoError(t, err)
	require.Equal(t, empty, out)
	require.LessOrEqual(t, len(tf.def), maxListpackValue)

	zero := store.TaskSpec{Name: "z", Queue: "default", Payload: []byte{}}
	tf = encodeTask(&zero, valueCodec{}, true, formatVersion)
	out, err = decodeTaskDef("z", tf.def, tf.parents, tf.payload, false)
	require.NoError(t, err)
	require.Equal(t, zero, out, "an empty payload is not nil")

	// One byte repeated: long enough to go apart as it is, and so
	// compressible that any DEFLATE writer (their output differs between
	// Go releases by a few bytes) brings it under the inline limit.
	long := store.TaskSpec{Name: "l", Handler: "noop", Queue: "default", Payload: []byte(strings.Repeat("p", 104))}
	tf = encodeTask(&long, valueCodec{}, true, formatVersion)
	require.True(t, tf.apart, "a payload that would make the definition longer than a listpack value goes apart")
	require.LessOrEqual(t, len(tf.def), maxListpackValue)
	out, err = decodeTaskDef("l", tf.def, tf.parents, tf.payload, false)
	require.NoError(t, err)
	require.Equal(t, long, out)
	_, err = decodeTaskDef("l", tf.def, tf.parents, "", false)
	require.ErrorIs(t, err, errCorrupt, "a payload kept apart must be there")
	tf = encodeTask(&long, valueCodec{}, false, formatVersion)
	require.False(t, tf.apart, "a large run keeps payloads inline")
	out, err = decodeTaskDef("l", tf.def, tf.parents, tf.payload, false)
	require.NoError(t, err)
	require.Equal(t, long, out)

	tf = encodeTask(&long, valueCodec{threshold: 32}, true, formatVersion)
	require.False(t, tf.apart, "a compressed payload fits inline")
	out, err = decodeTaskDef("l", tf.def, tf.parents, tf.payload, false)
	require.NoError(t, err)
	require.Equal(t, long, out)
}

func TestValueCodec(t *testing.T) {
	text := []byte(strings.Repeat("result ", 40))
	noise := make([]byte, 200)
	for i := range noise {
		noise[i] = byte(i*151 + i*i*7)
	}
	for _, c := range []valueCodec{{}, {threshold: 1}, {threshold: 100}, {threshold: 1000}} {
		for _, in := range [][]byte{{}, []byte("x"), text, noise} {
			enc := c.encode(in)
			out, err := decodeValue(enc)
			require.NoError(t, err)
			require.Equal(t, in, out)
			require.LessOrEqual(t, len(enc), len(in)+1, "compression never grows a value beyond its flag byte")
			if c.threshold > 0 && len(in) >= c.threshold && string(in) == string(text) {
				require.Equal(t, byte(valueDeflate), enc[0])
				require.Less(t, len(enc), len(in)/4)
			}
		}
	}
	v, err := decodeValue("")
	require.NoError(t, err)
	require.Nil(t, v)
	for _, bad := range []string{"\x02abc", "\x01\xff\xff"} {
		_, err := decodeValue(bad)
		require.ErrorIs(t, err, errCorrupt, "%q", bad)
	}
}

func TestRunInfoRoundTrip(t *testing.T) {
	for _, in := range []runInfo{
		{},
		{Workflow: "wf", Tenant: "t", Service: "s", Metadata: map[string]string{"b": "2", "a": "1", "": ""}},
		{Workflow: "wf", Metadata: map[string]string{}},
	} {
		out, err := decodeRunInfo(encodeRunInfo(in, formatVersion))
		require.NoError(t, err)
		require.Equal(t, in, out)
	}
}

func TestDecodeAttempts(t *testing.T) {
	a, err := decodeAttempts("1,2,5,10,c,2,3;w1err2,3,0,0,s,0,0;3,4,1,2,r,0,1,750;e4,5,9,1,s,0,0,0,7;", 1000)
	require.NoError(t, err)
	require.Equal(t, []store.Attempt{
		{Attempt: 1, Epoch: 2, StartedAt: msTime(1005), EndedAt: msTime(1015), Duration: 10 * time.Millisecond, Outcome: "crashed", Worker: "w1", Error: "err"},
		{Attempt: 2, Epoch: 3, StartedAt: msTime(1000), EndedAt: msTime(1000), Outcome: "succeeded", Worker: "", Error: ""},
		{Attempt: 3, Epoch: 4, StartedAt: msTime(1001), EndedAt: msTime(1003), Duration: 2 * time.Millisecond, Outcome: "retry", Error: "e", RetryDelay: 750 * time.Millisecond},
		{Attempt: 4, Epoch: 5, QueuedAt: msTime(1007), StartedAt: msTime(1009), EndedAt: msTime(1010), Duration: time.Millisecond, Outcome: "succeeded"},
	}, a)
	for _, bad := range []string{"1,2", "1,2,3,4,s,5,0;ab", "1,2,3,4,q,0,0;", "1,2,3,4,s,-1,0;", "x,2,3,4,s,0,0;", "1,2,3,4,r,0,0,-5;", "1,2,3,4,r,0,0,1,2,3;", "1,2,3,4,r,0,0,1,x;"} {
		_, err := decodeAttempts(bad, 0)
		require.ErrorIs(t, err, errCorrupt, "%q", bad)
	}
}

func TestDecodeStateAndMeta(t *testing.T) {
	st, err := decodeState("U,1,2,0,0,0,5,5,,worker,with,commas")
	require.NoError(t, err)
	require.Equal(t, store.TaskRunning, st.status)
	require.Equal(t, "worker,with,commas", st.worker)
	require.Equal(t, int64(-1), st.ended)
	m, err := decodeMeta("U,1,0,0,0,0,1000,5,,k")
	require.NoError(t, err)
	require.Equal(t, store.StrategySkip, m.strategy)
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
	spec := store.TaskSpec{Name: "a", Handler: "h", Queue: "default", Payload: []byte("p")}
	f.Add("P,1,0,0,0,0,1000,,,c", encodeRunInfo(runInfo{Workflow: "wf", Metadata: map[string]string{"k": "v"}}, formatVersion), "a",
		"P,0,0,0,0,0,,,,", encodeTask(&spec, valueCodec{}, false, formatVersion).def, "1,1,0,5,s,1,0;w", "key")
	f.Add("S,1,1,0,0,0,1000,1,2,s", "\x02\x02wf\x00\x00\x00", "a b", "S,1,1,0,0,0,1,1,2,w", "q,1,0,0,0,0,0\n\x02", "", "")
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
	spec := store.TaskSpec{Name: "a", Handler: "h", Queue: "default", Payload: []byte("p"), Requires: []string{"gpu"},
		Deps: []store.Dep{{Task: "b"}}}
	tf := encodeTask(&spec, valueCodec{}, false, formatVersion)
	f.Add(tf.def, tf.parents, "")
	spec.Payload = []byte(strings.Repeat("p", 100))
	tf = encodeTask(&spec, valueCodec{threshold: 10}, true, formatVersion)
	f.Add(tf.def, tf.parents, tf.payload)
	tf = encodeTask(&spec, valueCodec{}, true, formatVersion)
	f.Add(tf.def, tf.parents, tf.payload)
	f.Add("default,2,0,0,0,0,0\n", "", "")
	f.Add("default,2,0,0,0,1,1\n\x02\x00\x00", "b:0", "\x01\x00")
	f.Fuzz(func(t *testing.T, s, parents, payload string) {
		got, err := decodeTaskDef("a", s, parents, payload, false)
		if err != nil {
			return
		}
		for _, c := range []valueCodec{{}, {threshold: 1}} {
			for _, apart := range []bool{false, true} {
				tf := encodeTask(&got, c, apart, formatVersion)
				again, err := decodeTaskDef("a", tf.def, tf.parents, tf.payload, false)
				if err != nil {
					return // a header field the encoder normalises (e.g. an empty queue)
				}
				require.Equal(t, got.Handler, again.Handler)
				require.Equal(t, got.Payload, again.Payload)
				require.Equal(t, got.Deps, again.Deps)
			}
		}
	})
}
