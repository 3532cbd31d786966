package plait_test

import (
	"os"
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
