package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRun runs the example as it is: three runs, two seconds apart, on the
// real clock.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about six seconds")
	}
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "run "); n != fires {
		t.Fatalf("%d runs reported, want %d:\n%s", n, fires, out.String())
	}
}
