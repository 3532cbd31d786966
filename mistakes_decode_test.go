package plait_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
)

// order is what the handlers of these tests expect to decode.
type order struct{ ID int }

// TestDecodeIntoTheWrongTypeFailsAtOnce: a payload, a parent's result or
// a run's result decoded into the wrong type answers a *DecodeError that
// names the task, the parent and the Go type, matching ErrDecode and
// wrapped with Permanent, so the attempt fails at once; so does a task
// without a payload, and a Typed handler taking a pointer never sees nil.
// On every backend.
func TestDecodeIntoTheWrongTypeFailsAtOnce(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		b := setup(t, f)
		var seen sync.Map // "task/what" -> the error the handler saw
		keep := func(task *plait.Task, what string, err error) error {
			seen.Store(task.Name+"/"+what, err)
			return err
		}
		b.handle(t, "text", func(context.Context, *plait.Task) (any, error) { return "not an order", nil })
		b.handle(t, "decode", func(_ context.Context, task *plait.Task) (any, error) {
			var o order
			err := keep(task, "payload", task.Decode(&o))
			var nilOrder *order
			keep(task, "nil pointer", task.Decode(nilOrder))
			_, perr := plait.ParentValue[order](task, "make")
			keep(task, "parent", perr)
			return nil, err
		})
		b.handle(t, "typed", plait.Typed(func(_ context.Context, task *plait.Task, in order) (int, error) {
			return in.ID, nil
		}))
		b.handle(t, "pointer", plait.Typed(func(_ context.Context, task *plait.Task, in *order) (int, error) {
			return in.ID, nil // a nil in would panic here
		}))
		wf := plait.NewWorkflow("decode").
			Task("make", "text", nil).
			Task("charge", "decode", "a string", plait.After("make")).
			Task("empty", "decode", nil, plait.After("make")).
			Task("typed", "typed", []int{1}).
			Task("pointer", "pointer", nil).
			Task("null", "pointer", (*order)(nil))
		run := b.submit(t, wf)
		b.start(t)
		for _, task := range []string{"charge", "empty", "typed", "pointer", "null"} {
			e := b.events.waitFor(t, 1, func(e plait.Event) bool {
				return e.Task == task && (e.Type == plait.EventTaskFailed || e.Type == plait.EventTaskRetrying)
			})
			require.Equal(t, plait.EventTaskFailed, e.Type, "task %s fails at its first attempt: %v", task, e.Err)
			require.Contains(t, e.Err.Error(), fmt.Sprintf("plait: task %q: decode payload", task))
		}
		final := b.wait(t, run.ID)

		decodeErr := func(key string) *plait.DecodeError {
			v, ok := seen.Load(key)
			require.True(t, ok, key)
			err, _ := v.(error)
			require.ErrorIs(t, err, plait.ErrDecode, key)
			require.True(t, plait.IsPermanent(err), "%s: a decode error is not retried", key)
			var de *plait.DecodeError
			require.ErrorAs(t, err, &de, key)
			return de
		}
		de := decodeErr("charge/payload")
		require.Equal(t, plait.DecodeError{Task: "charge", Type: "plait_test.order", Err: de.Err}, *de)
		var typeErr *json.UnmarshalTypeError
		require.ErrorAs(t, de, &typeErr, "the codec's error is wrapped")
		require.EqualError(t, de, `plait: task "charge": decode payload into plait_test.order: json: cannot unmarshal string into Go value of type plait_test.order`)
		require.Equal(t, de.Error(), final.Task("charge").Error)
		require.Equal(t, "plait_test.order", decodeErr("charge/nil pointer").Type)
		de = decodeErr("charge/parent")
		require.Equal(t, [4]any{"charge", "make", true, "plait_test.order"}, [4]any{de.Task, de.Parent, de.Result, de.Type})
		require.Contains(t, de.Error(), `plait: task "charge": decode the result of parent "make" into plait_test.order: json: cannot unmarshal string`)
		require.EqualError(t, decodeErr("empty/payload"), `plait: task "empty": decode payload into plait_test.order: the task has no payload`)
		require.Contains(t, final.Task("typed").Error, `plait: task "typed": decode payload into plait_test.order: json: cannot unmarshal array`)
		require.Equal(t, `plait: task "pointer": decode payload into *plait_test.order: the task has no payload`, final.Task("pointer").Error)
		require.Equal(t, `plait: task "null": decode payload into *plait_test.order: the payload is null`, final.Task("null").Error)

		_, err := plait.ResultValue[order](final, "make", nil)
		require.ErrorIs(t, err, plait.ErrDecode)
		require.EqualError(t, err, `plait: task "make": decode the result into plait_test.order: json: cannot unmarshal string into Go value of type plait_test.order`)
	})
}

// TestDecodeOnATaskBuiltByHand: a handler's unit test sees the same errors.
func TestDecodeOnATaskBuiltByHand(t *testing.T) {
	t.Parallel()
	var o order
	err := (&plait.Task{Name: "unit", Payload: []byte(`"x"`)}).Decode(&o)
	require.ErrorIs(t, err, plait.ErrDecode)
	require.True(t, plait.IsPermanent(err))
	var de *plait.DecodeError
	require.True(t, errors.As(err, &de))
	require.Equal(t, "unit", de.Task)
	require.ErrorIs(t, (&plait.Task{Name: "unit"}).Decode(&o), plait.ErrDecode, "no payload")
	require.NoError(t, (&plait.Task{Name: "unit", Payload: []byte(`{"ID":7}`)}).Decode(&o))
	require.Equal(t, 7, o.ID)
}
