package plait_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

func TestSchedulerAnswersUnsupportedHistory(t *testing.T) {
	t.Parallel()
	s, err := plait.New(coreOnly{newMemStore(t)})
	require.NoError(t, err)
	_, err = s.RunHistory(context.Background(), "1-a")
	var ue *plait.UnsupportedError
	require.True(t, errors.As(err, &ue))
	require.Equal(t, "HistoryStore", ue.Capability)
	_, err = s.TaskHistory(context.Background(), "1-a", "x")
	require.ErrorIs(t, err, plait.ErrUnsupported)
}

func TestSchedulerReadsAttemptHistory(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		b.handle(t, "ok", noop)
		b.handle(t, "bad", func(ctx context.Context, t *plait.Task) (any, error) {
			return nil, plait.Permanent(errors.New("broken"))
		})
		run := b.submit(t, plait.NewWorkflow("h").Task("a", "ok", nil).Task("b", "bad", nil))
		b.start(t)
		b.wait(t, run.ID)

		all, err := b.s.RunHistory(context.Background(), run.ID)
		require.NoError(t, err)
		require.Len(t, all, 2)
		require.Equal(t, "a", all[0].Task)
		require.Len(t, all[0].Attempts, 1)
		require.Equal(t, "succeeded", all[0].Attempts[0].Outcome)
		require.Equal(t, "w1", all[0].Attempts[0].Worker)

		bh, err := b.s.TaskHistory(context.Background(), run.ID, "b")
		require.NoError(t, err)
		require.Len(t, bh, 1)
		require.Equal(t, "failed", bh[0].Outcome)
		require.Contains(t, bh[0].Error, "broken")

		_, err = b.s.TaskHistory(context.Background(), run.ID, "zz")
		require.ErrorIs(t, err, plait.ErrNotFound)
		_, err = b.s.TaskHistory(context.Background(), run.ID, "")
		require.ErrorIs(t, err, plait.ErrInvalidArgument)
	})
}
