package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/plaitdag/plait/store"
)

// What the root's Task reads of the attempt running it. Each accessor is
// safe to call from the handler's goroutine while the engine runs the
// attempt.

// Claimed is the task as the store answered the claim.
func (e *Attempt) Claimed() *store.ClaimedTask { return e.ct }

// ClaimedAt is the store's clock at the claim: the attempt's start.
func (e *Attempt) ClaimedAt() time.Time { return e.claimedAt }

// Context is the attempt's context, cancelled with the cause of its end
// (ErrTimeout, ErrLeaseLost, ErrRunCancelled, ErrShutdown).
func (e *Attempt) Context() context.Context { return e.ctx }

// WorkerID and NodeID name the process running the attempt.
func (e *Attempt) WorkerID() string { return e.pool.cfg.WorkerID }

// NodeID is the node id of the process running the attempt.
func (e *Attempt) NodeID() string { return e.pool.cfg.NodeID }

// Results is the store a task claimed without its parents' results reads
// them from, nil when the claim carried them.
func (e *Attempt) Results() store.ResultStore {
	if !e.ct.ParentResultsDeferred {
		return nil
	}
	return e.pool.results
}

// GuardTimeout arms the task's timeout from now, on the scheduler's clock:
// at the timeout the context is cancelled with ErrTimeout, and a handler
// still running a grace later is given up on.
func (e *Attempt) GuardTimeout() { e.pool.guardTimeout(e, e.pool.cfg.Clock.Now()) }

// Logger is the attempt's logger: base's lines with the run, task,
// attempt and epoch, sent to the store too when it keeps task logs.
func (e *Attempt) Logger() *slog.Logger {
	ct := e.ct
	named := e.pool.cfg.Logger.With("run", ct.Lease.RunID, "task", ct.Spec.Name, "attempt", ct.Attempt, "epoch", ct.Lease.Epoch)
	l := e.taskLog()
	if l == nil {
		return named
	}
	return slog.New(&teeHandler{first: named.Handler(), stored: &storeHandler{log: l}})
}
