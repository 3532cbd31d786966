package worker

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// LeaseAuditMax bounds what one pass of the lease audit reads: at most
// this many running tasks' lease entries and this many running runs. A
// store holding more running work than that is audited no further on that
// pass (the pass cannot tell which tasks lack an entry), and says so in
// the log.
const LeaseAuditMax = 10_000

// leaseAuditOnce finds running tasks that have no lease entry and attaches
// one again, for the lease duration from now, so the sweep requeues the
// task once that lease runs out unless its holder extends it. A store
// loses a lease entry when Redis loses data (a failover to a lagging
// replica, a restore) or when someone deletes it; the sweep, which reads
// lease entries only, would never find the task, and a task whose holder
// is gone too would stay running for good. It runs with the janitor, so a
// lost entry is found within the janitor interval, and the task requeued
// within that, the lease duration and the sweep interval.
//
// It reads the running tasks' lease entries (TaskSearch, running), then
// the running runs with their tasks (RunList), and extends the leases of
// the running tasks the first read did not list, each under the epoch the
// second read saw. That is safe against every race: a task finished or
// claimed again since has another epoch or status and its extension
// answers ErrStaleEpoch, changing nothing; a live holder's lease is only
// pushed to where its own next extension puts it. A task claimed between
// the two reads, or one whose entry the paged read missed as it moved, is
// extended once for nothing, which delays the recovery of its lease by at
// most the lease duration should its holder die just then.
func (p *pool) leaseAuditOnce(ctx context.Context, qs store.QueryStore, ts store.TaskSearchStore) {
	leased := map[string]bool{}
	for cursor, read := "", 0; ; {
		res, err := ts.TaskSearch(ctx, &store.TaskSearchParams{Statuses: []store.TaskStatus{store.TaskRunning},
			Cursor: cursor, Limit: store.TaskSearchPageMax})
		if err != nil {
			p.auditFailed(ctx, err)
			return
		}
		for _, h := range res.Tasks {
			leased[h.RunID+" "+h.Name] = true
		}
		read += len(res.Tasks)
		if res.NextCursor == "" {
			break
		}
		if read >= LeaseAuditMax {
			p.cfg.Logger.Warn("plait: lease audit skipped: too many running tasks to read in one pass", "max", LeaseAuditMax)
			return
		}
		cursor = res.NextCursor
	}
	var orphans []store.Lease
	for cursor, read := "", 0; read < LeaseAuditMax; {
		res, err := qs.RunList(ctx, &store.RunListParams{Filter: store.RunFilter{Statuses: []store.RunStatus{store.RunRunning}},
			Cursor: cursor, Limit: store.QueryLimitMax})
		if err != nil {
			p.auditFailed(ctx, err)
			return
		}
		for _, run := range res.Runs {
			for _, ti := range run.Tasks {
				if ti.Status == store.TaskRunning && !leased[run.ID+" "+ti.Name] {
					orphans = append(orphans, store.Lease{RunID: run.ID, Task: ti.Name, Epoch: ti.Epoch})
				}
			}
		}
		read += len(res.Runs)
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	if len(orphans) == 0 {
		return
	}
	res, err := p.store.LeaseExtend(ctx, &store.LeaseExtendParams{WorkerID: p.cfg.WorkerID, Leases: orphans, Duration: p.cfg.LeaseDuration})
	if err != nil {
		p.auditFailed(ctx, err)
		return
	}
	for i, r := range res {
		if r.Err == nil && i < len(orphans) {
			p.cfg.Logger.Warn("plait: running task had no lease entry; a lease is attached again for the sweep to watch",
				"run", orphans[i].RunID, "task", orphans[i].Task, "epoch", orphans[i].Epoch, "until", r.Until)
		}
	}
}

func (p *pool) auditFailed(ctx context.Context, err error) {
	if ctx.Err() == nil {
		p.cfg.Logger.Warn("plait: lease audit failed", "err", err)
	}
}
