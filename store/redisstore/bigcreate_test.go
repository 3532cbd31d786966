package redisstore_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
)

// TestCreateManyWithOversizeRun creates 6 runs in one pipeline on a
// redis-server that refuses arguments over 1 MB, the third with a 2 MiB
// payload: that run alone is refused, with store.ErrRejected, before
// anything is sent, and the other 5 are created, those after it too
// (sent, it would have ended the pipeline's connection).
func TestCreateManyWithOversizeRun(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t, 3, []string{"--proto-max-bulk-len", "1mb"})
	var params []*store.RunCreateParams
	for i := range 6 {
		payload := []byte("p")
		if i == 2 {
			payload = bytes.Repeat([]byte("b"), 2<<20)
		}
		params = append(params, &store.RunCreateParams{Workflow: &store.WorkflowSpec{Name: "wf",
			Tasks: []store.TaskSpec{{Name: "t", Handler: "h", Queue: store.DefaultQueue, Payload: payload}}}})
	}
	out, err := e.store.RunCreateMany(context.Background(), params)
	require.NoError(t, err)
	require.Len(t, out, 6)
	for i, o := range out {
		if i == 2 {
			require.ErrorIs(t, o.Err, store.ErrRejected)
			require.ErrorContains(t, o.Err, "over the server's proto-max-bulk-len of 1048576")
			continue
		}
		require.NoError(t, o.Err, "run %d", i)
		run, err := e.store.RunGet(context.Background(), &store.RunGetParams{ID: o.Result.Run.ID})
		require.NoError(t, err, "run %d", i)
		require.Equal(t, store.RunPending, run.Status)
	}
}
