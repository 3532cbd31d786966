// Package workflowfile loads a plait workflow described in a YAML or JSON
// file, so operators can read and change a DAG of commands, HTTP calls and
// Go handlers without touching Go code. It is a package of its own so that
// a host that never loads files does not import a YAML parser.
//
//	name: nightly
//	strategy: continue
//	tasks:
//	  - name: fetch
//	    type: http
//	    http: {url: "https://api.example.com/export"}
//	    retry: {retries: 3, backoff: exponential, initial: 1s}
//	  - name: count
//	    type: command
//	    command: {argv: [wc, -l], stdin_from: fetch}
//	    depends_on: [fetch]
//	    timeout: 30s
//
// A task's type says which handler runs it: "command" ([cmdtask]), "http"
// ([httptask]) or "handler", a Go handler the host registered, named by the
// handler field (the default type). The host registers the handlers; a
// file only names them.
//
// Every problem is reported as an [*Error] naming the field's path and,
// for a problem at a place in the file, its line and column; problems the
// workflow validator finds (cycles, unknown dependencies) too, and a task
// name given twice is reported at its second task, the one to rename. A
// problem of the file as a whole has no place and carries line and column
// 0, so its message names the file with no line: a file larger than
// [MaxFileBytes], an empty file, and a syntax error whose line the YAML
// parser does not give. schema.json, next to this file, is the format's
// JSON Schema, for editors.
package workflowfile

import (
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/cmdtask"
	"github.com/plaitdag/plait/httptask"
)

// MaxFileBytes is the largest file Parse reads: 4 MiB.
const MaxFileBytes = 4 << 20

// Task types a file may name.
const (
	// TypeHandler runs a Go handler the host registered, named by the
	// task's handler field, with the task's payload. It is the default.
	TypeHandler = "handler"
	// TypeCommand runs a program with [cmdtask]; the task's command field
	// is its [cmdtask.Spec].
	TypeCommand = "command"
	// TypeHTTP makes an HTTP call with [httptask]; the task's http field
	// is its [httptask.Spec].
	TypeHTTP = "http"
)

// TaskTypes lists the task types, sorted.
func TaskTypes() []string {
	types := []string{TypeCommand, TypeHandler, TypeHTTP}
	sort.Strings(types)
	return types
}

// Load reads the workflow file at path and parses it (see [Parse]).
func Load(path string) (*plait.Workflow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("workflowfile: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("workflowfile: %w", err)
	}
	return Parse(path, data)
}

// Parse builds the workflow that data, a YAML or JSON document, describes;
// filename names it in errors. It returns every problem found, joined, each
// an [*Error] with the line, column and field (line and column 0 for a
// problem of the whole file, such as data over [MaxFileBytes], refused
// before it is parsed); a workflow it returns has
// passed plait's validation. The host still registers the handlers the
// file names: [cmdtask.HandlerName] for commands, [httptask.HandlerName]
// for HTTP calls, unless a task's handler field names another.
func Parse(filename string, data []byte) (*plait.Workflow, error) {
	if len(data) > MaxFileBytes {
		return nil, &Error{File: filename, Err: ErrTooLarge, Reason: fmt.Sprintf("more than %d bytes", MaxFileBytes)}
	}
	d := &decoder{file: filename}
	wf := d.document(data)
	if err := d.err(); err != nil {
		return nil, err
	}
	if err := wf.Validate(); err != nil {
		d.placeValidation(err)
		return nil, d.err()
	}
	return wf, nil
}

// handlerOf answers the handler a task type runs by default.
var handlerOf = map[string]string{
	TypeCommand: cmdtask.HandlerName,
	TypeHTTP:    httptask.HandlerName,
}
