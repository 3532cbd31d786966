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

// QueueList answers one page of the queues of the shards' registries qn;
// see [store.QueueLister]. Three pipelines, whatever the shard count:
//
//	1  SMEMBERS of each shard's registry, SMEMBERS of the paused set, TIME
//	2  per shard and queue of the page: LLEN of the four ready lists,
//	   LRANGE of their first [store.QueueOldestScan] entries, ZCARD of the
//	   delayed set and its first due entry (ZRANGEBYSCORE -inf now LIMIT 0
//	   1), SMEMBERS of the set-aside index; per shard ZRANGE of the first
//	   [store.QueueRunningScan] leases
//	3  HMGET m, s:<task>, w:<task> of each head entry's run (is it still
//	   ready, and since when), HGET d:<task> of each lease's run (its
//	   queue), LLEN of each set-aside list
//
// Running is counted on read rather than kept by the claim and finish
// scripts, which would cost an HINCRBY in each: the lease zset is per
// shard, so the queue of each lease is read from its task's definition
// header, at most [store.QueueRunningScan] per shard and call.
func (s *Store) QueueList(ctx context.Context, params *store.QueueListParams) (*store.QueueListResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	k := s.keys
	shards := s.cfg.shards
	regs := make([]*redis.StringSliceCmd, shards)
	var paused *redis.StringSliceCmd
	var clock *redis.TimeCmd
	if _, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for sh := range shards {
			regs[sh] = p.SMembers(ctx, k.queueNames(sh))
		}
		paused = p.SMembers(ctx, k.pausedQueues())
		if s.cfg.clock == nil {
			clock = p.Time(ctx)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	now := s.storeNow(clock)
	names, next := params.Page(func(yield func(string) bool) {
		for _, c := range regs {
			for _, n := range c.Val() {
				if !yield(n) {
					return
				}
			}
		}
	})
	res := &store.QueueListResult{NextCursor: next}
	if len(names) == 0 {
		return res, nil
	}
	isPaused := map[string]bool{}
	for _, q := range paused.Val() {
		isPaused[q] = true
	}
	type queueCmds struct {
		qi      int
		shard   int
		lens    [4]*redis.IntCmd // urgent first
		heads   [4]*redis.StringSliceCmd
		delayed *redis.IntCmd
		due     *redis.ZSliceCmd
		aside   *redis.StringSliceCmd
		limited *redis.IntCmd
	}
	var qcs []queueCmds
	leases := make([]*redis.StringSliceCmd, shards)
	nowMs := strconv.FormatInt(now.UnixMilli(), 10)
	if _, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for sh := range shards {
			for qi, q := range names {
				c := queueCmds{qi: qi, shard: sh}
				for i := range 4 {
					rk := k.ready(sh, q, 3-i)
					c.lens[i] = p.LLen(ctx, rk)
					c.heads[i] = p.LRange(ctx, rk, 0, store.QueueOldestScan-1)
				}
				c.delayed = p.ZCard(ctx, k.delayed(sh, q))
				c.due = p.ZRangeByScoreWithScores(ctx, k.delayed(sh, q), &redis.ZRangeBy{Min: "-inf", Max: nowMs, Count: 1})
				c.aside = p.SMembers(ctx, k.asideIndex(sh, q))
				if !strings.Contains(q, "+") {
					c.limited = p.LLen(ctx, k.limitWaiting(sh, store.QueueLimitKey(q)))
				}
				qcs = append(qcs, c)
			}
			leases[sh] = p.ZRange(ctx, k.active(sh), 0, store.QueueRunningScan)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	type headCmd struct {
		qi  int
		cmd *redis.SliceCmd
	}
	var heads []headCmd
	var leaseCmds []*redis.StringCmd
	var asides []struct {
		qi  int
		cmd *redis.IntCmd
	}
	res.Queues = make([]store.QueueInfo, len(names))
	for i, n := range names {
		qi := &res.Queues[i]
		qi.Name = n
		qi.Queue, qi.Requires, _ = store.SplitRoutedQueue(n)
		qi.Paused = isPaused[qi.Queue]
	}
	if _, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range qcs {
			qi := &res.Queues[c.qi]
			counts := [4]*int{&qi.Urgent, &qi.High, &qi.Normal, &qi.Low}
			for i := range 4 {
				n := int(c.lens[i].Val())
				*counts[i] += n
				qi.Ready += n
				for _, e := range c.heads[i].Val() {
					run, task, ok := strings.Cut(e, " ")
					if !ok {
						continue
					}
					heads = append(heads, headCmd{c.qi, p.HMGet(ctx, k.run(c.shard, run), "m", "s:"+task, "w:"+task)})
				}
			}
			qi.Delayed += int(c.delayed.Val())
			if c.limited != nil {
				qi.Limited += int(c.limited.Val())
			}
			if d := c.due.Val(); len(d) > 0 {
				older(&qi.OldestReadyAt, msTime(int64(d[0].Score)))
			}
			for _, h := range c.aside.Val() {
				asides = append(asides, struct {
					qi  int
					cmd *redis.IntCmd
				}{c.qi, p.LLen(ctx, k.aside(c.shard, names[c.qi], h))})
			}
		}
		for sh, c := range leases {
			n := 0
			for _, e := range c.Val() {
				run, task, ok := strings.Cut(e, " ")
				if !ok {
					continue // the skiplist pin
				}
				if n++; n > store.QueueRunningScan {
					res.RunningCapped = true
					break
				}
				leaseCmds = append(leaseCmds, p.HGet(ctx, k.run(sh, run), "d:"+task))
			}
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	for _, h := range heads {
		if at, ok := readySince(h.cmd.Val()); ok {
			older(&res.Queues[h.qi].OldestReadyAt, at)
		}
	}
	for _, a := range asides {
		res.Queues[a.qi].SetAside += int(a.cmd.Val())
	}
	index := make(map[string]int, len(names))
	for i, n := range names {
		index[n] = i
	}
	for _, c := range leaseCmds {
		head, _, _ := strings.Cut(c.Val(), ",")
		if i, ok := index[head]; ok {
			res.Queues[i].Running++
		}
	}
	return res, nil
}

// readySince answers, from the HMGET of a ready entry's run (m, s:<task>,
// w:<task>), when the task became ready, or false when the entry is stale
// (its run gone, its task no longer ready) or unreadable.
func readySince(v []any) (time.Time, bool) {
	if len(v) != 3 {
		return time.Time{}, false
	}
	ms, _ := v[0].(string)
	ss, _ := v[1].(string)
	ws, _ := v[2].(string)
	if ms == "" || ss == "" || ws == "" {
		return time.Time{}, false
	}
	m, err := decodeMeta(ms)
	if err != nil {
		return time.Time{}, false
	}
	st, err := decodeState(ss)
	if err != nil || st.status != store.TaskReady {
		return time.Time{}, false
	}
	off, err := strconv.ParseInt(ws, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return msTime(m.created + off), true
}

// older sets *at to t when *at is zero or later than t.
func older(at *time.Time, t time.Time) {
	if at.IsZero() || t.Before(*at) {
		*at = t
	}
}

var _ store.QueueLister = (*Store)(nil)
