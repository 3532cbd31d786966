package workflowfile

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/plaitdag/plait/internal/ids"
)

// Categories of [*Error], matched with errors.Is. A problem the workflow
// validator finds (a cycle, an unknown dependency, a bad name) carries the
// validator's own *plait.ValidationError instead, so errors.Is(err,
// plait.ErrCycle) holds through the file's error.
var (
	// ErrSyntax: the file is not well-formed YAML or JSON.
	ErrSyntax = errors.New("syntax error")
	// ErrMissingField: a required field is absent.
	ErrMissingField = errors.New("missing field")
	// ErrUnknownField: a field the format does not have (a typo, most
	// often).
	ErrUnknownField = errors.New("unknown field")
	// ErrUnknownTaskType: a task's type is none of the [TaskTypes].
	ErrUnknownTaskType = errors.New("unknown task type")
	// ErrBadValue: a field's value has the wrong shape: a duration that
	// does not parse, a list where a name belongs, a name outside an enum.
	ErrBadValue = errors.New("bad value")
	// ErrTooLarge: the file is larger than [MaxFileBytes].
	ErrTooLarge = errors.New("file too large")
)

// Error is one problem in a workflow file, at a line and column, naming
// the field. Parse joins one per problem with errors.Join.
type Error struct {
	// File is the name given to Parse (the path, for Load).
	File string
	// Line and Column locate the problem, from 1; both are zero for a
	// problem of the whole file (too large, empty, or a syntax error the
	// YAML parser gives no line for), which Error then prints without.
	Line, Column int
	// Field is the path to the field, such as "tasks[2].retry.initial".
	Field string
	// Err is the category: one of the sentinels above or a
	// *plait.ValidationError.
	Err error
	// Reason adds detail, such as the value that failed.
	Reason string
}

// Error reads like a compiler's message: "pipeline.yaml:12:14:
// tasks[2].timeout: bad value: "5 parsecs" is not a duration".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(fileName(e.File))
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Err.Error())
	if e.Reason != "" {
		b.WriteString(": " + e.Reason)
	}
	return b.String()
}

// fileName renders the name given to Parse for a message: as it is when
// it is at most 128 bytes of printable UTF-8, quoted (see [ids.Quote])
// otherwise.
func fileName(name string) string {
	if len(name) <= ids.MaxLen && utf8.ValidString(name) && !strings.ContainsFunc(name, unicode.IsControl) {
		return name
	}
	return ids.Quote(name)
}

// Unwrap returns the category.
func (e *Error) Unwrap() error { return e.Err }
