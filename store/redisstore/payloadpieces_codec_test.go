package redisstore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
)

// TestEncodeTaskPieces checks where each size class of payload goes in
// format versions 7 and 8: in d: when it fits, in pieces of at most 64
// bytes (version 8, at least 2, at most 8 and within the run's room), else
// in its own key with mayApart, else in d:; and that each decodes back.
func TestEncodeTaskPieces(t *testing.T) {
	for _, c := range []struct {
		name            string
		size, room      int
		mayApart        bool
		pieces8         int
		apart8, apart7  bool
		inlineFitsLimit bool
	}{
		{name: "short", size: 10, room: 90, mayApart: true, inlineFitsLimit: true},
		{name: "one piece long, cut in two", size: 40, room: 90, mayApart: true, pieces8: 2, apart7: true},
		{name: "a few pieces", size: 100, room: 90, mayApart: true, pieces8: 2, apart7: true},
		{name: "three pieces", size: 150, room: 90, mayApart: true, pieces8: 3, apart7: true},
		{name: "the longest in pieces", size: 511, room: 90, mayApart: true, pieces8: 8, apart7: true},
		{name: "longer: its own key", size: 512, room: 90, mayApart: true, apart8: true, apart7: true},
		{name: "no room: its own key", size: 100, room: 1, mayApart: true, apart8: true, apart7: true},
		{name: "no room, large run: in d:", size: 100, room: 1},
		{name: "large run with room: pieces", size: 100, room: 10, pieces8: 2},
		{name: "longer, large run: in d:", size: 600, room: 90},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := store.TaskSpec{Name: "t", Handler: "noop", Queue: store.DefaultQueue, Payload: []byte(strings.Repeat("x", c.size))}
			for _, v := range []byte{7, 8} {
				tf := encodeTask(&spec, valueCodec{}, c.mayApart, c.room, v)
				wantPieces, wantApart := c.pieces8, c.apart8
				if v == 7 {
					wantPieces, wantApart = 0, c.apart7
				}
				require.Len(t, tf.pieces, wantPieces, "version %d", v)
				require.Equal(t, wantApart, tf.apart, "version %d", v)
				head, _, _ := strings.Cut(tf.def, "\n")
				switch {
				case wantPieces > 0:
					require.True(t, strings.HasSuffix(head, ","+string(rune('0'+wantPieces))), head)
				case wantApart:
					require.True(t, strings.HasSuffix(head, ",1"), head)
				default:
					require.True(t, strings.HasSuffix(head, ",0"), head)
				}
				if wantPieces > 0 || wantApart || c.inlineFitsLimit {
					require.LessOrEqual(t, len(tf.def), maxListpackValue, "version %d: d: stays a listpack value", v)
				}
				for _, p := range tf.pieces {
					require.LessOrEqual(t, len(p), maxListpackValue)
				}
				payload := tf.payload + strings.Join(tf.pieces, "")
				got, err := decodeTaskDef("t", tf.def, tf.parents, payload, false)
				require.NoError(t, err, "version %d", v)
				require.Equal(t, spec, got, "version %d", v)
				if wantPieces > 0 {
					_, err := decodeTaskDef("t", tf.def, tf.parents, "", false)
					require.ErrorIs(t, err, errCorrupt, "pieces must be there")
				}
			}
		})
	}
}

// TestSplitPayload checks the cut: the fewest pieces of at most 64 bytes,
// about even, joined back to the payload, and never one piece alone.
func TestSplitPayload(t *testing.T) {
	for _, n := range []int{1, 2, 63, 64, 65, 128, 129, 300, 511, 512} {
		p := strings.Repeat("ab", n)[:n]
		ps := splitPayload(p, 100, 8)
		if n > maxPieces*maxListpackValue {
			require.Nil(t, ps, "%d bytes", n)
			continue
		}
		require.Equal(t, p, strings.Join(ps, ""), "%d bytes", n)
		require.Len(t, ps, max(2, (n+63)/64), "%d bytes", n)
		for _, x := range ps {
			require.LessOrEqual(t, len(x), maxListpackValue)
			require.GreaterOrEqual(t, len(x), len(ps[0])-1, "%d bytes: pieces about even", n)
		}
	}
	require.Nil(t, splitPayload(strings.Repeat("x", 100), 1, 8), "no room")
	require.Nil(t, splitPayload(strings.Repeat("x", 100), 100, 7), "version 7 keeps no pieces")
}

// TestDefHeaderPieces checks the apart field each version reads: 0 and 1
// in both, a count of 2 to maxPieces only in version 8.
func TestDefHeaderPieces(t *testing.T) {
	for _, c := range []struct {
		field string
		v     int
		ok    bool
	}{
		{"0", 7, true}, {"1", 7, true}, {"2", 7, false}, {"3", 8, true}, {"8", 8, true},
		{"9", 8, false}, {"12", 8, false}, {"+2", 8, false}, {"x", 8, false}, {"", 8, false},
	} {
		var d taskDef
		err := d.header("t", "default,1,0,0,0,0,"+c.field, c.v)
		if c.ok {
			require.NoError(t, err, "%q in version %d", c.field, c.v)
		} else {
			require.ErrorIs(t, err, errCorrupt, "%q in version %d", c.field, c.v)
		}
	}
}
