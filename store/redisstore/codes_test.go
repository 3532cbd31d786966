package redisstore

import (
	"context"
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestReplyCodesRendered: Lua reads each rendered name as its Go value,
// every code codeErr knows has a name, and no two names share a code
// unless one script alone answers one of them (createKeyTaken, read
// before any shared code).
func TestReplyCodesRendered(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	names := make([]string, len(luaCodes))
	for i, lc := range luaCodes {
		names[i] = lc.name
	}
	got, err := redis.NewScript(codesTable()+"return {"+strings.Join(names, ", ")+"}").
		Run(context.Background(), c, nil).Int64Slice()
	require.NoError(t, err)
	require.Len(t, got, len(luaCodes))
	byCode := map[int64][]string{}
	for i, lc := range luaCodes {
		require.EqualValues(t, lc.code, got[i], "Lua's %s", lc.name)
		byCode[got[i]] = append(byCode[got[i]], lc.name)
	}
	require.Contains(t, byCode, int64(codeOK))
	for code := range codeErrors {
		require.Contains(t, byCode, code, "code %d has no Lua name", code)
	}
	for code, ns := range byCode {
		if len(ns) > 1 {
			require.Equal(t, []string{"NOT_FOUND", "KEY_TAKEN"}, ns, "names of code %d", code)
		}
	}
}

// replyLiteral finds a number where a script puts a reply code: the first
// value of a return (a table's or a list's), the first entry of a reply
// table built up in out, and a per-entry code.
var replyLiteral = regexp.MustCompile(`return\s*\{\s*-?\d+|return\s+-?\d+\s*(,|end\b|$)|local\s+out\s*=\s*\{\s*-?\d+|\bcode\s*=\s*-?\d+`)

// replyLiteralsAllowed are the numeric returns that are not reply codes,
// by file and statement: the Go side reads them as something else or not
// at all.
var replyLiteralsAllowed = map[string][]string{
	// acquired 1 or 0: LeaderAcquire reads a flag, not a code
	"leader_acquire.lua": {"return {0, holder, int(epoch), int(until_ms)}", "return {1, holder, int(epoch), int(until_ms)}"},
	// released 1 or 0: LeaderRelease reads no reply
	"leader_release.lua": {"return 0", "return 1"},
	// a part's reply: createInParts reads only its error
	"run_create_part.lua": {"if redis.call('HEXISTS', rk, 'm') == 1 then return 0 end", "return 0"},
	// counts of failed and ended tasks, not a reply
	"lib_codec.lua": {"if mid == '0,0,0' then return 0, 0 end"},
	// a time (0: none), not a reply
	"lib_limit.lua": {"return 0"},
}

// TestNoReplyCodeLiterals: no Lua file writes a reply code as a number,
// only as the name codesTable renders; the allowlist above holds the
// numbers that are not codes, and an entry that no longer matches fails
// too, so the list cannot outlive what it excuses.
func TestNoReplyCodeLiterals(t *testing.T) {
	files, err := fs.Glob(luaFS, "lua/*.lua")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	seen := map[string]bool{}
	for _, f := range files {
		src, err := luaFS.ReadFile(f)
		require.NoError(t, err)
		name := strings.TrimPrefix(f, "lua/")
		for i, line := range strings.Split(string(src), "\n") {
			code := strings.TrimSpace(stripLuaComment(line))
			if !replyLiteral.MatchString(code) {
				continue
			}
			key := name + ": " + code
			if allowed(name, code) {
				seen[key] = true
				continue
			}
			t.Errorf("%s:%d: a reply code written as a number (use its name from codes.go): %s", name, i+1, code)
		}
	}
	for file, stmts := range replyLiteralsAllowed {
		for _, s := range stmts {
			if !seen[file+": "+s] {
				t.Errorf("replyLiteralsAllowed: %s no longer has %q", file, s)
			}
		}
	}
}

func allowed(file, stmt string) bool {
	for _, s := range replyLiteralsAllowed[file] {
		if s == stmt {
			return true
		}
	}
	return false
}

// stripLuaComment drops a line comment, skipping "--" inside a quoted
// string.
func stripLuaComment(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quote != 0:
			if ch == '\\' {
				i++
			} else if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '-' && i+1 < len(line) && line[i+1] == '-':
			return line[:i]
		}
	}
	return line
}

// TestNoReplyCodeLiteralsCatches: the scan finds each form a code takes.
func TestNoReplyCodeLiteralsCatches(t *testing.T) {
	for _, line := range []string{
		"if r == nil then return {1} end", "return {4, ''}", "  return 2, r.st",
		"return 0", "local out = {7}", "elseif t == false then code = 4",
	} {
		require.True(t, replyLiteral.MatchString(stripLuaComment(line)), line)
	}
	for _, line := range []string{
		"return {NOT_FOUND}", "return OK, r.st", "-- returns {1} here", "return {pruned, more}",
		"return 'c', id, name, 'x'", "local s = '-- not a comment' return {CORRUPT}",
	} {
		require.False(t, replyLiteral.MatchString(stripLuaComment(line)), line)
	}
}
