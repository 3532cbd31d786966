package plait

import (
	"log/slog"
)

// Logger returns the logger of this attempt: its lines carry the run, the
// task, the attempt and its epoch, so a handler's logs can be told apart
// from every other attempt's. A Task built by hand, in a handler's unit
// test, logs to slog.Default.
func (t *Task) Logger() *slog.Logger {
	base := slog.Default()
	if t.exec != nil && t.exec.pool != nil {
		base = t.exec.pool.cfg.logger
	}
	return base.With("run", t.RunID, "task", t.Name, "attempt", t.Attempt, "epoch", t.Epoch)
}
