package redisstore

import (
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// schemaDoc is the page that maps the store's keys and Lua files.
const schemaDoc = "../../docs/redis-schema.md"

// luaTableHeading opens the section whose table lists the files of lua/.
const luaTableHeading = "### Lua files and status changes"

var luaFileName = regexp.MustCompile("`([a-z_]+\\.lua)`")

// luaTableProblems compares the Lua-files table of doc with files (the
// names in lua/): each row names one file that exists, in its first
// cell, or is a "(rendered)" row of what scripts.go renders; each file has
// one row.
func luaTableProblems(doc string, files []string) []string {
	_, section, ok := strings.Cut(doc, "\n"+luaTableHeading+"\n")
	if !ok {
		return []string{"no section " + luaTableHeading}
	}
	exists := map[string]bool{}
	for _, f := range files {
		exists[f] = true
	}
	var probs []string
	rows := map[string]int{}
	inTable := false
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(line, "|")
		first := strings.TrimSpace(cells[1])
		if first == "file" || strings.HasPrefix(first, "---") || first == "(rendered)" {
			continue
		}
		names := luaFileName.FindAllStringSubmatch(first, -1)
		if len(names) != 1 || names[0][0] != first {
			probs = append(probs, "a row that does not name one file: "+first)
			continue
		}
		name := names[0][1]
		if !exists[name] {
			probs = append(probs, "a row for "+name+", which lua/ does not hold")
		}
		rows[name]++
	}
	for _, f := range files {
		switch rows[f] {
		case 0:
			probs = append(probs, f+" has no row")
		case 1:
		default:
			probs = append(probs, f+" has more than one row")
		}
	}
	return probs
}

func luaFileNames(t *testing.T) []string {
	t.Helper()
	files, err := fs.Glob(luaFS, "lua/*.lua")
	require.NoError(t, err)
	for i, f := range files {
		files[i] = strings.TrimPrefix(f, "lua/")
	}
	return files
}

// TestSchemaDocListsLuaFiles: docs/redis-schema.md has one row per file
// of lua/, scripts and libraries alike, and no row for a file that is not
// there.
func TestSchemaDocListsLuaFiles(t *testing.T) {
	doc, err := os.ReadFile(schemaDoc)
	require.NoError(t, err)
	for _, p := range luaTableProblems(string(doc), luaFileNames(t)) {
		t.Errorf("%s: %s", schemaDoc, p)
	}
}

// TestSchemaDocCheckCatches: a file missing from the table, a row for a
// file that does not exist and a file listed twice each fail.
func TestSchemaDocCheckCatches(t *testing.T) {
	raw, err := os.ReadFile(schemaDoc)
	require.NoError(t, err)
	doc, files := string(raw), luaFileNames(t)
	require.Empty(t, luaTableProblems(doc, files))
	row := func(name string) string {
		for _, line := range strings.Split(doc, "\n") {
			if strings.HasPrefix(line, "| `"+name+"` |") {
				return line + "\n"
			}
		}
		t.Fatalf("no row for %s", name)
		return ""
	}
	ext := row("lease_extend.lua")
	require.Equal(t, []string{"lease_extend.lua has no row"},
		luaTableProblems(strings.Replace(doc, ext, "", 1), files))
	require.Equal(t, []string{"a row for gone.lua, which lua/ does not hold"},
		luaTableProblems(strings.Replace(doc, ext, ext+strings.ReplaceAll(ext, "lease_extend", "gone"), 1), files))
	require.Equal(t, []string{"lease_extend.lua has more than one row"},
		luaTableProblems(strings.Replace(doc, ext, ext+ext, 1), files))
	require.Equal(t, []string{"a row that does not name one file: `a.lua`, `b.lua`"},
		luaTableProblems(strings.Replace(doc, ext, ext+"| `a.lua`, `b.lua` | x | y |\n", 1), files))
}
