package redisstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The generation follows the status or outcome letter only above 0; the
// fields written before it (or of a run never replayed) read as 0.
func TestGenerationDecodes(t *testing.T) {
	m, err := decodeMeta("U,5,1,0,0,0,1893456000000,1000,,s")
	require.NoError(t, err)
	require.Zero(t, m.gen)
	m, err = decodeMeta("F12,5,1,0,0,0,1893456000000,1000,2000,s")
	require.NoError(t, err)
	require.Equal(t, int64(12), m.gen)
	require.Equal(t, "failed", string(m.status))

	st, err := decodeState("S,2,2,0,0,0,1000,4000,4500,w1")
	require.NoError(t, err)
	require.Zero(t, st.gen)
	st, err = decodeState("U3,1,7,0,1,1,5000,5000,,w2")
	require.NoError(t, err)
	require.Equal(t, int64(3), st.gen)
	require.Equal(t, byte('U'), st.letter)

	recs, err := decodeAttempts("1,1,1000,500,t,2,7,2000,0;w1timeout2,5,4000,500,s2,2,0,0,3500;w1", 0)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.Zero(t, recs[0].Generation)
	require.Equal(t, "timed out", recs[0].Outcome)
	require.Equal(t, int64(2), recs[1].Generation)
	require.Equal(t, "succeeded", recs[1].Outcome)

	for _, bad := range []string{"U0,5,1,0,0,0,1,,,s", "Ux,5,1,0,0,0,1,,,s", "U-1,5,1,0,0,0,1,,,s"} {
		_, err := decodeMeta(bad)
		require.ErrorIs(t, err, errCorrupt, bad)
	}
	_, err = decodeAttempts("1,1,0,0,s0,0,0;", 0)
	require.ErrorIs(t, err, errCorrupt)

	ev, err := decodeEvent(rawEvent{pos: "1-0.1", run: "r", now: "5", v: "?2:a,handler h"})
	require.NoError(t, err)
	require.Equal(t, "a", ev.Task)
	require.Equal(t, int64(2), ev.Generation)
	require.Equal(t, "handler h", ev.WaitingFor)
	ev, err = decodeEvent(rawEvent{pos: "1-0.1", run: "r", now: "5", v: "?a,capability gpu,ssd"})
	require.NoError(t, err)
	require.Equal(t, "a", ev.Task)
	require.Zero(t, ev.Generation)
	require.Equal(t, "capability gpu,ssd", ev.WaitingFor)
}
