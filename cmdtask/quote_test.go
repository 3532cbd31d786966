package cmdtask_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/cmdtask"
)

// requireQuoted holds a message to the quoting rule: valid UTF-8, no NUL,
// under 600 bytes, and no more than 128 consecutive bytes of in.
func requireQuoted(t *testing.T, msg, in string) {
	t.Helper()
	require.True(t, utf8.ValidString(msg) && !strings.ContainsRune(msg, 0), "message %q is not quoted", msg)
	require.Less(t, len(msg), 600, "message %.300q…", msg)
	for i := 0; i+129 <= len(in); i++ {
		require.NotContains(t, msg, in[i:i+129], "message %.300q… holds 129 bytes of the input", msg)
	}
}

func TestMessagesQuoteTheirValues(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("0123456789abcdef", 640)
	for _, v := range []string{long, "bad\xff\xfename", "bad\x00name"} {
		for _, o := range []cmdtask.Option{cmdtask.Allow("a/" + v), cmdtask.AllowShell(v), cmdtask.WithBaseEnv([]string{v})} {
			_, err := cmdtask.New(o)
			require.Error(t, err)
			requireQuoted(t, err.Error(), v)
		}
		err := (&cmdtask.Spec{Argv: []string{"x"}, Env: map[string]string{v + "=": "1"}}).Validate()
		require.ErrorIs(t, err, cmdtask.ErrInvalidSpec)
		requireQuoted(t, err.Error(), v)
		h := handler(t, cmdtask.Allow("sh"))
		_, err = h(context.Background(), task(t, cmdtask.Spec{Argv: []string{"x" + v}}))
		require.Error(t, err)
		requireQuoted(t, err.Error(), v)
	}
}
