package redistest

import (
	"errors"
	"testing"
)

// TestStartOfAServerThatExits starts a redis-server that exits at once (an
// argument it refuses), as one does when another process took its port
// first: Start gives up with an error after its tries instead of waiting
// on an exit it has already read.
func TestStartOfAServerThatExits(t *testing.T) {
	s, err := Start("--no-such-option", "1")
	if errors.Is(err, ErrNotInstalled) {
		t.Skip(err)
	}
	if err == nil {
		s.Close()
		t.Fatal("a server that exits at once was reported started")
	}
}
