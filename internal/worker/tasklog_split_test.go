package worker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// rejectingLogStore rejects, as a whole, any append holding the line bad,
// and keeps the lines of the others with their sequence numbers.
type rejectingLogStore struct {
	store.TaskLogStore
	bad string

	mu    sync.Mutex
	calls []string
	kept  []string
}

func (s *rejectingLogStore) TaskLogAppend(_ context.Context, params *store.TaskLogAppendParams) (*store.TaskLogAppendResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range params.Lines {
		if l.Text == s.bad {
			s.calls = append(s.calls, fmt.Sprintf("seq %d: %d lines rejected", params.Seq, len(params.Lines)))
			return nil, fmt.Errorf("%w: ERR Protocol error: invalid bulk length", store.ErrRejected)
		}
	}
	s.calls = append(s.calls, fmt.Sprintf("seq %d: %d lines", params.Seq, len(params.Lines)))
	for _, l := range params.Lines {
		s.kept = append(s.kept, l.Text)
	}
	return &store.TaskLogAppendResult{Stored: len(params.Lines)}, nil
}

// TestTaskLogSplitsRejectedAppend flushes 6 lines, the fourth of which
// the store rejects with the whole append: the other 5 are stored, in
// order, under increasing sequence numbers, and one line is counted lost.
func TestTaskLogSplitsRejectedAppend(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := newPool(&Config{Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), TaskLogFlush: time.Second})
	st := &rejectingLogStore{bad: "line 3"}
	l := &attemptLog{pool: p, store: st, lease: store.Lease{RunID: "run", Task: "t", Epoch: 1}, attempt: 1}
	for i := range 6 {
		l.add(store.LogLine{Time: clk.Now(), Level: slog.LevelInfo, Text: fmt.Sprintf("line %d", i)})
	}
	l.end()
	require.Equal(t, []string{
		"seq 1: 6 lines rejected",
		"seq 1: 3 lines",
		"seq 2: 3 lines rejected",
		"seq 2: 1 lines rejected",
		"seq 3: 2 lines",
	}, st.calls)
	require.Equal(t, []string{"line 0", "line 1", "line 2", "line 4", "line 5"}, st.kept)
	require.Equal(t, 1, l.lost)
}
