package plait_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

// The mistakes a new user makes get a typed error at the call that makes
// them: a handler name registered twice, a parent asked for by a name that
// is not one, a value decoded into the wrong type.

// TestHandleRefusesANameRegisteredTwice: Handle and HandleWith refuse a
// name already registered, with an error matching ErrDuplicateHandler that
// names it, and the first handler stays the one that runs.
func TestHandleRefusesANameRegisteredTwice(t *testing.T) {
	t.Parallel()
	b := setup(t, storeFactories()[0])
	b.handle(t, "charge", func(context.Context, *plait.Task) (any, error) { return "first", nil })
	second := func(context.Context, *plait.Task) (any, error) { return "second", nil }

	err := b.s.Handle("charge", second)
	require.ErrorIs(t, err, plait.ErrDuplicateHandler)
	require.EqualError(t, err, `plait: duplicate handler "charge": a handler of that name is already registered`)
	err = b.s.HandleWith("charge", second, plait.Recover())
	require.ErrorIs(t, err, plait.ErrDuplicateHandler, "HandleWith refuses it too")
	require.ErrorIs(t, b.s.Handle("bad name", second), plait.ErrInvalidID, "a bad name is still told as such")

	b.start(t)
	final := b.wait(t, b.submit(t, plait.NewWorkflow("pay").Task("c", "charge", nil)).ID)
	got, err := plait.ResultValue[string](final, "c", nil)
	require.NoError(t, err)
	require.Equal(t, "first", got, "the refused registration replaced nothing")
}
