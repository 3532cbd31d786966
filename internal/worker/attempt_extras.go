package worker

import "sync"

// attemptExtras holds what only some attempts use: the buffer of the lines
// the handler logs for the store (tasklog.go) and its latest progress
// report (progress.go). An attempt makes them at its handler's first
// Logger or Progress call: most attempts make neither, and do without the
// bytes on every task.
type attemptExtras struct {
	// logOnce makes log at the first Task.Logger call; log stays nil when
	// the store keeps no task logs.
	logOnce sync.Once
	log     *attemptLog
	// progress holds the latest progress report not sent yet.
	progress progressSlot
}

// extras returns the attempt's extras, made at the first call; nil once
// the handler returned without making them (endExtras), which is what a
// later call finds: the attempt ended.
func (e *Attempt) extras() *attemptExtras {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ext == nil && !e.extEnded {
		e.ext = &attemptExtras{}
	}
	return e.ext
}

// madeExtras returns the attempt's extras if its handler made them, for
// the lease keeper's rounds.
func (e *Attempt) madeExtras() *attemptExtras {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ext
}

// endExtras ends the attempt's log and progress reports once its handler
// returned: the log's last lines and the report still waiting are sent,
// before the outcome is written, and later lines and reports are dropped.
// An attempt that made no extras makes none from here on.
func (e *Attempt) endExtras() {
	e.mu.Lock()
	e.extEnded = true
	x := e.ext
	e.mu.Unlock()
	if x == nil {
		return
	}
	x.endTaskLog()
	e.endProgress(x)
}
