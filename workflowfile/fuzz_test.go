package workflowfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/plaitdag/plait/workflowfile"
)

// FuzzParse feeds the loader arbitrary documents: it must never panic,
// every problem must be an *Error with a sane position, and a workflow it
// accepts must pass plait's validation. The seed corpus is the example
// files plus testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/valid/*")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		wf, err := workflowfile.Parse("fuzz.yaml", data)
		if err != nil {
			if wf != nil {
				t.Fatal("a refused file must not give a workflow")
			}
			var problems []error
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				problems = j.Unwrap()
			} else {
				problems = []error{err}
			}
			for _, p := range problems {
				var fe *workflowfile.Error
				if !errors.As(p, &fe) {
					t.Fatalf("problem %v is not a *workflowfile.Error", p)
				}
				if fe.Line < 0 || fe.Column < 0 || (fe.Line == 0) != (fe.Column == 0) {
					t.Fatalf("problem %v has position %d:%d", p, fe.Line, fe.Column)
				}
				if msg := p.Error(); !utf8.ValidString(msg) || strings.ContainsRune(msg, 0) {
					t.Fatalf("problem %q holds bytes of the file unquoted", msg)
				}
			}
			return
		}
		if err := wf.Validate(); err != nil {
			t.Fatalf("an accepted file must give a valid workflow: %v", err)
		}
	})
}
