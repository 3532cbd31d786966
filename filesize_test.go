package plait_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fileLinesMax is the repository's one file-size rule: a file holds one
// concept, in about 400 lines and never more than this, so a reader finds
// a name in the file named after it. bench/ is exempt: each of its
// harnesses is one self-contained program.
const fileLinesMax = 500

// TestFilesStaySmall keeps every Go and Lua file outside bench/ at or
// under fileLinesMax lines.
func TestFilesStaySmall(t *testing.T) {
	t.Parallel()
	var over []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "bench" || strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".lua" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := bytes.Count(src, []byte("\n")); n > fileLinesMax {
			over = append(over, path)
		}
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, over, "files over %d lines: split each by concept", fileLinesMax)
}
