package plait

import (
	"errors"
	"fmt"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// Workflow is a DAG definition under construction. Build one with
// [NewWorkflow] and chained [Workflow.Task] calls; problems are collected and
// reported by [Workflow.Validate] and by Submit, before anything is written.
type Workflow struct {
	name     string
	strategy ErrorStrategy
	tasks    []draftTask
	errs     []error
}

type draftTask struct {
	spec    TaskSpec
	payload any
}

// NewWorkflow starts a workflow definition named name.
func NewWorkflow(name string, opts ...WorkflowOption) *Workflow {
	w := &Workflow{name: name, strategy: StrategyContinue}
	for _, o := range opts {
		if err := o.applyWorkflow(w); err != nil {
			w.errs = append(w.errs, &ValidationError{Workflow: name, Field: "option " + o.String(), Err: ErrInvalidTaskOption, Reason: err.Error()})
		}
	}
	return w
}

// Name returns the workflow's name.
func (w *Workflow) Name() string { return w.name }

// Task adds a task named name that runs the handler registered as handler.
// payload is encoded with the scheduler's codec at submit time; pass a [Raw]
// to store bytes as they are, or nil for no payload.
func (w *Workflow) Task(name, handler string, payload any, opts ...TaskOption) *Workflow {
	d := draftTask{spec: TaskSpec{Name: name, Handler: handler, Queue: DefaultQueue, Priority: PriorityNormal}, payload: payload}
	for _, o := range opts {
		if err := o.applyTask(&d.spec); err != nil {
			w.errs = append(w.errs, &ValidationError{Workflow: w.name, Task: name, Field: "option " + o.String(), Err: ErrInvalidTaskOption, Reason: err.Error()})
		}
	}
	w.tasks = append(w.tasks, d)
	return w
}

// Spec encodes payloads with codec and returns the workflow as data, with
// every validation problem joined into the error.
func (w *Workflow) Spec(codec Codec, limits Limits) (*WorkflowSpec, error) {
	if codec == nil {
		codec = JSONCodec{}
	}
	spec := &WorkflowSpec{Name: w.name, Strategy: w.strategy, Tasks: make([]TaskSpec, len(w.tasks))}
	errs := append([]error(nil), w.errs...)
	for i, d := range w.tasks {
		spec.Tasks[i] = d.spec
		if d.payload == nil {
			continue
		}
		b, err := encodeValue(codec, d.payload)
		if err != nil {
			errs = append(errs, &ValidationError{Workflow: w.name, Task: d.spec.Name, Field: "payload", Err: ErrInvalidTaskOption, Reason: err.Error()})
			continue
		}
		spec.Tasks[i].Payload = b
	}
	if err := ValidateSpec(spec, limits); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return spec, nil
}

// Validate checks the workflow with the default codec and limits.
func (w *Workflow) Validate() error {
	_, err := w.Spec(JSONCodec{}, Limits{})
	return err
}

// Limits caps what one workflow may hold. A zero field takes its default.
// [WithLimits] refuses a negative field; [Workflow.Spec] and [ValidateSpec],
// which take Limits directly, treat one as zero.
type Limits struct {
	// MaxTasks is the most tasks per workflow. Defaults to MaxTasksDefault.
	MaxTasks int
	// MaxDeps is the most dependencies one task may have (fan-in).
	// Defaults to MaxDepsDefault.
	MaxDeps int
	// MaxPayloadBytes is the largest encoded payload. Defaults to
	// MaxPayloadBytesDefault.
	MaxPayloadBytes int
}

// Limit defaults.
const (
	MaxTasksDefault        = 10000
	MaxDepsDefault         = 10000
	MaxPayloadBytesDefault = 1 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxTasks <= 0 {
		l.MaxTasks = MaxTasksDefault
	}
	if l.MaxDeps <= 0 {
		l.MaxDeps = MaxDepsDefault
	}
	if l.MaxPayloadBytes <= 0 {
		l.MaxPayloadBytes = MaxPayloadBytesDefault
	}
	return l
}

// ValidateSpec checks a workflow definition and returns every problem found,
// joined, each a [*ValidationError]. It never panics on hostile input.
func ValidateSpec(spec *WorkflowSpec, limits Limits) error {
	limits = limits.withDefaults()
	var errs []error
	bad := func(task, field string, cat error, reason string) {
		errs = append(errs, &ValidationError{Workflow: spec.Name, Task: task, Field: field, Err: cat, Reason: reason})
	}
	if err := ids.Check(spec.Name); err != nil {
		bad("", "name", ErrInvalidID, err.Error())
	}
	switch spec.Strategy {
	case StrategyContinue, StrategyStop, StrategySkip:
	default:
		bad("", "strategy", ErrInvalidTaskOption, "unknown error strategy "+quote(string(spec.Strategy)))
	}
	if len(spec.Tasks) == 0 {
		bad("", "tasks", ErrEmptyWorkflow, "")
	}
	if len(spec.Tasks) > limits.MaxTasks {
		bad("", "tasks", ErrTooManyTasks, fmt.Sprintf("%d tasks, limit %d", len(spec.Tasks), limits.MaxTasks))
		return errors.Join(errs...)
	}
	index := make(map[string]int, len(spec.Tasks))
	for i := range spec.Tasks {
		t := &spec.Tasks[i]
		if err := ids.Check(t.Name); err != nil {
			bad(t.Name, "name", ErrInvalidID, err.Error())
			continue
		}
		if _, dup := index[t.Name]; dup {
			bad(t.Name, "name", ErrDuplicateTask, "")
			continue
		}
		index[t.Name] = i
	}
	for i := range spec.Tasks {
		t := &spec.Tasks[i]
		name := t.Name
		if err := ids.Check(t.Handler); err != nil {
			bad(name, "handler", ErrInvalidID, err.Error())
		}
		if err := ids.Check(t.Queue); err != nil {
			bad(name, "queue", ErrInvalidID, err.Error())
		}
		for _, c := range t.Requires {
			if err := ids.Check(c); err != nil {
				bad(name, "requires", ErrInvalidID, err.Error())
			}
		}
		if err := checkLimits(t.Limits); err != nil {
			bad(name, "limits", ErrInvalidTaskOption, err.Error())
		}
		if n := len(normalCaps(t.Requires)); n > store.MaxCapabilities {
			bad(name, "requires", ErrInvalidTaskOption, fmt.Sprintf("%d capabilities, at most %d", n, store.MaxCapabilities))
		}
		if len(t.Payload) > limits.MaxPayloadBytes {
			bad(name, "payload", ErrPayloadTooLarge, fmt.Sprintf("%d bytes, limit %d", len(t.Payload), limits.MaxPayloadBytes))
		}
		if !t.Priority.Valid() {
			bad(name, "priority", ErrInvalidTaskOption, fmt.Sprintf("unknown priority %d", t.Priority))
		}
		if t.Timeout < 0 || t.Delay < 0 {
			bad(name, "timing", ErrInvalidTaskOption, "negative timeout or delay")
		}
		if err := t.Retry.Validate(); err != nil {
			bad(name, "retry", ErrInvalidTaskOption, err.Error())
		}
		if t.Join != JoinAll && t.Join != JoinAny {
			bad(name, "join", ErrInvalidTaskOption, fmt.Sprintf("unknown join %d", t.Join))
		}
		if len(t.Deps) > limits.MaxDeps {
			bad(name, "deps", ErrTooManyDeps, fmt.Sprintf("%d dependencies, limit %d", len(t.Deps), limits.MaxDeps))
		}
		seen := make(map[string]bool, len(t.Deps))
		for _, d := range t.Deps {
			switch {
			case d.Task == t.Name:
				bad(name, "deps", ErrSelfDep, "")
			case seen[d.Task]:
				bad(name, "deps", ErrDuplicateTask, "dependency "+quote(d.Task)+" listed twice")
			default:
				if _, ok := index[d.Task]; !ok {
					bad(name, "deps", ErrUnknownDep, quote(d.Task))
				}
			}
			seen[d.Task] = true
			if d.On > OnFailure {
				bad(name, "deps", ErrInvalidTaskOption, fmt.Sprintf("unknown condition %d", d.On))
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if cycle := findCycle(spec, index); cycle != nil {
		bad(cycle[0], "deps", ErrCycle, cycleText(cycle))
	}
	return errors.Join(errs...)
}

// TopoOrder returns task indexes so that every task comes after its
// dependencies. The spec must be valid.
func TopoOrder(spec *WorkflowSpec) []int {
	index := make(map[string]int, len(spec.Tasks))
	for i, t := range spec.Tasks {
		index[t.Name] = i
	}
	order, _ := kahn(spec, index)
	return order
}

func kahn(spec *WorkflowSpec, index map[string]int) (order []int, indeg []int) {
	n := len(spec.Tasks)
	indeg = make([]int, n)
	children := make([][]int, n)
	for i, t := range spec.Tasks {
		for _, d := range t.Deps {
			p := index[d.Task]
			children[p] = append(children[p], i)
			indeg[i]++
		}
	}
	deg := append([]int(nil), indeg...)
	queue := make([]int, 0, n)
	for i := range deg {
		if deg[i] == 0 {
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		order = append(order, i)
		for _, c := range children[i] {
			deg[c]--
			if deg[c] == 0 {
				queue = append(queue, c)
			}
		}
	}
	return order, deg
}

// findCycle returns the names along one cycle, first name repeated at the
// end, or nil when the graph is acyclic.
func findCycle(spec *WorkflowSpec, index map[string]int) []string {
	order, deg := kahn(spec, index)
	if len(order) == len(spec.Tasks) {
		return nil
	}
	// Every task left with deg > 0 has a parent also left over; walking
	// parents from one of them must revisit a task, which closes a cycle.
	start := -1
	for i, d := range deg {
		if d > 0 {
			start = i
			break
		}
	}
	pos := map[int]int{}
	var path []int
	for cur := start; ; {
		if p, ok := pos[cur]; ok {
			cyc := path[p:]
			names := make([]string, 0, len(cyc)+1)
			for i := len(cyc) - 1; i >= 0; i-- {
				names = append(names, spec.Tasks[cyc[i]].Name)
			}
			return append(names, names[0])
		}
		pos[cur] = len(path)
		path = append(path, cur)
		next := -1
		for _, d := range spec.Tasks[cur].Deps {
			if p := index[d.Task]; deg[p] > 0 {
				next = p
				break
			}
		}
		cur = next
	}
}

// cycleMaxShown is how many names of a cycle its error message lists: a
// cycle through thousands of tasks would otherwise make a message of
// hundreds of kilobytes.
const cycleMaxShown = 8

// cycleText prints a cycle (first name repeated at the end) as
// "a -> b -> a", eliding the middle of a long one.
func cycleText(cycle []string) string {
	if len(cycle) <= cycleMaxShown+1 {
		return strings.Join(cycle, " -> ")
	}
	head := strings.Join(cycle[:cycleMaxShown-1], " -> ")
	return fmt.Sprintf("%s -> … -> %s (%d tasks)", head, cycle[len(cycle)-1], len(cycle)-1)
}

// A workflow as data, as it is stored with its run, re-exported from
// package store.
type (
	// WorkflowSpec is a validated workflow: see [store.WorkflowSpec].
	WorkflowSpec = store.WorkflowSpec
	// TaskSpec is one task of a WorkflowSpec: see [store.TaskSpec].
	TaskSpec = store.TaskSpec
	// Dep is one dependency edge of a task: see [store.Dep].
	Dep = store.Dep
	// Condition says which outcome of a parent satisfies an edge.
	Condition = store.Condition
	// Join says how a task combines its edges.
	Join = store.Join
	// ErrorStrategy says what a run does when a task fails for good.
	ErrorStrategy = store.ErrorStrategy
)

// Dependency conditions, joins and error strategies; [store.Condition],
// [store.Join] and [store.ErrorStrategy] say what each means.
const (
	OnSuccess        = store.OnSuccess
	OnCompletion     = store.OnCompletion
	OnFailure        = store.OnFailure
	JoinAll          = store.JoinAll
	JoinAny          = store.JoinAny
	StrategyContinue = store.StrategyContinue
	StrategyStop     = store.StrategyStop
	StrategySkip     = store.StrategySkip
)
