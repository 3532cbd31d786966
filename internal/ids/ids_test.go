package ids_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/plaitdag/plait/internal/ids"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// allowedByte is the rule written out independently of the package.
func allowedByte(c byte) bool {
	return strings.IndexByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", c) >= 0
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"letters", "abcXYZ", nil},
		{"digits and punctuation", "a-1_b.2", nil},
		{"single byte", "x", nil},
		{"only dots", "...", nil},
		{"max length", strings.Repeat("a", ids.MaxLen), nil},
		{"empty", "", ids.ErrEmpty},
		{"too long", strings.Repeat("a", ids.MaxLen+1), ids.ErrTooLong},
		{"too long with bad chars", strings.Repeat(":", ids.MaxLen+1), ids.ErrTooLong},
		{"colon", "a:b", ids.ErrChar},
		{"open brace", "a{b", ids.ErrChar},
		{"close brace", "a}b", ids.ErrChar},
		{"NUL", "a\x00b", ids.ErrChar},
		{"invalid UTF-8", "\xff", ids.ErrChar},
		{"valid non-ASCII UTF-8", "caf\u00e9", ids.ErrChar},
		{"space", "a b", ids.ErrChar},
		{"star", "a*", ids.ErrChar},
		{"question mark", "a?", ids.ErrChar},
		{"bracket", "a[0]", ids.ErrChar},
		{"slash", "a/b", ids.ErrChar},
		{"newline", "a\n", ids.ErrChar},
		{"DEL", "a\x7f", ids.ErrChar},
	}
	for _, tc := range tests {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := ids.Check(tc.in)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestCheckEveryByte(t *testing.T) {
	t.Parallel()
	for c := 0; c < 256; c++ {
		err := ids.Check(string([]byte{'a', byte(c), 'z'}))
		if allowedByte(byte(c)) {
			require.NoError(t, err, "byte %#x", c)
		} else {
			require.ErrorIs(t, err, ids.ErrChar, "byte %#x", c)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{"", "a", "a:b", "{x}", "\x00", "\xff", "task-1.v_2", strings.Repeat("z", ids.MaxLen), strings.Repeat("z", ids.MaxLen+1)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := ids.Check(s)
		if err != nil {
			require.Condition(t, func() bool {
				return err == ids.ErrEmpty || err == ids.ErrTooLong || err == ids.ErrChar
			}, "unexpected reason %v", err)
			return
		}
		require.NotEmpty(t, s)
		require.LessOrEqual(t, len(s), ids.MaxLen)
		for i := 0; i < len(s); i++ {
			require.True(t, allowedByte(s[i]), "accepted %q with byte %#x", s, s[i])
		}
	})
}

func TestQuote(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ab", 5000)
	tests := []struct {
		name, in, want string
	}{
		{"short", "a:b", `"a:b"`},
		{"max length whole", strings.Repeat("x", ids.MaxLen), `"` + strings.Repeat("x", ids.MaxLen) + `"`},
		{"long cut with its length", long, `"` + long[:ids.MaxLen] + `"…(10000 bytes)`},
		{"NUL escaped", "a\x00b", `"a\x00b"`},
		{"invalid UTF-8 escaped", "a\xffb", `"a\xffb"`},
		// 127 bytes, then a 2-byte rune across the cut: the rune goes.
		{"rune not split", strings.Repeat("x", ids.MaxLen-1) + "é" + long, `"` + strings.Repeat("x", ids.MaxLen-1) + `"…(10129 bytes)`},
		// Continuation bytes only: the cut steps back at most 3 bytes.
		{"garbage cut near the limit", strings.Repeat("\x80", 200), `"` + strings.Repeat(`\x80`, ids.MaxLen-3) + `"…(200 bytes)`},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, ids.Quote(tc.in), tc.name)
	}
}

func TestCut(t *testing.T) {
	t.Parallel()
	require.Equal(t, `parsing "x": invalid`, ids.Cut(`parsing "x": invalid`))
	require.Equal(t, "a\uFFFDb\uFFFDc\uFFFD", ids.Cut("a\xffb\x00c\n"))
	long := strings.Repeat("ab", 5000)
	require.Equal(t, long[:ids.MaxLen]+"…(10000 bytes)", ids.Cut(long))
}

func TestErrTooLongStatesMaxLen(t *testing.T) {
	t.Parallel()
	require.Equal(t, "is longer than "+strconv.Itoa(ids.MaxLen)+" bytes", ids.ErrTooLong.Error())
}
