package redisstore

import (
	"context"
	"errors"
	"strconv"

	"github.com/plaitdag/plait/store"
	"github.com/redis/go-redis/v9"
)

// seriesCounters are the counters of the per-minute hashes
// sm:<hour>:<counter> (flush_series in lua/lib_buffers.lua), in the order
// seriesAdd takes them.
var seriesCounters = [...]string{"ok", "fail", "retry", "rok", "rfail"}

// StatsSeries reads, in one pipeline, the hash of each counter and hour the
// page's minutes fall in, from every shard: 5 HGETALLs of at most 60 fields
// per hour and shard, and a page of a day spans 25 hours. See
// [store.StatsSeriesStore]. The scripts keep the hashes while the prefix's
// stats are on (see [WithStats]); off, it answers an
// [*store.UnsupportedError], as StoreStats does. Each hash expires 25
// hours after its last minute was first counted, on Redis's clock.
func (s *Store) StatsSeries(ctx context.Context, params *store.StatsSeriesParams) (*store.StatsSeriesResult, error) {
	if s.cfg.statsWindow == 0 {
		return nil, &store.UnsupportedError{Capability: "StatsSeriesStore"}
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	first, n, next := params.Minutes()
	res := &store.StatsSeriesResult{Points: make([]store.StatsPoint, n), NextCursor: next}
	for i := range res.Points {
		res.Points[i].At = store.StatsMinuteTime(first + int64(i))
	}
	if n == 0 {
		return res, nil
	}
	type read struct {
		hour    int64
		counter int
		cmd     *redis.MapStringStringCmd
	}
	var reads []read
	firstHour, lastHour := first/60, (first+int64(n)-1)/60
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for sh := 0; sh < s.cfg.shards; sh++ {
			for h := firstHour; h <= lastHour; h++ {
				for c, name := range seriesCounters {
					reads = append(reads, read{h, c, p.HGetAll(ctx, s.keys.statsMinutes(sh, h, name))})
				}
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, mapErr(err)
	}
	for _, r := range reads {
		for f, v := range r.cmd.Val() {
			m, err1 := strconv.ParseInt(f, 10, 64)
			c, err2 := strconv.ParseInt(v, 10, 64)
			i := r.hour*60 + m - first
			if err1 != nil || err2 != nil || m < 0 || m >= 60 || i < 0 || i >= int64(n) {
				continue
			}
			seriesAdd(&res.Points[i], r.counter, c)
		}
	}
	return res, nil
}

// seriesAdd adds c to counter k (an index of seriesCounters) of p.
func seriesAdd(p *store.StatsPoint, k int, c int64) {
	switch k {
	case 0:
		p.TasksSucceeded += c
	case 1:
		p.TasksFailed += c
	case 2:
		p.TasksRetried += c
	case 3:
		p.RunsCompleted += c
	case 4:
		p.RunsFailed += c
	}
}

var _ store.StatsSeriesStore = (*Store)(nil)
