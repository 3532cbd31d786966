package plait_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store/memstore"
)

// TestRenderAFetchedRun: a run stored by one process is drawn by another
// from what the store answers, its definition (RunSpecGet) and its state
// (RunGet), the same chart its workflow draws; a nil spec is refused with
// ErrNoSpec, which is an ErrInvalidArgument, not a panic.
func TestRenderAFetchedRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fakeclock.New(epoch)
	st := newMemStore(t, memstore.WithClock(clk))
	s, err := plait.New(st, plait.WithClock(clk), plait.WithRemoteHandlers())
	require.NoError(t, err)
	wf := renderWorkflow()
	submitted, err := s.Submit(ctx, wf)
	require.NoError(t, err)

	admin, err := plait.New(st, plait.WithClock(clk))
	require.NoError(t, err)
	spec, err := admin.RunSpecGet(ctx, submitted.ID)
	require.NoError(t, err)
	run, err := admin.RunGet(ctx, submitted.ID)
	require.NoError(t, err)
	chart, err := plait.RenderMermaid(spec.Spec, run)
	require.NoError(t, err)
	require.Equal(t, wf.Mermaid(run), chart, "the stored definition draws as the workflow does")
	require.Contains(t, chart, `t3 -->|on failure| t4`)
	require.Contains(t, chart, `t0["fetch<br/>ready"]:::ready`)
	dot, err := plait.RenderDOT(spec.Spec, run)
	require.NoError(t, err)
	require.Equal(t, wf.DOT(run), dot)

	for name, render := range map[string]func(*plait.WorkflowSpec, *plait.Run) (string, error){
		"RenderMermaid": plait.RenderMermaid, "RenderDOT": plait.RenderDOT,
	} {
		out, err := render(nil, run)
		require.ErrorIs(t, err, plait.ErrNoSpec, name)
		require.ErrorIs(t, err, plait.ErrInvalidArgument, name)
		require.Empty(t, out, name)
	}

	_, err = admin.RunSpecGet(ctx, "1-nosuchrun")
	require.ErrorIs(t, err, plait.ErrNotFound)
}

// TestRunSpecGetReadsPayloadsAndResultsWhenAsked: the parts asked for are
// read, the others are not; a store without RunSpecStore answers
// ErrUnsupported.
func TestRunSpecGetReadsPayloadsAndResultsWhenAsked(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		ctx := context.Background()
		clk := fakeclock.New(epoch)
		s, err := plait.New(f.new(t, clk), plait.WithClock(clk), plait.WithRemoteHandlers())
		require.NoError(t, err)
		wf := plait.NewWorkflow("wf").
			Task("a", "echo", map[string]int{"n": 1}, plait.OnQueue("mail"), plait.Timeout(time.Minute)).
			Task("b", "echo", nil, plait.AfterFailure("a"))
		r, err := s.Submit(ctx, wf)
		require.NoError(t, err)
		got, err := s.RunSpecGet(ctx, r.ID)
		require.NoError(t, err)
		require.Equal(t, "wf", got.Spec.Name)
		require.Len(t, got.Spec.Tasks, 2)
		a := got.Spec.Tasks[0]
		require.Equal(t, "mail", a.Queue)
		require.Equal(t, time.Minute, a.Timeout)
		require.Nil(t, a.Payload, "no payload unless asked for")
		require.Nil(t, got.Results)
		require.Equal(t, []plait.Dep{{Task: "a", On: plait.OnFailure}}, got.Spec.Tasks[1].Deps)

		got, err = s.RunSpecGet(ctx, r.ID, plait.RunSpecPayloads, plait.RunSpecResults)
		require.NoError(t, err)
		require.JSONEq(t, `{"n":1}`, string(got.Spec.Tasks[0].Payload))
		require.NotNil(t, got.Results)
		require.Empty(t, got.Results, "nothing succeeded yet")
	})
	s, err := plait.New(coreOnly{newMemStore(t)})
	require.NoError(t, err)
	_, err = s.RunSpecGet(context.Background(), "1")
	require.ErrorIs(t, err, plait.ErrUnsupported)
}
