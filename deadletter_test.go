package plait_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

func TestSchedulerAnswersUnsupportedDeadLetters(t *testing.T) {
	t.Parallel()
	s, err := plait.New(coreOnly{newMemStore(t)})
	require.NoError(t, err)
	_, err = s.DeadLetterList(context.Background(), plait.DeadLetterListParams{})
	var ue *plait.UnsupportedError
	require.True(t, errors.As(err, &ue))
	require.Equal(t, "DeadLetterStore", ue.Capability)
	_, err = s.DeadLetterPurge(context.Background(), plait.DeadLetterRef{RunID: "1", Task: "a"})
	require.ErrorIs(t, err, plait.ErrUnsupported)
	_, err = s.DeadLetterGet(context.Background(), "1", "a")
	require.ErrorIs(t, err, plait.ErrUnsupported)
}

func TestSchedulerListsInspectsAndPurgesDeadLetters(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		b.handle(t, "ok", noop)
		b.handle(t, "bad", func(ctx context.Context, t *plait.Task) (any, error) {
			return nil, plait.Permanent(errors.New("broken input"))
		})
		long := strings.Repeat("an input long enough to be kept apart ", 3)
		run := b.submit(t, plait.NewWorkflow("dl").Task("a", "ok", nil).Task("b", "bad", long))
		b.start(t)
		b.wait(t, run.ID)

		page, err := b.s.DeadLetterList(context.Background(), plait.DeadLetterListParams{Workflow: "dl"})
		require.NoError(t, err)
		require.Len(t, page.Letters, 1)
		l := page.Letters[0]
		require.Equal(t, [...]any{run.ID, "b", "dl", plait.TaskFailed}, [...]any{l.RunID, l.Task, l.Workflow, l.Status})
		require.Contains(t, l.Error, "broken input")

		ti, err := b.s.DeadLetterGet(context.Background(), run.ID, "b")
		require.NoError(t, err)
		require.Len(t, ti.Attempts, 1)
		require.Equal(t, "failed", ti.Attempts[0].Outcome)
		var payload string
		require.NoError(t, plait.JSONCodec{}.Unmarshal(ti.Payload, &payload))
		require.Equal(t, long, payload, "inspect shows the payload the task was submitted with")
		_, err = b.s.DeadLetterGet(context.Background(), run.ID, "a")
		require.ErrorIs(t, err, plait.ErrNotFound, "a task that succeeded is no dead letter")

		n, err := b.s.DeadLetterPurge(context.Background(), plait.DeadLetterRef{RunID: run.ID, Task: "b"})
		require.NoError(t, err)
		require.Equal(t, 1, n)
		page, err = b.s.DeadLetterList(context.Background(), plait.DeadLetterListParams{})
		require.NoError(t, err)
		require.Empty(t, page.Letters)
	})
}
