package redisstore

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// faultLabels are the four sections every transition's header ends with,
// in this order: what a resend of a call whose reply was lost does, what
// a Redis that lost data (a restart without persistence, a flush, a
// failover to a replica that lagged) makes of it, what a Redis out of
// memory does with it, and what a worker or caller cut off from Redis
// sees.
var faultLabels = []string{"Retried:", "Lost data:", "Out of memory:", "Cut off:"}

// oldFaultLabels are spellings the headers once used for the same
// sections; one set of labels keeps them greppable.
var oldFaultLabels = regexp.MustCompile(`Redis lost data:|Worker cut off:|Retried after|Retried \(|Retried, lost data`)

// transitionFiles lists the scripts of lua/: every file but the lib files
// and common.lua, which are libraries, not transitions.
func transitionFiles(t *testing.T) []string {
	t.Helper()
	files, err := fs.Glob(luaFS, "lua/*.lua")
	require.NoError(t, err)
	var out []string
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "lua/"), ".lua")
		if name != "common" && !strings.HasPrefix(name, "lib_") {
			out = append(out, name)
		}
	}
	return out
}

// luaHeader is the leading comment block of a Lua file, one entry per
// line with "--" and one space taken off.
func luaHeader(src string) []string {
	var out []string
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "--") {
			break
		}
		out = append(out, strings.TrimPrefix(strings.TrimPrefix(line, "--"), " "))
	}
	return out
}

// headerProblems names what the header of script name lacks: a line of
// KEYS, one of ARGV, a Transition, a Returns, and each fault label once,
// at the start of a line with its text after it, in faultLabels' order.
func headerProblems(name string, header []string) []string {
	var probs []string
	starts := func(prefix string) []int {
		var at []int
		for i, l := range header {
			if strings.HasPrefix(l, prefix) {
				at = append(at, i)
			}
		}
		return at
	}
	if !strings.HasPrefix(strings.Join(header, "\n"), name+".lua: ") {
		probs = append(probs, "its first line names another file")
	}
	for _, p := range []string{"KEYS", "ARGV", "Transition:", "Returns"} {
		if len(starts(p)) == 0 {
			probs = append(probs, "no line starts with "+p)
		}
	}
	last := -1
	for _, label := range faultLabels {
		at := starts(label)
		switch {
		case len(at) == 0:
			probs = append(probs, "no "+label+" section")
			continue
		case len(at) > 1:
			probs = append(probs, label+" opens more than one section")
		}
		if strings.TrimSpace(strings.TrimPrefix(header[at[0]], label)) == "" {
			probs = append(probs, label+" says nothing")
		}
		if at[0] < last {
			probs = append(probs, label+" out of order (want "+strings.Join(faultLabels, " ")+")")
		}
		last = at[0]
	}
	if m := oldFaultLabels.FindString(strings.Join(header, " ")); m != "" {
		probs = append(probs, "an old label: "+m)
	}
	return probs
}

// TestScriptHeaders: every transition in lua/ opens with a complete
// header, and the scripts in lua/ are exactly those scripts.go registers.
func TestScriptHeaders(t *testing.T) {
	names := transitionFiles(t)
	require.ElementsMatch(t, scriptNames, names, "lua/ holds the scripts of scriptNames and no other")
	for _, name := range names {
		src, err := luaFS.ReadFile("lua/" + name + ".lua")
		require.NoError(t, err)
		for _, p := range headerProblems(name, luaHeader(string(src))) {
			t.Errorf("%s.lua: %s", name, p)
		}
	}
}

// TestScriptHeadersCatch: a header missing any one of its lines, or with
// its fault sections out of order or labelled the old way, fails.
func TestScriptHeadersCatch(t *testing.T) {
	src, err := luaFS.ReadFile("lua/lease_extend.lua")
	require.NoError(t, err)
	header := luaHeader(string(src))
	require.Empty(t, headerProblems("lease_extend", header))
	removed := 0
	for i, l := range header {
		for _, label := range append([]string{"KEYS", "ARGV", "Transition:", "Returns"}, faultLabels...) {
			if strings.HasPrefix(l, label) && !hasOther(header, i, label) {
				cut := slices.Delete(slices.Clone(header), i, i+1)
				require.NotEmpty(t, headerProblems("lease_extend", cut), "removing %q", l)
				removed++
			}
		}
	}
	require.Equal(t, 2+len(faultLabels), removed, "Transition, Returns and the four fault labels (KEYS and ARGV span several lines)")
	for _, p := range []string{"KEYS", "ARGV"} {
		cut := slices.DeleteFunc(slices.Clone(header), hasPrefix(p))
		require.NotEmpty(t, headerProblems("lease_extend", cut), "no %s line", p)
	}
	swapped := slices.Clone(header)
	r, c := slices.IndexFunc(swapped, hasPrefix("Retried:")), slices.IndexFunc(swapped, hasPrefix("Cut off:"))
	swapped[r], swapped[c] = swapped[c], swapped[r]
	require.NotEmpty(t, headerProblems("lease_extend", swapped), "sections out of order")
	old := append(slices.Clone(header), "Worker cut off: as above.")
	require.NotEmpty(t, headerProblems("lease_extend", old), "an old label")
}

// hasOther reports whether another line of header than i starts with
// label, so that removing line i leaves the label in place.
func hasOther(header []string, i int, label string) bool {
	for j, l := range header {
		if j != i && strings.HasPrefix(l, label) {
			return true
		}
	}
	return false
}

func hasPrefix(p string) func(string) bool {
	return func(s string) bool { return strings.HasPrefix(s, p) }
}
