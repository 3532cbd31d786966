package cmdtask

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
)

// lineLogger logs each line written to it as one record of the task's log,
// as the lines come, and keeps the last bytes for an [ExitError]. It is
// written by one goroutine.
type lineLogger struct {
	log     *slog.Logger
	maxLine int
	keep    int
	partial []byte
	last    []byte
}

func newLineLogger(log *slog.Logger, maxLine, keep int) *lineLogger {
	return &lineLogger{log: log, maxLine: maxLine, keep: keep}
}

// Write implements io.Writer.
func (l *lineLogger) Write(p []byte) (int, error) {
	n := len(p)
	l.remember(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.partial = append(l.partial, p...)
			for len(l.partial) >= l.maxLine {
				l.emit(l.partial[:l.maxLine])
				l.partial = append(l.partial[:0], l.partial[l.maxLine:]...)
			}
			break
		}
		line := p[:i]
		if len(l.partial) > 0 {
			line = append(l.partial, line...)
			l.partial = l.partial[:0]
		}
		for len(line) > l.maxLine {
			l.emit(line[:l.maxLine])
			line = line[l.maxLine:]
		}
		l.emit(line)
		p = p[i+1:]
	}
	return n, nil
}

// flush logs a last line that had no newline.
func (l *lineLogger) flush() {
	if len(l.partial) > 0 {
		l.emit(l.partial)
		l.partial = nil
	}
}

func (l *lineLogger) emit(line []byte) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	// The handler's context may be over (a timeout); the line still
	// belongs in the log.
	l.log.LogAttrs(context.Background(), slog.LevelInfo, string(line), slog.String("stream", "stderr"))
}

func (l *lineLogger) remember(p []byte) {
	l.last = append(l.last, p...)
	if len(l.last) > 2*l.keep {
		l.last = append(l.last[:0], l.last[len(l.last)-l.keep:]...)
	}
}

// tail returns the last bytes written, at most keep, trimmed of spaces.
func (l *lineLogger) tail() string {
	b := l.last
	if len(b) > l.keep {
		b = b[len(b)-l.keep:]
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
}
