package workflowfile_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A value of the file, a field name it does not know and the file name
// show in a message quoted and cut after 128 bytes, however long or odd.
func TestMessagesQuoteTheFile(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("0123456789abcdef", 640)
	cases := []struct{ name, file, src, says string }{
		{"a long duration", "wf.yaml", `{name: wf, tasks: [{name: a, handler: h, timeout: ` + long + `}]}`,
			`"` + long[:128] + `"…(10240 bytes) is not a duration`},
		{"a long enum value", "wf.yaml", `{name: wf, strategy: ` + long + `, tasks: [{name: a, handler: h}]}`,
			`"` + long[:128] + `"…(10240 bytes) is not one of continue, stop, skip`},
		{"an unknown field with a NUL", "wf.yaml", "{name: wf, \"a\\0b\": 1, tasks: [{name: a, handler: h}]}",
			`wf.yaml:1:12: "a\x00b": unknown field`},
		{"an unknown field of a plain name", "wf.yaml", `{name: wf, retires: 1, tasks: [{name: a, handler: h}]}`,
			`wf.yaml:1:12: retires: unknown field`},
		{"a long file name", long, `{name: wf, tasks: [{name: a, handler: h, timeout: x}]}`,
			`"` + long[:128] + `"…(10240 bytes):1:`},
		{"a file name with a newline", "a\nb.yaml", `{name: wf, tasks: [{name: a, handler: h, timeout: x}]}`,
			`"a\nb.yaml":1:`},
	}
	for _, c := range cases {
		ps := problems(t, c.file, c.src)
		require.Len(t, ps, 1, c.name)
		msg := ps[0].Error()
		require.Contains(t, msg, c.says, c.name)
		require.Less(t, len(msg), 600, c.name)
	}
}
