package memstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// memstore's options cannot fail (New has no error to answer), so each
// edge value has a meaning of its own, pinned here.
func TestOptionEdges(t *testing.T) {
	t.Parallel()
	s := New()
	require.Equal(t, RetentionDefault, s.retention)
	require.Equal(t, MaxResultBytesDefault, s.maxResult)

	require.Equal(t, RetentionDefault, New(WithRetention(0)).retention, "zero retention means the default")
	require.Equal(t, time.Minute, New(WithRetention(time.Minute)).retention)
	require.Equal(t, -time.Second, New(WithRetention(-time.Second)).retention, "negative retention keeps finished runs")

	require.Equal(t, MaxResultBytesDefault, New(WithMaxResultBytes(0)).maxResult, "zero means the default")
	require.Equal(t, MaxResultBytesDefault, New(WithMaxResultBytes(-5)).maxResult, "negative means the default")
	require.Equal(t, 10, New(WithMaxResultBytes(10)).maxResult)

	require.NotNil(t, New(WithClock(nil)).clock, "a nil clock keeps the system clock")
}

// With a negative retention a finished run is never freed.
func TestNegativeRetentionKeepsFinishedRuns(t *testing.T) {
	t.Parallel()
	s, r, _ := statusFixture(t, "", "")
	s.retention = -1
	s.buildRetention()
	s.runs[r.rec.ID] = r
	require.NoError(t, s.setRunStatusLocked(r, "pending", s.clock.Now()))
	require.NoError(t, s.setRunStatusLocked(r, "cancelled", s.clock.Now()))
	s.expireLocked(s.clock.Now().Add(1000 * time.Hour))
	require.Contains(t, s.runs, r.rec.ID)
}
