package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/redis/go-redis/v9"
)

// WithStats turns on the counters and duration windows of
// [plait.Scheduler.Stats]: every transition then also counts itself per
// queue in its shard's hash and keeps the attempt durations of each task
// name, window of them ([store.StatsWindowDefault] when window is 0). They
// cost Redis CPU on every claim and finish (the README gives the figure),
// so they are off by default, and StoreStats answers an
// [*store.UnsupportedError] while they are, as memstore's does. A window
// below 0 or above [store.StatsWindowMax] is an error.
//
// Stats are a setting of the prefix, not of the process: the first [New]
// on a prefix records whether they are on, and the window, with its
// layout (layout.go). A later New given WithStats with another setting
// (stats off, or another window) fails with a [*StatsMismatchError]; one
// not given WithStats takes the recorded setting, so every process counts
// its transitions and every reader answers StoreStats. A prefix first used
// before stats were recorded reads as stats off until a New given
// WithStats records its setting.
func WithStats(window int) Option {
	return func(c *config) {
		if err := store.CheckStatsWindow(window); err != nil {
			c.reject("WithStats", strconv.Itoa(window), err.Error())
			return
		}
		if window == 0 {
			window = store.StatsWindowDefault
		}
		c.statsWindow = window
	}
}

// StoreStats reads the counters hash of every shard, then the duration
// window of every task name they list: two pipelined round trips whatever
// the number of runs. The scripts keep them (lua/lib_status.lua): counters
// per queue and per workflow in HINCRBY, durations in a list per task name
// capped at the window. A workflow whose name is not a valid name
// (internal/ids) is counted for its queues only. See
// [store.StatsStore]. While the prefix's stats are off (see [WithStats]:
// the first store of a prefix records the setting) the scripts keep
// nothing, and it answers an [*store.UnsupportedError].
func (s *Store) StoreStats(ctx context.Context, params *store.StoreStatsParams) (*store.StoreStatsResult, error) {
	if s.cfg.statsWindow == 0 {
		return nil, &store.UnsupportedError{Capability: "StatsStore"}
	}
	hashes := make([]*redis.MapStringStringCmd, s.cfg.shards)
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for sh := range hashes {
			hashes[sh] = p.HGetAll(ctx, s.keys.stats(sh))
		}
		return nil
	})
	if err != nil {
		return nil, mapErr(err)
	}
	res := &store.StoreStatsResult{Queues: map[string]store.StatCounters{}, Workflows: map[string]store.StatCounters{}, Durations: map[string][]time.Duration{}}
	type window struct {
		name string
		cmd  *redis.StringSliceCmd
	}
	var windows []window
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for sh, c := range hashes {
			for f, v := range c.Val() {
				if name, ok := strings.CutPrefix(f, "n:"); ok {
					windows = append(windows, window{name, p.LRange(ctx, s.keys.durations(sh, name), 0, -1)})
					continue
				}
				into := res.Queues
				rest, ok := strings.CutPrefix(f, "q:")
				if !ok {
					if rest, ok = strings.CutPrefix(f, "w:"); !ok {
						continue
					}
					into = res.Workflows
				}
				cut := strings.LastIndexByte(rest, ':')
				if cut < 0 {
					continue
				}
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					continue
				}
				q := rest[:cut]
				c := into[q]
				switch rest[cut+1:] {
				case "sub":
					c.Submitted += n
				case "run":
					c.Running += n
				case "ok":
					c.Succeeded += n
				case "fail":
					c.Failed += n
				case "dead":
					c.Dead += n
				case "retry":
					c.Retried += n
				case "crash":
					c.Crashed += n
				}
				into[q] = c
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, mapErr(err)
	}
	for _, w := range windows {
		for _, v := range w.cmd.Val() {
			if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
				res.Durations[w.name] = append(res.Durations[w.name], time.Duration(ms)*time.Millisecond)
			}
		}
	}
	return res, nil
}

var _ store.StatsStore = (*Store)(nil)
