package memstore

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
)

// Every status of the status machine has a code of its own and reads back
// as itself: a status added to package store fails here until it has one.
func TestEvStatusRoundTrip(t *testing.T) {
	t.Parallel()
	seen := map[evStatus]bool{}
	for _, st := range store.TaskStatuses() {
		c := taskEvStatus(st)
		require.NotZero(t, c, st)
		require.False(t, seen[c], st)
		seen[c] = true
		require.Equal(t, st, c.task())
	}
	for _, st := range store.RunStatuses() {
		c := runEvStatus(st)
		require.NotZero(t, c, st)
		require.False(t, seen[c], st)
		seen[c] = true
		require.Equal(t, st, c.run())
	}
}

// The record keeps the size WithEventCap's memory figures count on.
func TestEvRecSize(t *testing.T) {
	t.Parallel()
	require.Equal(t, uintptr(80), unsafe.Sizeof(evRec{}))
}
