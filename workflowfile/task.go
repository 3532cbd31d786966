package workflowfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/cmdtask"
	"github.com/plaitdag/plait/httptask"
	"github.com/plaitdag/plait/internal/ids"
)

// Field names of each part of the format. schema.json lists the same
// names; a test holds the two together.
var (
	fileFields  = []string{"name", "description", "strategy", "tasks"}
	taskFields  = []string{"name", "type", "handler", "command", "http", "payload", "depends_on", "join", "retry", "timeout", "priority", "queue", "requires", "delay"}
	depFields   = []string{"task", "on"}
	retryFields = []string{"retries", "backoff", "initial", "max", "multiplier", "jitter", "max_elapsed"}
	// Enumerations.
	conditions = map[string]plait.Condition{"success": plait.OnSuccess, "completion": plait.OnCompletion, "failure": plait.OnFailure}
	priorities = map[string]plait.Priority{"low": plait.PriorityLow, "normal": plait.PriorityNormal, "high": plait.PriorityHigh, "urgent": plait.PriorityUrgent}
	backoffs   = map[string]plait.BackoffKind{"exponential": plait.BackoffExponential, "constant": plait.BackoffConstant}
	joins      = map[string]bool{"all": false, "any": true}
	// specTypes holds the payload type of each built-in task type; its
	// block's field names are the type's JSON names.
	specTypes = map[string]reflect.Type{
		TypeCommand: reflect.TypeOf(cmdtask.Spec{}),
		TypeHTTP:    reflect.TypeOf(httptask.Spec{}),
	}
)

// task decodes one task and adds it to wf.
func (d *decoder) task(wf *plait.Workflow, n *yaml.Node, path string) {
	keys := map[string]*yaml.Node{}
	fields := d.mapping(n, path, taskFields, keys)
	if fields == nil {
		return
	}
	n = deref(n)
	name := d.requiredString(n, fields, path, "name")
	if name != "" {
		d.tasks[name] = append(d.tasks[name], &taskNodes{path: path, node: n, fields: keys})
	}
	typ := TypeHandler
	if t := fields["type"]; t != nil {
		s, ok := d.scalar(t, join(path, "type"), "a task type")
		if !ok {
			return
		}
		if s != TypeHandler && specTypes[s] == nil {
			d.fail(t, join(path, "type"), ErrUnknownTaskType, fmt.Sprintf("%s; known types: %s", ids.Quote(s), strings.Join(TaskTypes(), ", ")))
			return
		}
		typ = s
	}
	var handler string
	var payload any
	if typ == TypeHandler {
		handler = d.requiredString(n, fields, path, "handler")
		for _, other := range []string{TypeCommand, TypeHTTP} {
			if fields[other] != nil {
				d.fail(keys[other], join(path, other), ErrBadValue, "only a task of type "+other+" has this field")
			}
		}
		if p := fields["payload"]; p != nil {
			payload = d.payload(p, join(path, "payload"))
		}
	} else {
		handler = handlerOf[typ]
		if h := fields["handler"]; h != nil {
			handler, _ = d.scalar(h, join(path, "handler"), "a handler name")
		}
		if fields["payload"] != nil {
			d.fail(keys["payload"], join(path, "payload"), ErrBadValue, "a "+typ+" task's payload is its "+typ+" field")
		}
		block := fields[typ]
		if block == nil {
			d.fail(n, join(path, typ), ErrMissingField, "a task of type "+typ+" needs one")
		} else {
			payload = d.spec(block, join(path, typ), specTypes[typ])
		}
	}
	opts, parents := d.taskOptions(fields, path)
	if block := fields[typ]; block != nil && payload != nil {
		d.checkInputFrom(block, join(path, typ), payload, parents)
	}
	wf.Task(name, handler, payload, opts...)
}

// checkInputFrom reports a stdin_from or body_from that names no
// dependency of the task: its input could never arrive.
func (d *decoder) checkInputFrom(block *yaml.Node, path string, spec any, parents []string) {
	key, from := "", ""
	switch s := spec.(type) {
	case cmdtask.Spec:
		key, from = "stdin_from", s.StdinFrom
	case httptask.Spec:
		key, from = "body_from", s.BodyFrom
	}
	if from == "" || contains(parents, from) {
		return
	}
	at := block
	for i := 0; i+1 < len(block.Content); i += 2 {
		if block.Content[i].Value == key {
			at = block.Content[i+1]
		}
	}
	d.fail(at, join(path, key), ErrBadValue, fmt.Sprintf("%s is not in the task's depends_on", ids.Quote(from)))
}

// payload decodes a free-form payload into plain values the codec can
// encode.
func (d *decoder) payload(n *yaml.Node, field string) any {
	var v any
	if err := n.Decode(&v); err != nil {
		d.fail(n, field, ErrBadValue, err.Error())
		return nil
	}
	if _, err := json.Marshal(v); err != nil {
		d.fail(n, field, ErrBadValue, "not representable as JSON (mapping keys must be strings)")
		return nil
	}
	return v
}

// spec decodes a built-in type's block into its spec struct, checking
// field names at their position and the spec's own rules at the block.
func (d *decoder) spec(n *yaml.Node, field string, typ reflect.Type) any {
	before := len(d.errs)
	if d.mapping(n, field, jsonFields(typ)) == nil || len(d.errs) > before {
		return nil
	}
	v := d.payload(n, field)
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	ptr := reflect.New(typ)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(ptr.Interface()); err != nil {
		// encoding/json may echo a field name or a number of the file.
		d.fail(n, field, ErrBadValue, ids.Cut(err.Error()))
		return nil
	}
	if err := ptr.Interface().(interface{ Validate() error }).Validate(); err != nil {
		for _, e := range unjoin(err) {
			d.fail(n, field, ErrBadValue, e.Error())
		}
		return nil
	}
	return ptr.Elem().Interface()
}

// jsonFields lists a struct's JSON field names.
func jsonFields(typ reflect.Type) []string {
	var names []string
	for i := 0; i < typ.NumField(); i++ {
		tag := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
		if tag != "" && tag != "-" {
			names = append(names, tag)
		}
	}
	return names
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// taskOptions turns the scheduling fields into task options, and lists
// the task's dependencies.
func (d *decoder) taskOptions(fields map[string]*yaml.Node, path string) ([]plait.TaskOption, []string) {
	var opts []plait.TaskOption
	var parents []string
	if n := fields["depends_on"]; n != nil {
		var deps []plait.TaskOption
		deps, parents = d.deps(n, join(path, "depends_on"))
		opts = append(opts, deps...)
	}
	if n := fields["join"]; n != nil {
		if s, ok := d.enum(n, join(path, "join"), []string{"all", "any"}); ok && joins[s] {
			opts = append(opts, plait.AnyOf())
		}
	}
	if n := fields["retry"]; n != nil {
		opts = append(opts, d.retry(n, join(path, "retry"))...)
	}
	if n := fields["timeout"]; n != nil {
		if v, ok := d.duration(n, join(path, "timeout")); ok {
			opts = append(opts, plait.Timeout(v))
		}
	}
	if n := fields["delay"]; n != nil {
		if v, ok := d.duration(n, join(path, "delay")); ok {
			opts = append(opts, plait.Delay(v))
		}
	}
	if n := fields["priority"]; n != nil {
		if s, ok := d.enum(n, join(path, "priority"), []string{"low", "normal", "high", "urgent"}); ok {
			opts = append(opts, plait.WithPriority(priorities[s]))
		}
	}
	if n := fields["queue"]; n != nil {
		if s, ok := d.scalar(n, join(path, "queue"), "a queue name"); ok {
			opts = append(opts, plait.OnQueue(s))
		}
	}
	if n := fields["requires"]; n != nil {
		if caps, ok := d.strings(n, join(path, "requires")); ok && len(caps) > 0 {
			opts = append(opts, plait.Requires(caps...))
		}
	}
	return opts, parents
}

// deps decodes depends_on: each item a task name (on success) or a
// mapping {task, on}. It answers the options and the names.
func (d *decoder) deps(n *yaml.Node, field string) ([]plait.TaskOption, []string) {
	if n.Kind != yaml.SequenceNode {
		d.fail(n, field, ErrBadValue, "want a list of task names or {task, on} mappings")
		return nil, nil
	}
	var names []string
	byCondition := map[plait.Condition][]string{}
	var order []plait.Condition
	for i, item := range n.Content {
		item = deref(item)
		at := fmt.Sprintf("%s[%d]", field, i)
		name, on := "", plait.OnSuccess
		if item.Kind == yaml.MappingNode {
			f := d.mapping(item, at, depFields)
			if f == nil {
				continue
			}
			name = d.requiredString(item, f, at, "task")
			if c := f["on"]; c != nil {
				s, ok := d.enum(c, join(at, "on"), []string{"success", "completion", "failure"})
				if !ok {
					continue
				}
				on = conditions[s]
			}
		} else {
			var ok bool
			if name, ok = d.scalar(item, at, "a task name or a {task, on} mapping"); !ok {
				continue
			}
		}
		if name == "" {
			continue
		}
		if _, seen := byCondition[on]; !seen {
			order = append(order, on)
		}
		byCondition[on] = append(byCondition[on], name)
		names = append(names, name)
	}
	var opts []plait.TaskOption
	for _, on := range order {
		group := byCondition[on]
		switch on {
		case plait.OnCompletion:
			opts = append(opts, plait.AfterCompletion(group...))
		case plait.OnFailure:
			opts = append(opts, plait.AfterFailure(group...))
		default:
			opts = append(opts, plait.After(group...))
		}
	}
	return opts, names
}

// retry decodes retry: a number of retries, or a mapping of the policy.
func (d *decoder) retry(n *yaml.Node, field string) []plait.TaskOption {
	if n.Kind == yaml.ScalarNode {
		if v, ok := d.integer(n, field); ok {
			return []plait.TaskOption{plait.Retry(v)}
		}
		return nil
	}
	f := d.mapping(n, field, retryFields)
	if f == nil {
		return nil
	}
	var p plait.RetryPolicy
	var opts []plait.TaskOption
	good := true
	if v := f["retries"]; v != nil {
		r, ok := d.integer(v, join(field, "retries"))
		good = good && ok
		opts = append(opts, plait.Retry(r))
	}
	if v := f["backoff"]; v != nil {
		s, ok := d.enum(v, join(field, "backoff"), []string{"exponential", "constant"})
		good = good && ok
		p.Backoff = backoffs[s]
	}
	for _, df := range []struct {
		key string
		dst *time.Duration
	}{{"initial", &p.InitialInterval}, {"max", &p.MaxInterval}, {"max_elapsed", &p.MaxElapsed}} {
		if v := f[df.key]; v != nil {
			x, ok := d.duration(v, join(field, df.key))
			good = good && ok
			*df.dst = x
		}
	}
	if v := f["multiplier"]; v != nil {
		x, ok := d.number(v, join(field, "multiplier"))
		good = good && ok
		p.Multiplier = x
	}
	if v := f["jitter"]; v != nil {
		x, ok := d.number(v, join(field, "jitter"))
		good = good && ok
		p.Jitter = x
	}
	if !good {
		return nil
	}
	// Backoff keeps the attempt count Retry set, so it comes after it.
	return append(opts, plait.Backoff(p))
}
