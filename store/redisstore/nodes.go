package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// Nodes ([store.NodeStore]) live under their own hash tag {nodes}
// (keys.go): one hash and one capped history list per node, a zset of live
// nodes and one per capability, each scored by the node's expiry, and the
// paused queues with the control version. Every key expires natively TTL
// after the last heartbeat that touched it, so a fleet that stopped leaves
// nothing behind; listings also compare the expiry with the store's clock,
// so an entry not dropped yet is never shown. Round trips:
//
//	NodeHeartbeat  1: node_heartbeat.lua
//	NodeRemove     2: HGET of the capabilities, then MULTI DEL, DEL, ZREM...
//	NodeGet        1: pipeline of TIME, HGETALL, LRANGE
//	NodeList       2: pipeline of TIME and ZRANGE of the index, then one
//	               pipeline of HGETALL and LRANGE per node
//	NodeDrain      1: node_drain.lua
//	QueuePause     1: queue_pause.lua
//	QueueListPaused   1: pipeline of SMEMBERS, GET

func checkNodeID(id string) error {
	if err := ids.Check(id); err != nil {
		return fmt.Errorf("redisstore: node id %s %v: %w", ids.Quote(id), err, store.ErrInvalidArgument)
	}
	return nil
}

// checkNames checks a set of names a node reports.
func checkNames(what string, names []string) error {
	for _, n := range names {
		if err := ids.Check(n); err != nil {
			return fmt.Errorf("redisstore: node %s %s %v: %w", what, ids.Quote(n), err, store.ErrInvalidArgument)
		}
	}
	return nil
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// NodeHeartbeat registers or refreshes a node in one script call. See
// [store.NodeStore.NodeHeartbeat].
func (s *Store) NodeHeartbeat(ctx context.Context, params *store.NodeHeartbeatParams) (*store.NodeHeartbeatResult, error) {
	n := &params.Node
	if err := checkNodeID(n.ID); err != nil {
		return nil, err
	}
	if params.TTL < time.Millisecond || params.HistoryLimit < 1 {
		return nil, fmt.Errorf("redisstore: node heartbeat needs a TTL of at least 1ms and a history limit of at least 1: %w", store.ErrInvalidArgument)
	}
	for what, names := range map[string][]string{"capability": n.Capabilities, "queue": n.Queues, "handler": n.Handlers} {
		if err := checkNames(what, names); err != nil {
			return nil, err
		}
	}
	k := s.keys
	keys := []string{k.node(n.ID), k.nodeHistory(n.ID), k.nodesLive(), k.pausedQueues(), k.control()}
	for _, c := range n.Capabilities {
		keys = append(keys, k.nodesByCapability(c))
	}
	tasks := make([]string, len(n.Tasks))
	for i, t := range n.Tasks {
		tasks[i] = t.RunID + " " + t.Task + " " + strconv.Itoa(t.Attempt) + " " + msOrZero(t.StartedAt)
	}
	fields := []any{
		nodeFieldName, n.Name, nodeFieldHost, n.Host, nodeFieldPID, n.PID, nodeFieldVersion, n.Version,
		nodeFieldCaps, strings.Join(n.Capabilities, " "), nodeFieldQueues, strings.Join(n.Queues, " "),
		nodeFieldHandlers, strings.Join(n.Handlers, " "), nodeFieldCapacity, n.Capacity, nodeFieldLoad, n.Load,
		nodeFieldDone, n.Completed, nodeFieldFailed, n.Failed, nodeFieldTasks, strings.Join(tasks, ","),
		nodeFieldDraining, boolArg(n.Draining),
	}
	args := append([]any{s.nowArg(), n.ID, ceilDurMillis(params.TTL), params.HistoryLimit,
		strconv.FormatInt(params.ControlVersion, 10), len(fields) / 2}, fields...)
	for _, t := range params.History {
		if t.Seq < 1 {
			return nil, fmt.Errorf("redisstore: node history entry with seq %d: %w", t.Seq, store.ErrInvalidArgument)
		}
		args = append(args, t.Seq, historyEntry(t))
	}
	v, err := s.runScript(ctx, scriptNodeHeartbeat, keys, args...)
	if err != nil {
		return nil, err
	}
	r := &reply{v: v}
	res := &store.NodeHeartbeatResult{Drain: r.int() == 1}
	ver, verr := strconv.ParseInt(r.str(), 10, 64)
	res.Now = msTime(r.int())
	if r.err != nil {
		return nil, r.err
	}
	if verr != nil {
		return nil, fmt.Errorf("redisstore: control version: %w", errCorrupt)
	}
	res.ControlVersion = ver
	if ver != params.ControlVersion || params.ControlVersion == 0 {
		res.PausedQueues = []string{}
		for range v[3:] {
			res.PausedQueues = append(res.PausedQueues, r.str())
		}
		sort.Strings(res.PausedQueues)
	}
	return res, r.err
}

// storeNow answers the store's clock: the test clock when one is set, else
// the server's TIME from cmd, sent in the caller's pipeline.
func (s *Store) storeNow(cmd *redis.TimeCmd) time.Time {
	if s.cfg.clock != nil {
		return s.cfg.clock.Now()
	}
	return cmd.Val()
}

// NodeRemove deletes a node's keys and index entries. See
// [store.NodeStore.NodeRemove].
func (s *Store) NodeRemove(ctx context.Context, params *store.NodeRemoveParams) error {
	if ids.Check(params.ID) != nil {
		return nil
	}
	k := s.keys
	caps, err := s.client.HGet(ctx, k.node(params.ID), nodeFieldCaps).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return mapErr(err)
	}
	_, err = s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, k.node(params.ID), k.nodeHistory(params.ID))
		p.ZRem(ctx, k.nodesLive(), params.ID)
		for _, c := range names(caps) {
			if ids.Check(c) == nil {
				p.ZRem(ctx, k.nodesByCapability(c), params.ID)
			}
		}
		return nil
	})
	return mapErr(err)
}

// NodeGet reads one node in one pipeline. See [store.NodeStore.NodeGet].
func (s *Store) NodeGet(ctx context.Context, params *store.NodeGetParams) (*store.NodeRecord, error) {
	if ids.Check(params.ID) != nil {
		return nil, fmt.Errorf("redisstore: node %s: %w", ids.Quote(params.ID), store.ErrNotFound)
	}
	var tm *redis.TimeCmd
	var h *redis.MapStringStringCmd
	var l *redis.StringSliceCmd
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		tm = p.Time(ctx)
		h = p.HGetAll(ctx, s.keys.node(params.ID))
		l = p.LRange(ctx, s.keys.nodeHistory(params.ID), 0, -1)
		return nil
	})
	if err != nil {
		return nil, mapErr(err)
	}
	r, err := nodeRecord(params.ID, h.Val(), l.Val(), s.storeNow(tm))
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("redisstore: node %s: %w", ids.Quote(params.ID), store.ErrNotFound)
	}
	return r, nil
}

// NodeList reads the index, then every live node in one pipeline. See
// [store.NodeStore.NodeList].
func (s *Store) NodeList(ctx context.Context, params *store.NodeListParams) (*store.NodeListResult, error) {
	index := s.keys.nodesLive()
	if params.Capability != "" {
		if ids.Check(params.Capability) != nil {
			return &store.NodeListResult{}, nil
		}
		index = s.keys.nodesByCapability(params.Capability)
	}
	var tm *redis.TimeCmd
	var z *redis.ZSliceCmd
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		tm = p.Time(ctx)
		z = p.ZRangeWithScores(ctx, index, 0, -1)
		return nil
	})
	if err != nil {
		return nil, mapErr(err)
	}
	now := s.storeNow(tm)
	var live []string
	for _, e := range z.Val() {
		if id, ok := e.Member.(string); ok && int64(e.Score) > now.UnixMilli() {
			live = append(live, id)
		}
	}
	sort.Strings(live)
	res := &store.NodeListResult{}
	if len(live) == 0 {
		return res, nil
	}
	hs := make([]*redis.MapStringStringCmd, len(live))
	ls := make([]*redis.StringSliceCmd, len(live))
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range live {
			hs[i] = p.HGetAll(ctx, s.keys.node(id))
			ls[i] = p.LRange(ctx, s.keys.nodeHistory(id), 0, -1)
		}
		return nil
	})
	if err != nil {
		return nil, mapErr(err)
	}
	for i, id := range live {
		r, err := nodeRecord(id, hs[i].Val(), ls[i].Val(), now)
		if err != nil {
			return nil, err
		}
		if r != nil {
			res.Nodes = append(res.Nodes, r)
		}
	}
	return res, nil
}

// NodeDrain sets a live node's drain flag in one script call. See
// [store.NodeStore.NodeDrain].
func (s *Store) NodeDrain(ctx context.Context, params *store.NodeDrainParams) error {
	if ids.Check(params.ID) != nil {
		return fmt.Errorf("redisstore: node %s: %w", ids.Quote(params.ID), store.ErrNotFound)
	}
	v, err := s.runScript(ctx, scriptNodeDrain, []string{s.keys.node(params.ID)}, s.nowArg())
	if err != nil {
		return err
	}
	r := &reply{v: v}
	if err := codeErr(r.int()); err != nil {
		return fmt.Errorf("redisstore: node %s: %w", ids.Quote(params.ID), err)
	}
	return r.err
}

// QueuePause pauses or resumes a queue in one script call. See
// [store.NodeStore.QueuePause].
func (s *Store) QueuePause(ctx context.Context, params *store.QueuePauseParams) (*store.QueuePauseResult, error) {
	if err := ids.Check(params.Queue); err != nil {
		return nil, fmt.Errorf("redisstore: queue %s %v: %w", ids.Quote(params.Queue), err, store.ErrInvalidArgument)
	}
	v, err := s.runScript(ctx, scriptQueuePause, []string{s.keys.pausedQueues(), s.keys.control()},
		s.nowArg(), params.Queue, boolArg(params.Resume))
	if err != nil {
		return nil, err
	}
	r := &reply{v: v}
	res := &store.QueuePauseResult{Changed: r.int() == 1, ControlVersion: r.int()}
	return res, r.err
}

// QueueListPaused reads the paused set and the version in one pipeline. See
// [store.NodeStore.QueueListPaused].
func (s *Store) QueueListPaused(ctx context.Context, _ *store.QueueListPausedParams) (*store.QueueListPausedResult, error) {
	var m *redis.StringSliceCmd
	var v *redis.StringCmd
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		m = p.SMembers(ctx, s.keys.pausedQueues())
		v = p.Get(ctx, s.keys.control())
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, mapErr(err)
	}
	res := &store.QueueListPausedResult{Queues: m.Val()}
	if res.Queues == nil {
		res.Queues = []string{}
	}
	sort.Strings(res.Queues)
	if s := v.Val(); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("redisstore: control version: %w", errCorrupt)
		}
		res.ControlVersion = n
	}
	return res, nil
}
