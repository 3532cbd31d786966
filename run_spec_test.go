package plait_test

import (
	"context"
	"fmt"
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
	_, err = admin.RunSpecGet(ctx, submitted.ID, plait.RunSpecPart(9))
	require.ErrorIs(t, err, plait.ErrInvalidArgument, "an unknown part is refused")
	_, err = admin.RunSpecGet(ctx, "")
	require.ErrorIs(t, err, plait.ErrInvalidArgument, "no run id is refused")
}

// A run submitted elsewhere, drawn from what the store answers: its
// definition and its state.
func ExampleScheduler_RunSpecGet() {
	ctx := context.Background()
	st, _ := memstore.New()
	submitter, _ := plait.New(st, plait.WithRemoteHandlers())
	run, _ := submitter.Submit(ctx, plait.NewWorkflow("report").
		Task("fetch", "fetch", nil).
		Task("report", "report", nil, plait.After("fetch")).
		Task("cleanup", "cleanup", nil, plait.AfterFailure("report")))

	console, _ := plait.New(st)
	def, err := console.RunSpecGet(ctx, run.ID)
	if err != nil {
		panic(err)
	}
	state, err := console.RunGet(ctx, run.ID)
	if err != nil {
		panic(err)
	}
	chart, err := plait.RenderMermaid(def.Spec, state)
	if err != nil {
		panic(err)
	}
	fmt.Print(chart)
	// Output:
	// flowchart TD
	//   %% run 1: pending
	//   t0["fetch<br/>ready"]:::ready
	//   t1["report<br/>pending"]:::pending
	//   t2["cleanup<br/>pending"]:::pending
	//   t0 --> t1
	//   t1 -->|on failure| t2
	//   classDef pending fill:#eeeeee,stroke:#9e9e9e
	//   classDef ready fill:#e3f2fd,stroke:#1e88e5
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
