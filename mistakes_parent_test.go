package plait_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

// TestParentValueOfANameThatIsNotAParent: asking for the result of a task
// that is not a parent fails the attempt at once with a *ParentError that
// names the name asked for and the task's parents; a real parent without a
// result keeps its own error. A task claimed with its parents knows them
// all; a wide join, claimed without them, tells a name the run lacks and a
// task that succeeded without being its parent, and lists the parents that
// succeeded. On every backend.
func TestParentValueOfANameThatIsNotAParent(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f, plait.WithInlineResults(2))
		var got sync.Map // "task/name" -> the error ParentValue answered
		b.handle(t, "leaf", func(_ context.Context, task *plait.Task) (any, error) { return task.Name, nil })
		b.handle(t, "empty", noop)
		b.handle(t, "fail", func(context.Context, *plait.Task) (any, error) {
			return nil, plait.Permanent(errors.New("boom"))
		})
		b.handle(t, "ask", func(_ context.Context, task *plait.Task) (any, error) {
			for _, name := range []string{"a", "validat", "g", "bad", "quiet", "later", "bad name!"} {
				_, err := plait.ParentValue[string](task, name)
				got.Store(task.Name+"/"+name, err)
			}
			return plait.ParentValue[string](task, "validat")
		})
		wide := []plait.TaskOption{plait.After("a"), plait.AfterCompletion("quiet", "bad")}
		wf := plait.NewWorkflow("mistakes").
			Task("g", "leaf", nil).
			Task("a", "leaf", nil, plait.After("g")).
			Task("quiet", "empty", nil).
			Task("bad", "fail", nil)
		for i := 0; i < 10; i++ {
			wf.Task(fmt.Sprintf("p%d", i), "leaf", nil)
			wide = append(wide, plait.After(fmt.Sprintf("p%d", i)))
		}
		wf.Task("small", "ask", nil, plait.After("a"), plait.AfterCompletion("bad")).
			Task("wide", "ask", nil, wide...).
			Task("later", "leaf", nil, plait.AfterCompletion("small", "wide"))
		b.start(t)
		final := b.wait(t, b.submit(t, wf).ID)

		errOf := func(task, name string) error {
			v, ok := got.Load(task + "/" + name)
			require.True(t, ok, "task %s asked for %s", task, name)
			err, _ := v.(error)
			return err
		}
		notAParent := func(task, name string) *plait.ParentError {
			err := errOf(task, name)
			require.ErrorIs(t, err, plait.ErrNotAParent, "%s asked for %s", task, name)
			require.True(t, plait.IsPermanent(err), "a name that is not a parent is not retried")
			var pe *plait.ParentError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, [2]string{task, name}, [2]string{pe.Task, pe.Parent})
			return pe
		}
		noResult := func(task, name string) {
			err := errOf(task, name)
			require.Error(t, err, "%s asked for %s", task, name)
			require.NotErrorIs(t, err, plait.ErrNotAParent, "%s is a parent of %s, or cannot be told from one", name, task)
			require.Contains(t, err.Error(), fmt.Sprintf("has no result from parent %q", name))
		}
		for _, task := range []string{"small", "wide"} {
			require.NoError(t, errOf(task, "a"), "a real parent with a result")
			noResult(task, "bad")
			notAParent(task, "g")
			notAParent(task, "bad name!")
			require.Equal(t, plait.TaskFailed, final.Task(task).Status)
			require.Equal(t, 1, final.Task(task).Attempt, "failed at its first attempt")
		}

		pe := notAParent("small", "validat")
		require.Equal(t, []string{"a", "bad"}, pe.Parents, "a task claimed with its parents lists them all")
		require.EqualError(t, pe, `plait: task "small" has no parent "validat"; its parents: "a", "bad"`)
		require.Equal(t, pe.Error(), final.Task("small").Error)
		notAParent("small", "quiet")
		notAParent("small", "later")

		pe = notAParent("wide", "validat")
		require.Len(t, pe.Parents, 12, "a wide join lists the parents that succeeded")
		require.True(t, pe.Deferred)
		require.EqualError(t, pe, `plait: task "wide" has no parent "validat"; its parents that succeeded: `+
			`"a", "p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8" and 2 more`)
		noResult("wide", "quiet")
		// A task of the run that has not succeeded cannot be told from a
		// parent without a result by a task claimed without its parents.
		noResult("wide", "later")
	})
}

// TestParentResultOfATaskBuiltByHand: a Task built in a handler's unit
// test has no parents, and says so.
func TestParentResultOfATaskBuiltByHand(t *testing.T) {
	t.Parallel()
	var v int
	err := (&plait.Task{Name: "unit"}).ParentResult("validate", &v)
	require.ErrorIs(t, err, plait.ErrNotAParent)
	require.EqualError(t, err, `plait: task "unit" has no parent "validate"; it has no parents`)
}
