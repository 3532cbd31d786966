package workflowfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/workflowfile"
)

// problems parses src and returns its errors, each an *Error.
func problems(t *testing.T, name, src string) []*workflowfile.Error {
	t.Helper()
	wf, err := workflowfile.Parse(name, []byte(src))
	require.Error(t, err, "the file must be refused")
	require.Nil(t, wf)
	var out []*workflowfile.Error
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *workflowfile.Error
		require.ErrorAs(t, e, &fe, "every problem must be a *workflowfile.Error")
		out = append(out, fe)
	}
	return out
}

func TestFileErrorsPointAtLineColumnAndField(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src    string
		line, column int
		field        string
		is           error
		says         string
	}{
		{
			name: "a missing task name",
			src: `name: wf
tasks:
  - handler: a
  - name: b
    handler: b
`,
			line: 3, column: 5, field: "tasks[0].name", is: workflowfile.ErrMissingField,
		},
		{
			name: "a handler task without its handler",
			src: `name: wf
tasks:
  - name: a
    payload: 1
`,
			line: 3, column: 5, field: "tasks[0].handler", is: workflowfile.ErrMissingField,
		},
		{
			name: "an unknown task type",
			src: `name: wf
tasks:
  - name: a
    type: python
`,
			line: 4, column: 11, field: "tasks[0].type", is: workflowfile.ErrUnknownTaskType, says: `"python"; known types: command, handler, http`,
		},
		{
			name: "a cycle",
			src: `name: wf
tasks:
  - name: a
    handler: h
    depends_on: [c]
  - name: b
    handler: h
    depends_on: [a]
  - name: c
    handler: h
    depends_on: [b]
`,
			line: 8, column: 5, field: "tasks[1].depends_on", is: plait.ErrCycle, says: "b -> c -> a -> b",
		},
		{
			name: "a bad duration",
			src: `name: wf
tasks:
  - name: a
    handler: h
    timeout: 5 parsecs
`,
			line: 5, column: 14, field: "tasks[0].timeout", is: workflowfile.ErrBadValue, says: `"5 parsecs" is not a duration`,
		},
		{
			name: "a bad duration inside retry",
			src: `name: wf
tasks:
  - name: a
    handler: h
    retry: {retries: 2, initial: soon}
`,
			line: 5, column: 34, field: "tasks[0].retry.initial", is: workflowfile.ErrBadValue,
		},
		{
			name: "a misspelt field",
			src: `name: wf
tasks:
  - name: a
    handler: h
    dependson: [b]
`,
			line: 5, column: 5, field: "tasks[0].dependson", is: workflowfile.ErrUnknownField,
		},
		{
			name: "an unknown dependency",
			src: `name: wf
tasks:
  - name: a
    handler: h
    depends_on: [ghost]
`,
			line: 5, column: 5, field: "tasks[0].depends_on", is: plait.ErrUnknownDep,
		},
		{
			name: "a command without argv or shell",
			src: `name: wf
tasks:
  - name: a
    type: command
    command: {dir: /tmp}
`,
			line: 5, column: 14, field: "tasks[0].command", is: workflowfile.ErrBadValue, says: "neither argv nor shell",
		},
		{
			name: "a command task without its command",
			src: `name: wf
tasks:
  - name: a
    type: command
`,
			line: 3, column: 5, field: "tasks[0].command", is: workflowfile.ErrMissingField,
		},
		{
			name: "an unknown field of an HTTP call",
			src: `name: wf
tasks:
  - name: a
    type: http
    http:
      url: http://localhost/
      verb: GET
`,
			line: 7, column: 7, field: "tasks[0].http.verb", is: workflowfile.ErrUnknownField,
		},
		{
			name: "stdin from a task that is not a dependency",
			src: `name: wf
tasks:
  - name: a
    handler: h
  - name: b
    type: command
    command: {argv: [wc, -c], stdin_from: a}
`,
			line: 7, column: 43, field: "tasks[1].command.stdin_from", is: workflowfile.ErrBadValue, says: `"a" is not in the task's depends_on`,
		},
		{
			name: "a missing workflow name",
			src: `tasks:
  - name: a
    handler: h
`,
			line: 1, column: 1, field: "name", is: workflowfile.ErrMissingField,
		},
		{
			name: "a syntax error",
			src: `name: wf
tasks:
  - name: a
    handler: h: x
`,
			line: 4, column: 1, is: workflowfile.ErrSyntax,
		},
		{
			name: "a JSON file",
			src: `{
  "name": "wf",
  "tasks": [
    {"name": "a", "handler": "h", "timeout": "forever"}
  ]
}`,
			line: 4, column: 46, field: "tasks[0].timeout", is: workflowfile.ErrBadValue,
		},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := problems(t, "wf.yaml", c.src)
			require.Len(t, got, 1, "exactly one problem: %v", got)
			e := got[0]
			require.Equal(t, "wf.yaml", e.File)
			require.Equal(t, [2]int{c.line, c.column}, [2]int{e.Line, e.Column}, "the error must point at the problem: %v", e)
			require.Equal(t, c.field, e.Field, "the error must name the field")
			require.ErrorIs(t, e, c.is)
			require.Contains(t, e.Error(), c.says)
			if c.field != "" {
				require.True(t, strings.HasPrefix(e.Error(), "wf.yaml:"), "the message starts with file:line:column: %s", e.Error())
				require.Contains(t, e.Error(), c.field)
			}
		})
	}
}

func TestFileReportsEveryProblem(t *testing.T) {
	t.Parallel()
	got := problems(t, "wf.yaml", `name: wf
strategy: sometimes
tasks:
  - name: a
    handler: h
    priority: extreme
    delay: later
`)
	var fields []string
	for _, e := range got {
		require.True(t, errors.Is(e, workflowfile.ErrBadValue))
		fields = append(fields, e.Field)
	}
	require.ElementsMatch(t, []string{"strategy", "tasks[0].priority", "tasks[0].delay"}, fields)
}

// TestFileTooLarge pins what the package doc says of a problem of the whole
// file: no line or column, and a message that names the file alone.
func TestFileTooLarge(t *testing.T) {
	t.Parallel()
	_, err := workflowfile.Parse("big.yaml", make([]byte, workflowfile.MaxFileBytes+1))
	require.ErrorIs(t, err, workflowfile.ErrTooLarge)
	var e *workflowfile.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, [2]int{0, 0}, [2]int{e.Line, e.Column}, "a file too large has no position")
	require.Equal(t, "big.yaml: file too large: more than 4194304 bytes", e.Error())
}

// TestFileDuplicateTaskAtTheDuplicate pins that a name given twice is
// reported where it is given again, the task to rename, not at the first
// task; a third use is reported at the third.
func TestFileDuplicateTaskAtTheDuplicate(t *testing.T) {
	t.Parallel()
	got := problems(t, "wf.yaml", `name: wf
tasks:
  - name: a
    handler: h
  - name: b
    handler: h
  - name: a
    handler: h
  - name: a
    handler: h
`)
	require.Len(t, got, 2, "one problem per task after the first: %v", got)
	for i, want := range []struct {
		line  int
		field string
	}{{7, "tasks[2].name"}, {9, "tasks[3].name"}} {
		require.ErrorIs(t, got[i], plait.ErrDuplicateTask)
		require.Equal(t, [2]int{want.line, 5}, [2]int{got[i].Line, got[i].Column}, "the duplicate is reported at its own name: %v", got[i])
		require.Equal(t, want.field, got[i].Field)
	}
}
