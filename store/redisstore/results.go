package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
	"github.com/redis/go-redis/v9"
)

// resultsPerRead is how many tasks one HMGET of TaskResults reads (two
// fields each), so that no single command holds Redis for long.
const resultsPerRead = 500

// TaskResults answers the results of the named tasks of one run that
// succeeded: one round trip, a pipeline of one HMGET of the run
// hash per 500 names, reading each task's state s:<task> and result
// r:<task>, and the run info i, which every run has, to tell a missing run.
// With ParentsOf it also reads each named task's children c:<task> and
// keeps the tasks that list it; with ParentsOf and no names it first reads
// the task's parents u:<task> (a second round trip). It writes nothing, so
// a lost reply is simply asked again. See [store.ResultStore].
func (s *Store) TaskResults(ctx context.Context, params *store.TaskResultsParams) (*store.TaskResultsResult, error) {
	_, rk, err := s.namedTasks(params.RunID, params.Tasks)
	if err != nil {
		return nil, err
	}
	names, child := params.Tasks, params.ParentsOf
	if child != "" && len(names) == 0 {
		if names, err = s.parentNames(ctx, rk, params.RunID, child); err != nil {
			return nil, err
		}
		child = "" // every name read is a parent
	}
	per := 2
	if child != "" {
		per = 3
	}
	pipe := s.client.Pipeline()
	info := pipe.HExists(ctx, rk, "i")
	var cmds []*redis.SliceCmd
	for i := 0; i < len(names); i += resultsPerRead {
		batch := names[i:min(i+resultsPerRead, len(names))]
		fields := make([]string, 0, per*len(batch))
		for _, n := range batch {
			fields = append(fields, "s:"+n, "r:"+n)
			if child != "" {
				fields = append(fields, "c:"+n)
			}
		}
		cmds = append(cmds, pipe.HMGet(ctx, rk, fields...))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, mapErr(err)
	}
	if !info.Val() {
		return nil, fmt.Errorf("redisstore: run %s: %w", ids.Quote(params.RunID), store.ErrNotFound)
	}
	res := &store.TaskResultsResult{Results: make(map[string][]byte)}
	for c, cmd := range cmds {
		vals := cmd.Val()
		for j := 0; j+per-1 < len(vals); j += per {
			name := names[c*resultsPerRead+j/per]
			st, _ := vals[j].(string)
			raw, _ := vals[j+1].(string)
			if len(st) == 0 || st[0] != 'S' {
				continue
			}
			if child != "" {
				if cs, _ := vals[j+2].(string); !listsChild(cs, child) {
					continue
				}
			}
			b, err := decodeValue(raw)
			if err != nil {
				return nil, fmt.Errorf("redisstore: result of task %s of run %s: %w", ids.Quote(name), ids.Quote(params.RunID), err)
			}
			res.Results[name] = b
		}
	}
	return res, nil
}

// parentNames reads the names of the parents of task child of run id
// (field u:<child> of its hash rk): none when the run lacks the task, and
// ErrNotFound when it lacks the run.
func (s *Store) parentNames(ctx context.Context, rk, id, child string) ([]string, error) {
	pipe := s.client.Pipeline()
	info := pipe.HExists(ctx, rk, "i")
	us := pipe.HGet(ctx, rk, "u:"+child)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, mapErr(err)
	}
	if !info.Val() {
		return nil, fmt.Errorf("redisstore: run %s: %w", ids.Quote(id), store.ErrNotFound)
	}
	deps, err := decodeEdges(child, us.Val())
	if err != nil {
		return nil, fmt.Errorf("redisstore: run %s: %w", ids.Quote(id), err)
	}
	names := make([]string, len(deps))
	for i, d := range deps {
		names[i] = d.Task
	}
	return names, nil
}

// listsChild reports whether the edge list cs of a task's children
// ("name:cond name:cond", field c:) holds an edge to child.
func listsChild(cs, child string) bool {
	for cs != "" {
		e, rest, _ := strings.Cut(cs, " ")
		if name, _, _ := strings.Cut(e, ":"); name == child {
			return true
		}
		cs = rest
	}
	return false
}

var _ store.ResultStore = (*Store)(nil)

// TaskPayloads reads the payloads of the named tasks of one run in one
// pipelined round trip: an HMGET of their definitions per 500 names, and a
// GET of each one's payload key, which only a definition saying its payload
// is kept apart reads. A task that succeeded with its payload kept apart
// has lost it (the key is dropped at its success) and is answered with
// nil. See [store.PayloadStore].
func (s *Store) TaskPayloads(ctx context.Context, params *store.TaskPayloadsParams) (*store.TaskPayloadsResult, error) {
	shard, rk, err := s.namedTasks(params.RunID, params.Tasks)
	if err != nil {
		return nil, err
	}
	pipe := s.client.Pipeline()
	info := pipe.HExists(ctx, rk, "i")
	var defs []*redis.SliceCmd
	for i := 0; i < len(params.Tasks); i += resultsPerRead {
		names := params.Tasks[i:min(i+resultsPerRead, len(params.Tasks))]
		fields := make([]string, 0, len(names))
		for _, n := range names {
			fields = append(fields, "d:"+n)
		}
		defs = append(defs, pipe.HMGet(ctx, rk, fields...))
	}
	apart := make([]*redis.StringCmd, len(params.Tasks))
	if len(params.Tasks) <= apartMaxTasks {
		for i, n := range params.Tasks {
			apart[i] = pipe.Get(ctx, s.keys.payload(shard, params.RunID, n))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, mapErr(err)
	}
	if !info.Val() {
		return nil, fmt.Errorf("redisstore: run %s: %w", ids.Quote(params.RunID), store.ErrNotFound)
	}
	res := &store.TaskPayloadsResult{Payloads: make(map[string][]byte)}
	for c, cmd := range defs {
		for j, v := range cmd.Val() {
			i := c*resultsPerRead + j
			name := params.Tasks[i]
			d, ok := v.(string)
			if !ok {
				continue
			}
			def, err := decodeDef(name, d, false)
			if err != nil {
				return nil, fmt.Errorf("redisstore: run %s: %w", ids.Quote(params.RunID), err)
			}
			p := def.spec.Payload
			if def.apart {
				p = nil
				if apart[i] != nil && apart[i].Err() == nil {
					if p, err = decodeValue(apart[i].Val()); err != nil {
						return nil, fmt.Errorf("redisstore: payload of task %s of run %s: %w", ids.Quote(name), ids.Quote(params.RunID), err)
					}
				}
			}
			res.Payloads[name] = p
		}
	}
	return res, nil
}

var _ store.PayloadStore = (*Store)(nil)

// namedTasks checks how many task names a read of run id asks for and
// answers the run's shard and hash key.
func (s *Store) namedTasks(id string, names []string) (int, string, error) {
	if len(names) > store.TaskResultsMax {
		return 0, "", fmt.Errorf("redisstore: %d task names, want at most %d: %w", len(names), store.TaskResultsMax, store.ErrInvalidArgument)
	}
	shard, err := s.runShard(id)
	if err != nil {
		return 0, "", err
	}
	return shard, s.keys.run(shard, id), nil
}
