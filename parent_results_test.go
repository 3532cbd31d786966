package plait_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

// A join with more parents than WithInlineResults is claimed without their
// results; its handler still reads every one, by name, in one batched
// read, or all at once, on every backend. A small join gets them in its
// claim.
func TestWideJoinReadsItsParentsResultsWhenAsked(t *testing.T) {
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f, plait.WithInlineResults(10))
		var seen sync.Map
		b.handle(t, "leaf", func(ctx context.Context, task *plait.Task) (any, error) {
			n, err := strconv.Atoi(task.Name[1:])
			return n * n, err
		})
		b.handle(t, "join", func(ctx context.Context, task *plait.Task) (any, error) {
			one, err := plait.ParentValue[int](task, "p7")
			if err != nil {
				return nil, err
			}
			all, err := task.ParentResults(ctx)
			if err != nil {
				return nil, err
			}
			named, err := task.ParentResults(ctx, "p3", "p4", "not-a-parent")
			if err != nil {
				return nil, err
			}
			seen.Store(task.Name, fmt.Sprintf("%d %d %d %d", one, len(all), len(named), len(task.Parents())))
			sum := 0
			for name := range all {
				var v int
				if err := task.ParentResult(name, &v); err != nil {
					return nil, err
				}
				sum += v
			}
			return sum, nil
		})
		wf := plait.NewWorkflow("wide")
		var parents []plait.TaskOption
		want := 0
		for i := 0; i < 25; i++ {
			name := "p" + strconv.Itoa(i)
			wf.Task(name, "leaf", nil)
			parents = append(parents, plait.After(name))
			want += i * i
		}
		wf.Task("join", "join", nil, parents...)
		wf.Task("small", "join", nil, plait.After("p7"), plait.After("p3"), plait.After("p4"))
		run := b.submit(t, wf)
		b.start(t)
		final := b.wait(t, run.ID)
		require.Equal(t, plait.RunCompleted, final.Status)
		sum, err := plait.ResultValue[int](final, "join", nil)
		require.NoError(t, err)
		require.Equal(t, want, sum, "the wide join read every parent's result")
		wide, _ := seen.Load("join")
		require.Equal(t, "49 25 2 25", wide, "the wide join: one by name, all, two named, all listed")
		small, _ := seen.Load("small")
		require.Equal(t, "49 3 2 3", small, "the small join, its results in its claim")
		// p7 alone, then the 24 others in one call; nothing more.
		require.Equal(t, int64(2), b.calls.resultReads.Load(), "the wide join read its parents in two calls")
	})
}
