package redisstore

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCommandsListsEveryScriptCommand: every command a script runs is in
// Commands, read from the Lua files, so a command added to a script
// without the list fails here even when no conformance case reaches it.
func TestCommandsListsEveryScriptCommand(t *testing.T) {
	files, err := fs.Glob(luaFS, "lua/*.lua")
	require.NoError(t, err)
	cmds := Commands()
	for _, f := range files {
		b, err := luaFS.ReadFile(f)
		require.NoError(t, err)
		for _, m := range luaCall.FindAllStringSubmatch(string(b), -1) {
			require.Contains(t, cmds, strings.ToLower(m[1]), "%s runs %s", f, m[1])
		}
		// A call whose command is not a literal on its line would hide
		// from the reading above and from a refusal's line.
		require.NotRegexp(t, `redis\.p?call\(\s*($|[^'\s])`, string(b), f)
	}
}

// TestCommandsSortedAndUnique: the list is sorted, each name once, in
// ACL form (lower case, a subcommand after '|').
func TestCommandsSortedAndUnique(t *testing.T) {
	cmds := Commands()
	require.True(t, slices.IsSorted(cmds))
	require.Len(t, slices.Compact(slices.Clone(cmds)), len(cmds))
	for _, c := range cmds {
		require.Regexp(t, `^[a-z_]+(\|[a-z_]+)?$`, c)
	}
}

// TestLineCommands: the commands of one line of a source, distinct.
func TestLineCommands(t *testing.T) {
	src := "a\nif redis.call('LPUSH', k) > 1 then redis.call('LTRIM', k) redis.pcall('LPUSH', k) end\n"
	require.Equal(t, []string{"lpush", "ltrim"}, lineCommands(src, 2))
	require.Empty(t, lineCommands(src, 1))
	require.Empty(t, lineCommands(src, 9))
}
