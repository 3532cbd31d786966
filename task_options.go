package plait

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// TaskOption configures one task of a [Workflow]. Options are sugar over
// [TaskSpec] fields; each prints itself as written.
type TaskOption interface {
	applyTask(*TaskSpec) error
	String() string
}

// WorkflowOption configures a [Workflow].
type WorkflowOption interface {
	applyWorkflow(*Workflow) error
	String() string
}

type taskOption struct {
	text  string
	apply func(*TaskSpec) error
}

func (o taskOption) applyTask(t *TaskSpec) error { return o.apply(t) }
func (o taskOption) String() string              { return o.text }

type workflowOption struct {
	text  string
	apply func(*Workflow) error
}

func (o workflowOption) applyWorkflow(w *Workflow) error { return o.apply(w) }
func (o workflowOption) String() string                  { return o.text }

// OnError sets the workflow's error strategy. Defaults to StrategyContinue.
func OnError(s ErrorStrategy) WorkflowOption {
	return workflowOption{"OnError(" + quote(string(s)) + ")", func(w *Workflow) error {
		switch s {
		case StrategyContinue, StrategyStop, StrategySkip:
			w.strategy = s
			return nil
		}
		return errors.New("unknown error strategy " + quote(string(s)))
	}}
}

func depsOption(fn string, on Condition, tasks []string) TaskOption {
	tasks = append([]string(nil), tasks...) // the option prints what it applies
	return taskOption{fmt.Sprintf("%s(%s)", fn, quoteAll(tasks)), func(t *TaskSpec) error {
		if len(tasks) == 0 {
			return errors.New("no task named")
		}
		for _, name := range tasks {
			t.Deps = append(t.Deps, Dep{Task: name, On: on})
		}
		return nil
	}}
}

// After makes the task depend on each named task succeeding.
func After(tasks ...string) TaskOption { return depsOption("After", OnSuccess, tasks) }

// AfterCompletion makes the task depend on each named task finishing,
// whatever its outcome.
func AfterCompletion(tasks ...string) TaskOption {
	return depsOption("AfterCompletion", OnCompletion, tasks)
}

// AfterFailure makes the task depend on each named task failing: a cleanup
// or compensation step. It runs under [StrategyContinue] only: under
// [StrategySkip] a failed parent counts as skipped, so an AfterFailure
// dependent never runs and is skipped too, and under [StrategyStop] it is
// cancelled with the rest of the run. Use [AfterCompletion] for a step that
// must run whatever happened.
func AfterFailure(tasks ...string) TaskOption {
	return depsOption("AfterFailure", OnFailure, tasks)
}

// AnyOf makes the task start as soon as one of its dependencies is
// satisfied, instead of all of them.
func AnyOf() TaskOption {
	return taskOption{"AnyOf()", func(t *TaskSpec) error { t.Join = JoinAny; return nil }}
}

// Retry allows n retries after the first attempt, so n+1 attempts in all
// (it sets [RetryPolicy].MaxAttempts to n+1). Retry(0) disables retries.
// Without it a task gets MaxAttemptsDefault attempts, or what
// [WithDefaultRetry] says. Negative n is an error.
func Retry(n int) TaskOption {
	return taskOption{fmt.Sprintf("Retry(%d)", n), func(t *TaskSpec) error {
		if n < 0 {
			return errors.New("negative retry count")
		}
		t.Retry.MaxAttempts = n + 1
		return nil
	}}
}

// Backoff sets how long the task waits between attempts. A p.MaxAttempts
// of zero keeps the count an earlier [Retry] set; a non-zero one replaces
// it, counted as attempts in all.
func Backoff(p RetryPolicy) TaskOption {
	return taskOption{fmt.Sprintf("Backoff(%s)", p), func(t *TaskSpec) error {
		if err := p.Validate(); err != nil {
			return err
		}
		attempts := t.Retry.MaxAttempts
		t.Retry = p
		if p.MaxAttempts == 0 {
			t.Retry.MaxAttempts = attempts
		}
		return nil
	}}
}

// MaxElapsed stops retrying once d has passed since the first attempt
// started.
func MaxElapsed(d time.Duration) TaskOption {
	return taskOption{fmt.Sprintf("MaxElapsed(%s)", d), func(t *TaskSpec) error {
		if d < 0 {
			return errors.New("negative duration")
		}
		t.Retry.MaxElapsed = d
		return nil
	}}
}

// Timeout cancels the handler's context once d has passed; the attempt then
// fails with ErrTimeout and may be retried. Zero means no timeout.
func Timeout(d time.Duration) TaskOption {
	return taskOption{fmt.Sprintf("Timeout(%s)", d), func(t *TaskSpec) error {
		if d < 0 {
			return errors.New("negative timeout")
		}
		t.Timeout = d
		return nil
	}}
}

// WithPriority sets the task's priority. Defaults to PriorityNormal.
func WithPriority(p Priority) TaskOption {
	return taskOption{fmt.Sprintf("WithPriority(%s)", p), func(t *TaskSpec) error {
		if !p.Valid() {
			return fmt.Errorf("unknown priority %d", p)
		}
		t.Priority = p
		return nil
	}}
}

// OnQueue puts the task on a named queue; only workers serving that queue
// claim it. Defaults to DefaultQueue.
func OnQueue(name string) TaskOption {
	return taskOption{"OnQueue(" + quote(name) + ")", func(t *TaskSpec) error {
		t.Queue = name
		return nil
	}}
}

// Requires lists capabilities (such as "gpu") a worker node must have to run
// the task.
func Requires(caps ...string) TaskOption {
	caps = append([]string(nil), caps...)
	return taskOption{fmt.Sprintf("Requires(%s)", quoteAll(caps)), func(t *TaskSpec) error {
		t.Requires = append(t.Requires, caps...)
		return nil
	}}
}

// RunAt holds the task until at, on the store's clock.
func RunAt(at time.Time) TaskOption {
	return taskOption{fmt.Sprintf("RunAt(%s)", at.UTC().Format(time.RFC3339Nano)), func(t *TaskSpec) error {
		t.RunAt = at
		return nil
	}}
}

// Delay holds the task until d after the run is created, on the store's
// clock.
func Delay(d time.Duration) TaskOption {
	return taskOption{fmt.Sprintf("Delay(%s)", d), func(t *TaskSpec) error {
		if d < 0 {
			return errors.New("negative delay")
		}
		t.Delay = d
		return nil
	}}
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quote(s)
	}
	return strings.Join(q, ", ")
}
