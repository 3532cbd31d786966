package plait

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestTaskLoggerNamesTheAttempt(t *testing.T) {
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(prev)

	task := &Task{RunID: "7-abc", Name: "send", Attempt: 2, Epoch: 3}
	task.Logger().Info("hello")
	for _, want := range []string{"run=7-abc", "task=send", "attempt=2", "epoch=3", "msg=hello"} {
		if !strings.Contains(buf.String(), want) {
			t.Fatalf("log line %q lacks %q", buf.String(), want)
		}
	}
}
