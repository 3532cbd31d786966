package plait_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

// TestNodeNotFoundNamesTheNodesThatLookAlike: NodeDrain and NodeGet of an
// id no live node has still match ErrNotFound, and name the live nodes
// whose id looks like it (the worker id alone, another case, a part of
// the id, the id of the same worker's earlier life), or say how node ids
// are made when none does. On every backend.
func TestNodeNotFoundNamesTheNodesThatLookAlike(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		ctx := context.Background()
		b := setupNodes(t, f)
		err := b.other.NodeDrain(ctx, "w1")
		require.ErrorIs(t, err, plait.ErrNotFound)
		require.True(t, strings.HasSuffix(err.Error(), `: not found; no node is live`), err.Error())

		b.run(t)
		b.events.waitFor(t, 1, is(plait.EventNodeHeartbeat, ""))
		id := b.s.NodeID()
		random := id[len("w1."):]
		for _, asked := range []string{"w1", "W1", random[:5], strings.ToUpper(id), "w1.00000000", "w1.0000000"} {
			for call, err := range map[string]error{
				"NodeDrain": b.other.NodeDrain(ctx, asked),
				"NodeGet":   func() error { _, err := b.other.NodeGet(ctx, asked); return err }(),
			} {
				require.ErrorIs(t, err, plait.ErrNotFound, "%s(%q)", call, asked)
				require.True(t, strings.HasSuffix(err.Error(), fmt.Sprintf(": not found; live nodes like it: %q", id)),
					"%s(%q): %v", call, asked, err)
			}
		}
		err = b.other.NodeDrain(ctx, "nobody")
		require.ErrorIs(t, err, plait.ErrNotFound)
		require.True(t, strings.HasSuffix(err.Error(), fmt.Sprintf(`: not found; no live node looks like it: a node id is a worker id and a random part, as in %q`, id)), err.Error())
		_, err = b.other.NodeGet(ctx, id)
		require.NoError(t, err, "the node's own id finds it")
	})
}
