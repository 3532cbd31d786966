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

// RunSpecGet answers a run's definition as it was stored: one HGETALL of
// the run hash, as RunGet reads it (fields i and m for the workflow's
// name and strategy, o for the task order, d:<task> and u:<task> for each
// definition, s:<task> and r:<task> for the results), and, only when
// payloads are asked for and a definition says its payload is kept apart
// (a run of at most 16 tasks), a second round trip: one pipelined GET of
// each such task's payload key. A key dropped at its task's success
// answers that task's payload nil and names it in PayloadsDropped. It
// writes nothing, so a lost reply is simply asked again. See
// [store.RunSpecStore].
func (s *Store) RunSpecGet(ctx context.Context, params *store.RunSpecGetParams) (*store.RunSpecGetResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	shard, err := s.runShard(params.ID)
	if err != nil {
		return nil, err
	}
	h, err := s.client.HGetAll(ctx, s.keys.run(shard, params.ID)).Result()
	if err != nil {
		return nil, mapErr(err)
	}
	spec, apart, err := decodeRunSpec(params.ID, h, params.Payloads)
	if err != nil {
		return nil, err
	}
	res := &store.RunSpecGetResult{Spec: spec}
	if params.Payloads && len(apart) > 0 {
		if res.PayloadsDropped, err = s.readApart(ctx, shard, params.ID, spec, apart); err != nil {
			return nil, err
		}
	}
	if params.Results {
		if res.Results, err = decodeRunResults(params.ID, spec, h); err != nil {
			return nil, err
		}
	}
	return res, nil
}

var _ store.RunSpecStore = (*Store)(nil)

// decodeRunSpec builds a run's workflow from its hash fields; apart lists
// the indexes of the tasks whose payload is kept in a key of its own. The
// definitions' inline payloads are kept only with payloads set. A hash
// without m (no run, or a large run not yet committed) is ErrNotFound.
func decodeRunSpec(id string, h map[string]string, payloads bool) (*store.WorkflowSpec, []int, error) {
	ms, ok := h["m"]
	if !ok {
		return nil, nil, fmt.Errorf("redisstore: run %s: %w", ids.Quote(id), store.ErrNotFound)
	}
	info, err := decodeRunInfo(h["i"])
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", id, err)
	}
	m, err := decodeMeta(ms)
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", id, err)
	}
	var names []string
	if o := h["o"]; o != "" {
		names = strings.Split(o, " ")
	}
	if len(names) != m.total {
		return nil, nil, corrupt("run %s lists %d tasks, total %d", id, len(names), m.total)
	}
	spec := &store.WorkflowSpec{Name: info.Workflow, Strategy: m.strategy, Tasks: make([]store.TaskSpec, len(names))}
	var apart []int
	for i, name := range names {
		d, err := decodeDef(name, h["d:"+name], false)
		if err != nil {
			return nil, nil, fmt.Errorf("run %s: %w", id, err)
		}
		t := d.spec
		if t.Deps, err = decodeEdges(name, h["u:"+name]); err != nil {
			return nil, nil, fmt.Errorf("run %s: %w", id, err)
		}
		if len(t.Deps) != d.deps {
			return nil, nil, corrupt("run %s task %q lists %d dependencies, header %d", id, name, len(t.Deps), d.deps)
		}
		if !payloads {
			t.Payload = nil
		}
		if d.apart {
			apart = append(apart, i)
		}
		spec.Tasks[i] = t
	}
	return spec, apart, nil
}

// readApart reads the payload keys of the tasks of spec at indexes apart
// into their specs, in one pipeline, and answers the names of those whose
// key is gone.
func (s *Store) readApart(ctx context.Context, shard int, id string, spec *store.WorkflowSpec, apart []int) ([]string, error) {
	pipe := s.client.Pipeline()
	gets := make([]*redis.StringCmd, len(apart))
	for j, i := range apart {
		gets[j] = pipe.Get(ctx, s.keys.payload(shard, id, spec.Tasks[i].Name))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, mapErr(err)
	}
	var dropped []string
	for j, i := range apart {
		t := &spec.Tasks[i]
		if errors.Is(gets[j].Err(), redis.Nil) {
			dropped = append(dropped, t.Name)
			continue
		}
		p, err := decodeValue(gets[j].Val())
		if err != nil {
			return nil, fmt.Errorf("redisstore: payload of task %s of run %s: %w", ids.Quote(t.Name), ids.Quote(id), err)
		}
		t.Payload = p
	}
	return dropped, nil
}

// decodeRunResults answers the results of the tasks of spec that
// succeeded, from the run's hash fields: nil for one without a result.
func decodeRunResults(id string, spec *store.WorkflowSpec, h map[string]string) (map[string][]byte, error) {
	out := make(map[string][]byte)
	for i := range spec.Tasks {
		name := spec.Tasks[i].Name
		if st := h["s:"+name]; len(st) == 0 || st[0] != 'S' {
			continue
		}
		var b []byte
		if raw, ok := h["r:"+name]; ok {
			var err error
			if b, err = decodeValue(raw); err != nil {
				return nil, fmt.Errorf("redisstore: result of task %s of run %s: %w", ids.Quote(name), ids.Quote(id), err)
			}
		}
		out[name] = b
	}
	return out, nil
}
