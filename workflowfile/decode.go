package workflowfile

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/ids"
)

// decoder walks the document's nodes, collecting every problem with its
// position, and remembers where each task and field was so problems the
// validator finds later can be placed too.
type decoder struct {
	file string
	errs []error
	root *yaml.Node
	// tasks holds, per task name, every task of that name in file order:
	// one, unless the name is given twice.
	tasks map[string][]*taskNodes
	// named counts, per task name and category, the validator's problems
	// with that name placed so far (see placeName).
	named map[string]int
}

// taskNodes is where one task's parts are in the file.
type taskNodes struct {
	path   string // "tasks[2]"
	node   *yaml.Node
	fields map[string]*yaml.Node // key node of each field
}

func (d *decoder) err() error { return errors.Join(d.errs...) }

// fail records a problem at node (nil: the top of the file).
func (d *decoder) fail(n *yaml.Node, field string, cat error, reason string) {
	e := &Error{File: d.file, Field: field, Err: cat, Reason: reason}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

// yamlLine finds the line number in a yaml.v3 syntax error's text, the
// only place that library gives it.
var yamlLine = regexp.MustCompile(`line (\d+)`)

// document decodes the whole file into a workflow.
func (d *decoder) document(data []byte) *plait.Workflow {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		e := &Error{File: d.file, Err: ErrSyntax, Reason: strings.TrimPrefix(err.Error(), "yaml: ")}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Column = 1
		}
		d.errs = append(d.errs, e)
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		d.fail(nil, "name", ErrMissingField, "the file is empty")
		return nil
	}
	root := doc.Content[0]
	d.root = root
	fields := d.mapping(root, "", fileFields)
	if fields == nil {
		return nil
	}
	name := d.requiredString(root, fields, "", "name")
	var opts []plait.WorkflowOption
	if n := fields["strategy"]; n != nil {
		if s, ok := d.enum(n, "strategy", []string{string(plait.StrategyContinue), string(plait.StrategyStop), string(plait.StrategySkip)}); ok {
			opts = append(opts, plait.OnError(plait.ErrorStrategy(s)))
		}
	}
	wf := plait.NewWorkflow(name, opts...)
	tasks := fields["tasks"]
	switch {
	case tasks == nil:
		d.fail(root, "tasks", ErrMissingField, "")
	case tasks.Kind != yaml.SequenceNode:
		d.fail(tasks, "tasks", ErrBadValue, "want a list of tasks")
	default:
		d.tasks = make(map[string][]*taskNodes, len(tasks.Content))
		for i, t := range tasks.Content {
			d.task(wf, t, fmt.Sprintf("tasks[%d]", i))
		}
	}
	return wf
}

// mapping checks that n is a mapping whose keys are all in known, each
// once, and returns each key's value node. keys, when given, receives each
// key's own node.
func (d *decoder) mapping(n *yaml.Node, path string, known []string, keys ...map[string]*yaml.Node) map[string]*yaml.Node {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, ErrBadValue, "want a mapping of fields")
		return nil
	}
	out := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := join(path, k.Value)
		switch {
		case k.Kind != yaml.ScalarNode:
			d.fail(k, path, ErrBadValue, "a field name must be a plain string")
		case !contains(known, k.Value):
			d.fail(k, join(path, fieldName(k.Value)), ErrUnknownField, "known fields: "+strings.Join(known, ", "))
		case out[k.Value] != nil:
			d.fail(k, field, ErrBadValue, "the field is given twice")
		default:
			out[k.Value] = deref(v)
			for _, m := range keys {
				m[k.Value] = k
			}
		}
	}
	return out
}

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// fieldName renders a field name the format does not know for a path: as
// it is when it reads like one, quoted (see [ids.Quote]) otherwise.
func fieldName(key string) string {
	if ids.Check(key) == nil {
		return key
	}
	return ids.Quote(key)
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scalar answers n's text when it is a plain value (not null, a list or a
// mapping).
func (d *decoder) scalar(n *yaml.Node, field, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.fail(n, field, ErrBadValue, "want "+want)
		return "", false
	}
	return n.Value, true
}

// requiredString answers the string field key of a mapping, reporting it
// at the mapping when absent.
func (d *decoder) requiredString(at *yaml.Node, fields map[string]*yaml.Node, path, key string) string {
	n := fields[key]
	if n == nil {
		d.fail(at, join(path, key), ErrMissingField, "")
		return ""
	}
	s, _ := d.scalar(n, join(path, key), "a string")
	return s
}

func (d *decoder) enum(n *yaml.Node, field string, values []string) (string, bool) {
	s, ok := d.scalar(n, field, "one of "+strings.Join(values, ", "))
	if !ok {
		return "", false
	}
	if !contains(values, s) {
		d.fail(n, field, ErrBadValue, fmt.Sprintf("%s is not one of %s", ids.Quote(s), strings.Join(values, ", ")))
		return "", false
	}
	return s, true
}

func (d *decoder) duration(n *yaml.Node, field string) (time.Duration, bool) {
	s, ok := d.scalar(n, field, "a duration such as 30s or 5m")
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		d.fail(n, field, ErrBadValue, fmt.Sprintf("%s is not a duration such as 30s or 5m", ids.Quote(s)))
		return 0, false
	}
	return v, true
}

func (d *decoder) integer(n *yaml.Node, field string) (int, bool) {
	s, ok := d.scalar(n, field, "a whole number")
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		d.fail(n, field, ErrBadValue, fmt.Sprintf("%s is not a whole number of at least 0", ids.Quote(s)))
		return 0, false
	}
	return v, true
}

func (d *decoder) number(n *yaml.Node, field string) (float64, bool) {
	s, ok := d.scalar(n, field, "a number")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		d.fail(n, field, ErrBadValue, fmt.Sprintf("%s is not a number", ids.Quote(s)))
		return 0, false
	}
	return v, true
}

func (d *decoder) strings(n *yaml.Node, field string) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		d.fail(n, field, ErrBadValue, "want a list of strings")
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for i, item := range n.Content {
		s, good := d.scalar(deref(item), fmt.Sprintf("%s[%d]", field, i), "a string")
		ok = ok && good
		out = append(out, s)
	}
	return out, ok
}

// placeValidation turns the validator's problems into errors at the
// nodes they concern.
func (d *decoder) placeValidation(err error) {
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			if _, isVE := err.(*plait.ValidationError); !isVE {
				for _, e := range j.Unwrap() {
					walk(e)
				}
				return
			}
		}
		var ve *plait.ValidationError
		if !errors.As(err, &ve) {
			d.errs = append(d.errs, &Error{File: d.file, Err: err})
			return
		}
		n, field := d.root, ve.Field
		if tn := d.taskOf(ve); tn != nil {
			n, field = tn.node, tn.path
			if key, ok := fileField[ve.Field]; ok {
				field = join(tn.path, key)
				if k := tn.fields[key]; k != nil {
					n = k
				}
			}
		}
		e := &Error{File: d.file, Field: field, Err: ve}
		if n != nil {
			e.Line, e.Column = n.Line, n.Column
		}
		d.errs = append(d.errs, e)
	}
	walk(err)
}

// taskOf answers the task a validator's problem is about, nil for a
// problem of the workflow. A name given twice is reported at its second
// task, the one to rename or remove, and a third time at its third: the
// validator reports one ErrDuplicateTask per task after the first, in file
// order. An invalid name is reported once per task that has it, in the same
// order. Any other problem of a repeated name is placed at its first task.
func (d *decoder) taskOf(ve *plait.ValidationError) *taskNodes {
	all := d.tasks[ve.Task]
	if ve.Task == "" || len(all) == 0 {
		return nil
	}
	skip := -1
	switch {
	case ve.Field == "name" && errors.Is(ve.Err, plait.ErrDuplicateTask):
		skip = 1
	case ve.Field == "name" && errors.Is(ve.Err, plait.ErrInvalidID):
		skip = 0
	}
	if skip < 0 {
		return all[0]
	}
	if d.named == nil {
		d.named = make(map[string]int)
	}
	k := ve.Err.Error() + "\x00" + ve.Task
	i := skip + d.named[k]
	d.named[k]++
	if i >= len(all) {
		i = len(all) - 1
	}
	return all[i]
}

// fileField maps a validator's field names to the file's.
var fileField = map[string]string{
	"name":     "name",
	"deps":     "depends_on",
	"handler":  "handler",
	"queue":    "queue",
	"requires": "requires",
	"payload":  "payload",
	"priority": "priority",
	"retry":    "retry",
	"timing":   "timeout",
	"join":     "join",
}
