package plait_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readmeMarker precedes the README's usage block, which must be, byte for
// byte, the code of readme_example_test.go between its readme:begin and
// readme:end comments: that file compiles and runs as Example_readme, so
// the README shows code that works.
const readmeMarker = "<!-- The block below is readme_example_test.go between its readme markers; readme_test.go keeps them equal. -->"

func TestReadmeUsageIsTheExample(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("readme_example_test.go")
	require.NoError(t, err)
	example := between(t, string(src), "// readme:begin\n", "\n// readme:end\n", "readme_example_test.go")

	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	rest := string(readme)
	i := strings.Index(rest, readmeMarker)
	require.GreaterOrEqual(t, i, 0, "README.md lost the marker before its usage block")
	require.Equal(t, 1, strings.Count(rest, readmeMarker), "README.md has the marker twice")
	block := between(t, rest[i+len(readmeMarker):], "\n```go\n", "\n```\n", "README.md")

	require.Equal(t, strings.TrimSpace(example), strings.TrimSpace(block),
		"the README's usage block and readme_example_test.go differ: edit the Go file, run the example, and paste it into the README")
}

// between returns the text of s after the first start and before the next
// end.
func between(t *testing.T, s, start, end, file string) string {
	t.Helper()
	i := strings.Index(s, start)
	require.GreaterOrEqual(t, i, 0, "%s: %q not found", file, start)
	s = s[i+len(start):]
	j := strings.Index(s, end)
	require.GreaterOrEqual(t, j, 0, "%s: %q not found", file, end)
	return s[:j]
}

// TestReadmeListsEveryOption keeps the README's option tables complete: every
// exported With… function returning an Option, in the root package and in
// each store package, has a row of its table.
func TestReadmeListsEveryOption(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	for _, pkg := range []struct{ dir, table string }{
		{".", "| scheduler option |"},
		{"store/redisstore", "| redisstore option |"},
		{"store/memstore", "| memstore option |"},
	} {
		table := between(t, string(readme), pkg.table, "\n\n", "README.md")
		names := optionFuncs(t, pkg.dir)
		require.NotEmpty(t, names, "no option found in %s", pkg.dir)
		for _, name := range names {
			require.Contains(t, table, "| `"+name+"(", "the README's %s table has no row for %s", strings.Trim(pkg.table, "| "), name)
		}
	}
}

// optionFuncs lists the exported functions named With… whose only result is
// the package's Option type, in the non-test files of dir.
func optionFuncs(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var names []string
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !fn.Name.IsExported() || !strings.HasPrefix(fn.Name.Name, "With") {
				continue
			}
			res := fn.Type.Results
			if res == nil || len(res.List) != 1 {
				continue
			}
			if id, ok := res.List[0].Type.(*ast.Ident); ok && id.Name == "Option" {
				names = append(names, fn.Name.Name)
			}
		}
	}
	return names
}
