package plait

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/plaitdag/plait/store"
)

// Count caching defaults. README, tests and code cite these names.
const (
	// RunCountCacheTTLDefault is how long [Scheduler.RunCount] reuses an
	// answer for the same params.
	RunCountCacheTTLDefault = 5 * time.Second
	// RunCountCacheEntriesDefault is the most answers it keeps.
	RunCountCacheEntriesDefault = 256
	// RunCountCacheEntriesMax is the most answers WithRunCountCache
	// accepts.
	RunCountCacheEntriesMax = 100_000
)

// Run counts, re-exported from package store.
type (
	// RunCountParams select the runs counted and bound the count: see
	// [store.RunCountParams].
	RunCountParams = store.RunCountParams
	// RunCountResult is a count per status: see [store.RunCountResult].
	RunCountResult = store.RunCountResult
)

// Read bounds of [Scheduler.RunCount]: the bound given no limit, and the
// largest.
const (
	RunCountLimitDefault = store.RunCountLimitDefault
	RunCountLimitMax     = store.RunCountLimitMax
)

// runCountConfig is what WithRunCountCache set; its zero value takes the
// defaults.
type runCountConfig struct {
	set     bool
	ttl     time.Duration
	entries int
}

// WithRunCountCache sets how long [Scheduler.RunCount] reuses an answer
// for the same params (filter and limit), and the most answers it keeps
// (the oldest goes first). A dashboard that polls counts every second
// then costs the store one count per filter per ttl, whatever the number
// of viewers. Defaults to RunCountCacheTTLDefault and
// RunCountCacheEntriesDefault; a ttl of 0 turns the cache off. A negative
// ttl, and entries below 1 or above RunCountCacheEntriesMax, are errors.
func WithRunCountCache(ttl time.Duration, entries int) Option {
	return func(c *config) {
		if ttl < 0 {
			c.reject("WithRunCountCache", ttl.String(), "ttl must not be negative")
			return
		}
		if entries < 1 || entries > RunCountCacheEntriesMax {
			c.reject("WithRunCountCache", strconv.Itoa(entries), "entries must be 1.."+strconv.Itoa(RunCountCacheEntriesMax))
			return
		}
		c.count = runCountConfig{set: true, ttl: ttl, entries: entries}
	}
}

// RunCount counts the runs matching params.Filter per status, as
// [QueryStore.RunCount] does: exactly from the store's indexes for a
// filter of statuses and one time range (see [RunFilter.CountIndexed]),
// else by reading at most params.Limit runs per shard ([RunCountLimitDefault]
// when 0), with Capped set when that bound stopped it. An answer is reused
// for the same params for the ttl of [WithRunCountCache] (five seconds by
// default), so it may lag the store by that much. It answers
// [ErrInvalidArgument] for a bad filter or limit and an
// [*UnsupportedError] when the store does not implement [QueryStore].
func (s *Scheduler) RunCount(ctx context.Context, params RunCountParams) (*RunCountResult, error) {
	qs, err := capability[store.QueryStore](s.store, "QueryStore")
	if err != nil {
		return nil, err
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	key := countKey(&params)
	if res := s.counts.get(key, s.cfg.clock.Now()); res != nil {
		return res, nil
	}
	res, err := qs.RunCount(ctx, &params)
	if err != nil {
		return nil, err
	}
	s.counts.put(key, res, s.cfg.clock.Now())
	return cloneCount(res), nil
}

// countKey is the cache key of a count: every field of its params.
func countKey(p *RunCountParams) string {
	f := &p.Filter
	var b strings.Builder
	for _, v := range []string{f.Service, f.Tenant, f.Workflow, f.ErrorPrefix} {
		b.WriteString(strconv.Quote(v))
	}
	for _, st := range f.Statuses {
		b.WriteString(string(st) + ",")
	}
	for _, t := range []time.Time{f.CreatedFrom, f.CreatedTo, f.EndedFrom, f.EndedTo} {
		b.WriteString(";" + strconv.FormatInt(t.UnixMilli(), 10))
		if t.IsZero() {
			b.WriteString("z")
		}
	}
	b.WriteString("/" + strconv.Itoa(p.ReadLimit()))
	return b.String()
}

func cloneCount(r *RunCountResult) *RunCountResult {
	out := &RunCountResult{Counts: make(map[RunStatus]int64, len(r.Counts)), Capped: r.Capped}
	for st, n := range r.Counts {
		out.Counts[st] = n
	}
	return out
}

// countCache keeps recent count answers by params, at most entries of
// them, each for ttl. It is small and read under one lock: a count costs
// the store far more than the lock.
type countCache struct {
	ttl     time.Duration
	entries int

	mu sync.Mutex
	m  map[string]countEntry
	// order lists the keys oldest first, for eviction; a key put again is
	// appended again and its older place skipped.
	order []countOrder
}

type countEntry struct {
	res *RunCountResult
	at  time.Time
}

type countOrder struct {
	key string
	at  time.Time
}

// newCountCache builds the cache cfg asks for.
func newCountCache(cfg runCountConfig) *countCache {
	if !cfg.set {
		cfg = runCountConfig{ttl: RunCountCacheTTLDefault, entries: RunCountCacheEntriesDefault}
	}
	return &countCache{ttl: cfg.ttl, entries: cfg.entries, m: map[string]countEntry{}}
}

// get returns a copy of the answer kept for key, nil when none is fresh.
func (c *countCache) get(key string, now time.Time) *RunCountResult {
	if c.ttl == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || now.Sub(e.at) >= c.ttl || now.Before(e.at) {
		return nil
	}
	return cloneCount(e.res)
}

// put keeps res for key, evicting what is stale, then the oldest, to stay
// within entries.
func (c *countCache) put(key string, res *RunCountResult, now time.Time) {
	if c.ttl == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key] = countEntry{res: cloneCount(res), at: now}
	c.order = append(c.order, countOrder{key, now})
	for len(c.m) > c.entries || (len(c.order) > 0 && now.Sub(c.order[0].at) >= c.ttl) {
		o := c.order[0]
		c.order = c.order[1:]
		if e, ok := c.m[o.key]; ok && e.at.Equal(o.at) {
			delete(c.m, o.key)
		}
	}
}
