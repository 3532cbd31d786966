package worker

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/plaitdag/plait/store"
)

// taskLog returns the attempt's log buffer, made at the first call, or nil
// when the store keeps no task logs or the handler returned without one.
func (e *Attempt) taskLog() *attemptLog {
	ls, ok := e.pool.store.(store.TaskLogStore)
	if !ok {
		return nil
	}
	x := e.extras()
	if x == nil {
		return nil
	}
	x.logOnce.Do(func() {
		x.log = &attemptLog{pool: e.pool, store: ls, lease: e.ct.Lease, attempt: e.ct.Attempt}
	})
	return x.log
}

// endTaskLog sends the attempt's last lines, before its outcome is written,
// and stops its flush timer. Lines logged after it go to the Scheduler's
// logger only, and are counted and reported as dropped.
func (x *attemptExtras) endTaskLog() {
	x.logOnce.Do(func() {}) // no log made from here on
	if x.log != nil {
		x.log.end()
	}
}

// attemptLog buffers the lines of one attempt for the store.
type attemptLog struct {
	pool    *pool
	store   store.TaskLogStore
	lease   store.Lease
	attempt int

	// sending orders the appends, so their Seq follows the order of the
	// lines.
	sending sync.Mutex
	mu      sync.Mutex
	pending []store.LogLine
	// seq counts the appends sent; timer is armed while lines wait.
	seq   int
	timer store.Timer
	// ended is set by end: later lines are not stored.
	ended bool
	// lost counts lines not stored: over the buffer, after the end, or
	// refused by the store (cap, stale epoch, failure); reported says the
	// loss was logged once.
	lost     int
	reported bool
	// unsupported is set when the store answered ErrUnsupported: lines go
	// to the Scheduler's logger only, as with a store without the
	// capability.
	unsupported bool
}

// add buffers one line and arms the flush timer.
func (l *attemptLog) add(line store.LogLine) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unsupported {
		return
	}
	if l.ended || len(l.pending) >= taskLogBufferMax {
		l.lostLocked(1, "the attempt ended or too many lines wait unsent")
		return
	}
	l.pending = append(l.pending, line)
	if l.timer == nil {
		l.timer = l.pool.cfg.Clock.AfterFunc(l.pool.cfg.TaskLogFlush, func() { l.flush(false) })
	}
}

// end flushes what is left and refuses later lines.
func (l *attemptLog) end() {
	l.flush(true)
}

// flush sends the waiting lines in one append (see sendLines). A transport
// failure is retried once with the same Seq: the store keeps one copy.
func (l *attemptLog) flush(final bool) {
	l.sending.Lock()
	defer l.sending.Unlock()
	l.mu.Lock()
	lines := l.pending
	l.pending = nil
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if final {
		l.ended = true
	}
	if len(lines) == 0 {
		l.mu.Unlock()
		return
	}
	l.seq++
	params := &store.TaskLogAppendParams{Lease: l.lease, Attempt: l.attempt, Seq: l.seq, Lines: lines}
	l.mu.Unlock()

	dropped, refused, err := l.sendLines(params)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case errors.Is(err, store.ErrUnsupported):
		// A wrapper that forwards the capability to a store without it:
		// the lines went to the Scheduler's logger, which is all there is.
		l.unsupported = true
	case refused > 0:
		l.lostLocked(refused, "the store refused them: "+err.Error())
	}
	if dropped > 0 {
		l.lostLocked(dropped, "the task's log cap is reached")
	}
}

// sendLines sends one append, tried twice, and answers how many of its lines
// the cap dropped and how many the store refused, with the refusal. An
// append the store rejected for what it carries (store.ErrRejected: a line
// longer than the server takes in one argument) is sent again in halves,
// down to single lines, each part with a sequence number of its own, taken
// as it is sent so that they follow the order of the lines (the caller
// holds sending): only a line rejected on its own is lost.
func (l *attemptLog) sendLines(params *store.TaskLogAppendParams) (dropped, refused int, err error) {
	var res *store.TaskLogAppendResult
	for try := 0; try < 2; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), taskLogAppendTimeout)
		res, err = l.store.TaskLogAppend(ctx, params)
		cancel()
		if err == nil || errors.Is(err, store.ErrStaleEpoch) || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrRejected) {
			break
		}
	}
	switch {
	case err == nil:
		return res.Dropped, 0, nil
	case !errors.Is(err, store.ErrRejected) || len(params.Lines) == 1:
		return 0, len(params.Lines), err
	}
	h := len(params.Lines) / 2
	first, second := *params, *params
	first.Lines, second.Lines = params.Lines[:h], params.Lines[h:]
	dropped, refused, err = l.sendLines(&first)
	l.mu.Lock()
	l.seq++
	second.Seq = l.seq
	l.mu.Unlock()
	d, r, err2 := l.sendLines(&second)
	if err2 != nil {
		err = err2
	}
	return dropped + d, refused + r, err
}

// taskLogAppendTimeout bounds one append, so a flush at an attempt's end
// cannot hold its outcome long.
const taskLogAppendTimeout = 5 * time.Second

// lostLocked counts lines not stored and says so, once per attempt, on the
// Scheduler's logger.
func (l *attemptLog) lostLocked(n int, why string) {
	l.lost += n
	if l.reported {
		return
	}
	l.reported = true
	l.pool.cfg.Logger.Warn("plait: task log lines not stored", "run", l.lease.RunID, "task", l.lease.Task,
		"epoch", l.lease.Epoch, "lines", n, "reason", why)
}

// teeHandler sends each record to two handlers: the Scheduler's logger and
// the store's buffer.
type teeHandler struct {
	first  slog.Handler
	stored *storeHandler
}

func (h *teeHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.first.Enabled(ctx, level) || h.stored.Enabled(ctx, level)
}

func (h *teeHandler) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if h.first.Enabled(ctx, r.Level) {
		err = h.first.Handle(ctx, r.Clone())
	}
	if h.stored.Enabled(ctx, r.Level) {
		_ = h.stored.Handle(ctx, r)
	}
	return err
}

func (h *teeHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &teeHandler{first: h.first.WithAttrs(attrs), stored: h.stored.withAttrs(attrs)}
}

func (h *teeHandler) WithGroup(name string) slog.Handler {
	return &teeHandler{first: h.first.WithGroup(name), stored: h.stored.withGroup(name)}
}

// storeHandler formats records as lines for the attempt's buffer: the
// message, then key=value per attribute (groups prefix their keys with
// "group."). The run, task, attempt and epoch are not repeated in the
// text: the store keeps each line with its attempt.
type storeHandler struct {
	log *attemptLog
	// prefix is the group path of attributes added from here on; attrs are
	// the attributes added with WithAttrs, formatted.
	prefix string
	attrs  string
}

// Enabled stores Info and above: debug lines stay with the Scheduler's
// logger, so they do not use up the task's cap.
func (h *storeHandler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= slog.LevelInfo
}

func (h *storeHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.prefix, a)
		return true
	})
	h.log.add(store.LogLine{Time: r.Time, Level: r.Level, Text: b.String()})
	return nil
}

func (h *storeHandler) withAttrs(attrs []slog.Attr) *storeHandler {
	var b strings.Builder
	b.WriteString(h.attrs)
	for _, a := range attrs {
		appendAttr(&b, h.prefix, a)
	}
	return &storeHandler{log: h.log, prefix: h.prefix, attrs: b.String()}
}

func (h *storeHandler) withGroup(name string) *storeHandler {
	if name == "" {
		return h
	}
	return &storeHandler{log: h.log, prefix: h.prefix + name + ".", attrs: h.attrs}
}

// appendAttr writes " key=value", flattening groups into dotted keys.
func appendAttr(b *strings.Builder, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			appendAttr(b, p, g)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(prefix)
	b.WriteString(a.Key)
	b.WriteByte('=')
	b.WriteString(a.Value.String())
}
