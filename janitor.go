package plait

import (
	"context"
	"time"

	"github.com/plaitdag/plait/store"
)

// Janitor defaults. README, tests and code cite these names.
const (
	// JanitorIntervalDefault is how often Run prunes the index entries of
	// runs whose retention is over.
	JanitorIntervalDefault = 30 * time.Second
	// JanitorBatch is the most runs one prune call removes.
	JanitorBatch = 500
	// JanitorPassMax is the most runs one pass of the janitor removes:
	// the bound on its work per interval. A backlog larger than that is
	// worked off over several intervals.
	JanitorPassMax = 20 * JanitorBatch
)

// WithJanitorInterval sets how often Run prunes the query indexes of runs
// whose retention is over (see [QueryStore.RunPrune]); a pass removes at
// most JanitorPassMax runs. Defaults to JanitorIntervalDefault. Below
// IntervalMin, zero and negative included, is an error. On a store without
// [QueryStore] the janitor does not run.
//
// Every process runs its janitor, with no leader: a prune call is atomic
// per shard and removes each expired entry once, so concurrent janitors
// only share the work, and one process's janitor is enough for all.
func WithJanitorInterval(d time.Duration) Option {
	return func(c *config) {
		if d < IntervalMin {
			c.reject("WithJanitorInterval", d.String(), "must be at least IntervalMin ("+IntervalMin.String()+")")
			return
		}
		c.janitorInterval = d
	}
}

// janitor prunes the index entries of expired runs every janitor interval,
// until Run stops.
func (p *pool) janitor(ctx context.Context, qs store.QueryStore) {
	for {
		p.pause(ctx, p.cfg.janitorInterval)
		if ctx.Err() != nil {
			return
		}
		p.pruneOnce(ctx, qs)
	}
}

// pruneOnce is one pass of the janitor: prune calls until the store has
// nothing due or the pass has removed JanitorPassMax runs. It reports the
// count as EventRunsPruned.
func (p *pool) pruneOnce(ctx context.Context, qs store.QueryStore) {
	total := 0
	for total < JanitorPassMax {
		res, err := qs.RunPrune(ctx, &store.RunPruneParams{Limit: JanitorBatch})
		if err != nil {
			if ctx.Err() == nil {
				p.cfg.logger.Warn("plait: pruning expired runs failed", "err", err)
			}
			break
		}
		total += res.Pruned
		if !res.More {
			break
		}
	}
	p.s.emit(Event{Type: EventRunsPruned, Count: total})
}
