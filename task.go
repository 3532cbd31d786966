package plait

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"

	"github.com/plaitdag/plait/internal/worker"
)

// HandlerFunc runs one attempt of a task. It returns the task's result,
// which is encoded with the scheduler's codec (a [Raw] is stored as it is;
// nil stores no result), or an error: wrap it with [Permanent] to fail the
// task without retrying. The context is cancelled when the task times out,
// its lease is lost, its run is cancelled or the scheduler shuts down;
// context.Cause tells which ([ErrTimeout], [ErrLeaseLost], [ErrRunCancelled],
// [ErrShutdown]).
type HandlerFunc func(ctx context.Context, t *Task) (any, error)

// Task is what a handler sees of the task it runs.
type Task struct {
	// RunID and Name identify the task instance.
	RunID string
	Name  string
	// Handler is the registered handler name.
	Handler string
	// Attempt counts attempts against the retry budget, from 1.
	Attempt int
	// Epoch is this attempt's fencing token: it grows with every claim,
	// including re-runs after a crash.
	Epoch int64
	// Payload is the encoded payload; use Decode to read it.
	Payload []byte

	parents map[string][]byte
	// deps names the task's parents, as its claim carried them; nil for a
	// task claimed without them (lazy) or built by hand.
	deps []string
	// lazy reads the parents' results the claim left out; nil when it
	// carried them (parent_results.go).
	lazy  *lazyParents
	codec Codec
	// exec is the attempt running the task; nil for a Task built by hand.
	exec *worker.Attempt
}

// Decode decodes the task's payload into v with the scheduler's codec. A
// payload that does not decode into v, and a task without a payload,
// answer a [*DecodeError] (matching [ErrDecode]) that names the task and
// v's type, wrapped with [Permanent]: returned as it is, it fails the
// attempt without a retry.
func (t *Task) Decode(v any) error {
	if len(t.Payload) == 0 {
		return Permanent(&DecodeError{Task: t.Name, Type: typeName(v), Err: errNoPayload})
	}
	if err := t.codecOrJSON().Unmarshal(t.Payload, v); err != nil {
		return Permanent(&DecodeError{Task: t.Name, Type: typeName(v), Err: err})
	}
	return nil
}

// Why a decode had nothing to decode.
var (
	errNoPayload   = errors.New("the task has no payload")
	errNullPayload = errors.New("the payload is null")
)

// typeName names the type a decode fills: the one v points to, as %T
// prints it.
func typeName(v any) string {
	if rt := reflect.TypeOf(v); rt != nil && rt.Kind() == reflect.Pointer {
		return rt.Elem().String()
	}
	return fmt.Sprintf("%T", v)
}

// codecOrJSON lets a Task built by hand, in a handler's unit test, decode
// with the default codec instead of panicking.
func (t *Task) codecOrJSON() Codec {
	if t.codec == nil {
		return JSONCodec{}
	}
	return t.codec
}

// ParentResult decodes the result of the parent task named name into v.
// A task claimed without its parents' results (a wide join, see
// [WithInlineResults]) reads this one from the store first.
//
// A name that is not a parent of the task is a mistake in the handler: it
// answers a [*ParentError] (matching [ErrNotAParent]) that names the
// task's parents, wrapped with [Permanent] so the attempt fails without a
// retry. A real parent without a result (it failed, was skipped, or
// succeeded returning nil) answers a plain error, retried as any error is.
// A task claimed without its parents tells a name that is not one when
// the run has no such task or that task succeeded; a task of the run that
// has not succeeded it cannot tell from a parent, and answers the plain
// error.
func (t *Task) ParentResult(name string, v any) error {
	b, ok, err := t.parentRaw(name)
	if err != nil {
		return err
	}
	if !ok {
		if pe := t.notAParent(name); pe != nil {
			return Permanent(pe)
		}
	}
	if len(b) == 0 {
		return fmt.Errorf("plait: task %s has no result from parent %s", quote(t.Name), quote(name))
	}
	if err := t.codecOrJSON().Unmarshal(b, v); err != nil {
		return Permanent(&DecodeError{Task: t.Name, Parent: name, Result: true, Type: typeName(v), Err: err})
	}
	return nil
}

// ParentRaw returns the encoded result of the parent named name, and whether
// it exists. Only parents that succeeded and returned a result have one; a
// name that is not a parent answers false too ([Task.ParentResult] tells
// the two apart). A task claimed without its parents' results reads this
// one from the store first, and answers false when that read fails:
// [Task.ParentResults] returns the error.
func (t *Task) ParentRaw(name string) ([]byte, bool) {
	b, ok, err := t.parentRaw(name)
	return b, ok && err == nil
}

// Parents lists the parents that have a result, sorted. A task claimed
// without its parents' results reads them all first (see
// [Task.ParentResults]); when that read fails it lists those it holds.
func (t *Task) Parents() []string {
	_ = t.fetchParents(t.attemptContext(), nil)
	names := make([]string, 0, len(t.parents))
	for n := range t.parents {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// IdempotencyKey returns "<run>/<task>", stable across retries and crash
// re-runs, for deduplicating side effects downstream. Combine it with Epoch
// to tell attempts apart.
func (t *Task) IdempotencyKey() string { return t.RunID + "/" + t.Name }

// Typed adapts a function with a typed payload and result into a
// [HandlerFunc]: the payload is decoded into In (left zero when the task has
// no payload) and the returned Out is encoded as the result. A payload
// that does not decode into In fails the attempt without a retry (see
// [Task.Decode]).
//
// A pointer In never reaches fn as nil, where the first use of it would
// panic: a task without a payload, or whose payload decodes to nil (an
// encoded null), fails the same way, with a [*DecodeError] that says so.
// Take a value In, or read [Task.Payload], for a payload that may be left
// out.
func Typed[In, Out any](fn func(ctx context.Context, t *Task, in In) (Out, error)) HandlerFunc {
	pointer := reflect.TypeFor[In]().Kind() == reflect.Pointer
	return func(ctx context.Context, t *Task) (any, error) {
		var in In
		if len(t.Payload) > 0 {
			if err := t.Decode(&in); err != nil {
				return nil, err
			}
		}
		if pointer && reflect.ValueOf(&in).Elem().IsNil() {
			why := errNoPayload
			if len(t.Payload) > 0 {
				why = errNullPayload
			}
			return nil, Permanent(&DecodeError{Task: t.Name, Type: typeName(&in), Err: why})
		}
		return fn(ctx, t, in)
	}
}

// ParentValue decodes the result of parent name into a value of type T. A
// name that is not a parent of the task fails the attempt without a retry:
// see [Task.ParentResult].
func ParentValue[T any](t *Task, name string) (T, error) {
	var v T
	err := t.ParentResult(name, &v)
	return v, err
}

// ResultValue decodes the result of the named task of a finished run into a
// value of type T, with codec (nil means JSONCodec). A result that does
// not decode into T answers a [*DecodeError] (matching [ErrDecode]) that
// names the task and T.
func ResultValue[T any](run *Run, task string, codec Codec) (T, error) {
	var v T
	if run == nil {
		return v, fmt.Errorf("%w: ResultValue of task %s got a nil run", ErrInvalidArgument, quote(task))
	}
	ti := run.Task(task)
	if ti == nil {
		return v, fmt.Errorf("plait: run %s has no task %s: %w", quote(run.ID), quote(task), ErrNotFound)
	}
	if len(ti.Result) == 0 {
		return v, fmt.Errorf("plait: task %s of run %s has no result", quote(task), quote(run.ID))
	}
	if codec == nil {
		codec = JSONCodec{}
	}
	if err := codec.Unmarshal(ti.Result, &v); err != nil {
		return v, Permanent(&DecodeError{Task: task, Result: true, Type: typeName(&v), Err: err})
	}
	return v, nil
}

// Logger returns the logger of this attempt: its lines carry the run, the
// task, the attempt and its epoch, so a handler's logs can be told apart
// from every other attempt's. They go to the Scheduler's logger and, when
// the store implements [TaskLogStore], are also kept with the attempt in
// the store (see [Scheduler.TaskLogRead]): buffered here and sent in one
// append per WithTaskLogFlush interval and when the attempt ends, never one
// round trip per line. A Task built by hand, in a handler's unit test, logs
// to slog.Default.
func (t *Task) Logger() *slog.Logger {
	if t.exec != nil {
		return t.exec.Logger()
	}
	return slog.Default().With("run", t.RunID, "task", t.Name, "attempt", t.Attempt, "epoch", t.Epoch)
}
