package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// Schedules ([store.ScheduleStore]) live under their own hash tag {sched}
// (keys.go): one hash per schedule, a zset of them by next instant, a zset
// of their names and the leader lease hash. The leader finds due schedules
// with one ZRANGEBYSCORE and reads them in one pipeline, so idle schedules
// cost memory only. Round trips:
//
//	ScheduleSave        1: schedule_save.lua
//	ScheduleGet         1: HGETALL
//	ScheduleList        2: ZRANGEBYSCORE (due) or ZRANGEBYLEX (names), then
//	                    one pipeline of HGETALL
//	ScheduleDelete      1: MULTI DEL, ZREM, ZREM
//	ScheduleRecordFire  1: schedule_record_fire.lua
//	LeaderAcquire       1: leader_acquire.lua
//	LeaderRelease       1: leader_release.lua

func checkSchedName(name string) error {
	if err := ids.Check(name); err != nil {
		return fmt.Errorf("redisstore: schedule name %s %v: %w", ids.Quote(name), err, store.ErrInvalidArgument)
	}
	return nil
}

// msArg is t in ms, or "" for the zero time.
func msArg(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return strconv.FormatInt(t.UnixMilli(), 10)
}

// scheduleRecord decodes a schedule hash given as field, value pairs.
func scheduleRecord(name string, kv []any) (*store.ScheduleRecord, error) {
	if len(kv) == 0 {
		return nil, fmt.Errorf("redisstore: schedule %s: %w", ids.Quote(name), store.ErrNotFound)
	}
	m := make(map[string]string, len(kv)/2)
	r := &reply{v: kv}
	for i := 0; i+1 < len(kv); i += 2 {
		k := r.str()
		m[k] = r.str()
	}
	if r.err != nil {
		return nil, r.err
	}
	return recordFromMap(name, m)
}

func recordFromMap(name string, m map[string]string) (*store.ScheduleRecord, error) {
	if len(m) == 0 {
		return nil, fmt.Errorf("redisstore: schedule %s: %w", ids.Quote(name), store.ErrNotFound)
	}
	rec := &store.ScheduleRecord{Name: name, Definition: []byte(m["def"]), LastRunID: m["run"]}
	ms := func(field string) (time.Time, error) {
		v, ok := m[field]
		if !ok || v == "" {
			return time.Time{}, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("redisstore: schedule %s field %s: %w", ids.Quote(name), field, errCorrupt)
		}
		return msTime(n), nil
	}
	var err error
	if rec.NextFire, err = ms("next"); err != nil {
		return nil, err
	}
	if rec.LastFire, err = ms("last"); err != nil {
		return nil, err
	}
	if rec.UpdatedAt, err = ms("upd"); err != nil {
		return nil, err
	}
	if rec.Version, err = strconv.ParseInt(m["ver"], 10, 64); err != nil {
		return nil, fmt.Errorf("redisstore: schedule %s field ver: %w", ids.Quote(name), errCorrupt)
	}
	return rec, nil
}

// ScheduleSave creates or updates a schedule in one script call. See
// [store.ScheduleStore.ScheduleSave].
func (s *Store) ScheduleSave(ctx context.Context, params *store.ScheduleSaveParams) (*store.ScheduleRecord, error) {
	if err := checkSchedName(params.Name); err != nil {
		return nil, err
	}
	k := s.keys
	v, err := s.runScript(ctx, scriptScheduleSave, []string{k.schedule(params.Name), k.scheduleDue(), k.scheduleNames()},
		s.nowArg(), params.Name, params.Definition, msArg(params.NextFire))
	if err != nil {
		return nil, err
	}
	return scheduleRecord(params.Name, v)
}

// ScheduleGet reads one schedule hash. See [store.ScheduleStore.ScheduleGet].
func (s *Store) ScheduleGet(ctx context.Context, params *store.ScheduleGetParams) (*store.ScheduleRecord, error) {
	if ids.Check(params.Name) != nil {
		return nil, fmt.Errorf("redisstore: schedule %s: %w", ids.Quote(params.Name), store.ErrNotFound)
	}
	m, err := s.client.HGetAll(ctx, s.keys.schedule(params.Name)).Result()
	if err != nil {
		return nil, mapErr(err)
	}
	return recordFromMap(params.Name, m)
}

// ScheduleList lists by next instant or by name, then reads the records in
// one pipeline; a schedule deleted in between is left out. See
// [store.ScheduleStore.ScheduleList].
func (s *Store) ScheduleList(ctx context.Context, params *store.ScheduleListParams) (*store.ScheduleListResult, error) {
	if params.Limit < 1 {
		return nil, fmt.Errorf("redisstore: schedule list limit %d: %w", params.Limit, store.ErrInvalidArgument)
	}
	var names []string
	var err error
	if !params.DueBy.IsZero() {
		names, err = s.client.ZRangeByScore(ctx, s.keys.scheduleDue(), &redis.ZRangeBy{
			Min: "-inf", Max: strconv.FormatInt(params.DueBy.UnixMilli(), 10), Count: int64(params.Limit) + 1,
		}).Result()
	} else {
		min := "-"
		if params.After != "" {
			min = "(" + params.After
		}
		names, err = s.client.ZRangeByLex(ctx, s.keys.scheduleNames(), &redis.ZRangeBy{Min: min, Max: "+", Count: int64(params.Limit) + 1}).Result()
	}
	if err != nil {
		return nil, mapErr(err)
	}
	res := &store.ScheduleListResult{}
	if len(names) > params.Limit {
		names, res.More = names[:params.Limit], true
	}
	if len(names) == 0 {
		return res, nil
	}
	cmds := make([]*redis.MapStringStringCmd, len(names))
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, n := range names {
			cmds[i] = p.HGetAll(ctx, s.keys.schedule(n))
		}
		return nil
	})
	if err != nil {
		return nil, mapErr(err)
	}
	for i, c := range cmds {
		rec, err := recordFromMap(names[i], c.Val())
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		res.Schedules = append(res.Schedules, rec)
	}
	return res, nil
}

// ScheduleDelete removes the hash and both index entries in one MULTI. See
// [store.ScheduleStore.ScheduleDelete].
func (s *Store) ScheduleDelete(ctx context.Context, params *store.ScheduleDeleteParams) error {
	if ids.Check(params.Name) != nil {
		return fmt.Errorf("redisstore: schedule %s: %w", ids.Quote(params.Name), store.ErrNotFound)
	}
	var del *redis.IntCmd
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		del = p.Del(ctx, s.keys.schedule(params.Name))
		p.ZRem(ctx, s.keys.scheduleDue(), params.Name)
		p.ZRem(ctx, s.keys.scheduleNames(), params.Name)
		return nil
	})
	if err != nil {
		return mapErr(err)
	}
	if del.Val() == 0 {
		return fmt.Errorf("redisstore: schedule %s: %w", ids.Quote(params.Name), store.ErrNotFound)
	}
	return nil
}

// ScheduleRecordFire records a fire under the leader's epoch in one script
// call. See [store.ScheduleStore.ScheduleRecordFire].
func (s *Store) ScheduleRecordFire(ctx context.Context, params *store.ScheduleRecordFireParams) (*store.ScheduleRecord, error) {
	if ids.Check(params.Name) != nil {
		return nil, fmt.Errorf("redisstore: schedule %s: %w", ids.Quote(params.Name), store.ErrNotFound)
	}
	k := s.keys
	last, run := msArg(params.LastFire), params.LastRunID
	v, err := s.runScript(ctx, scriptScheduleRecordFire, []string{k.leader(), k.schedule(params.Name), k.scheduleDue()},
		s.nowArg(), params.Name, params.LeaderEpoch, params.Version, msArg(params.NextFire), last, run)
	if err != nil {
		return nil, err
	}
	r := &reply{v: v}
	code := r.int()
	if r.err != nil {
		return nil, r.err
	}
	if err := codeErr(code); err != nil {
		return nil, fmt.Errorf("redisstore: record fire of schedule %s: %w", ids.Quote(params.Name), err)
	}
	return scheduleRecord(params.Name, v[1:])
}

// LeaderAcquire takes or renews the leader lease in one script call. See
// [store.ScheduleStore.LeaderAcquire].
func (s *Store) LeaderAcquire(ctx context.Context, params *store.LeaderAcquireParams) (*store.LeaderAcquireResult, error) {
	if params.Holder == "" || params.TTL < time.Millisecond {
		return nil, fmt.Errorf("redisstore: leader acquire needs a holder and a TTL of at least 1ms: %w", store.ErrInvalidArgument)
	}
	v, err := s.runScript(ctx, scriptLeaderAcquire, []string{s.keys.leader()}, s.nowArg(), params.Holder, params.Epoch, ceilDurMillis(params.TTL))
	if err != nil {
		return nil, err
	}
	r := &reply{v: v}
	res := &store.LeaderAcquireResult{Acquired: r.int() == 1}
	res.Lease.Holder = r.str()
	res.Lease.Epoch = r.int()
	res.Lease.Until = msTime(r.int())
	if r.err != nil {
		return nil, r.err
	}
	return res, nil
}

// LeaderRelease gives the lease up in one script call. See
// [store.ScheduleStore.LeaderRelease].
func (s *Store) LeaderRelease(ctx context.Context, params *store.LeaderReleaseParams) error {
	_, err := s.runScript(ctx, scriptLeaderRelease, []string{s.keys.leader()}, s.nowArg(), params.Holder, params.Epoch)
	return err
}
