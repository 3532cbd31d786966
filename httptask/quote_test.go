package httptask_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/httptask"
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

func TestMessagesQuoteTheSpec(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("0123456789abcdef", 640)
	for _, v := range []string{long, "bad\xff\xfename", "bad\x00name"} {
		for _, s := range []httptask.Spec{
			{URL: "http://x:" + v},
			{URL: "http://x/\x00" + v},
			{URL: "http://x", Method: v + "("},
			{URL: "http://x", Headers: map[string]string{v + ":": "1"}},
			{URL: "http://x", Timeout: v},
		} {
			err := s.Validate()
			require.ErrorIs(t, err, httptask.ErrInvalidSpec, "%.100q", v)
			requireQuoted(t, err.Error(), v)
		}
		_, err := httptask.New(httptask.AllowHosts(v + "/"))
		require.Error(t, err)
		requireQuoted(t, err.Error(), v)
		requireQuoted(t, (&httptask.NotAllowedError{Host: v}).Error(), v)
	}
}

// A request that gets no answer names its URL once, cut, not twice whole.
func TestSendErrorNamesTheURLOnceCut(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	h, err := httptask.New(httptask.AllowHosts(addr))
	require.NoError(t, err)
	path := strings.Repeat("0123456789abcdef", 640)
	_, err = h(context.Background(), task(t, httptask.Spec{URL: "http://" + addr + "/" + path}))
	require.Error(t, err)
	require.Contains(t, err.Error(), "httptask: GET http://"+addr+"/")
	require.Contains(t, err.Error(), "connection refused")
	requireQuoted(t, err.Error(), path)
	var ne net.Error
	require.ErrorAs(t, err, &ne, "the cause stays in the chain")
}
