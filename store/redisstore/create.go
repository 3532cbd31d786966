package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// normalize fills the defaults a workflow may leave empty (strategy
// continue, queue "default"), as memstore does, and checks what the store
// relies on: names that go into keys and records are valid ids, task names
// are unique, dependencies name other tasks, and enumerations are in range.
// Everything else (cycles, sizes) is the scheduler's validation.
func normalize(wf *store.WorkflowSpec) (*store.WorkflowSpec, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("redisstore: workflow %s: "+format+": %w", append(append([]any{ids.Quote(wf.Name)}, args...), store.ErrInvalidArgument)...)
	}
	out := *wf
	if out.Strategy == "" {
		out.Strategy = store.StrategyContinue
	}
	if _, err := strategyLetter(out.Strategy); err != nil {
		return nil, err
	}
	out.Tasks = make([]store.TaskSpec, len(wf.Tasks))
	index := make(map[string]bool, len(wf.Tasks))
	for i := range wf.Tasks {
		t := wf.Tasks[i]
		if err := ids.Check(t.Name); err != nil {
			return nil, bad("task name %s %v", ids.Quote(t.Name), err)
		}
		if index[t.Name] {
			return nil, bad("task %q listed twice", t.Name)
		}
		index[t.Name] = true
		if t.Queue == "" {
			t.Queue = store.DefaultQueue
		}
		if err := ids.Check(t.Queue); err != nil {
			return nil, bad("task %q queue %s %v", t.Name, ids.Quote(t.Queue), err)
		}
		if t.Priority < store.PriorityLow || t.Priority > store.PriorityUrgent {
			return nil, bad("task %q priority %d", t.Name, t.Priority)
		}
		if t.Join != store.JoinAll && t.Join != store.JoinAny {
			return nil, bad("task %q join %d", t.Name, t.Join)
		}
		out.Tasks[i] = t
	}
	for i := range out.Tasks {
		t := &out.Tasks[i]
		seen := make(map[string]bool, len(t.Deps))
		for _, d := range t.Deps {
			if !index[d.Task] || d.Task == t.Name || seen[d.Task] {
				return nil, bad("task %q depends on %s", t.Name, ids.Quote(d.Task))
			}
			seen[d.Task] = true
			if d.On > store.OnFailure {
				return nil, bad("task %q condition %d", t.Name, d.On)
			}
		}
	}
	return &out, nil
}

// RunCreate stores a workflow as a new run. See [store.Store.RunCreate].
// Round trips: the create script, with an id from the store's block (one
// INCRBY of the sequence per idBlockSize runs; a keyed run of more than
// createChunk tasks looks up its key index first). A run of more than
// createChunk tasks is written by one run_create_part.lua call per chunk
// and committed by run_create.lua, all in one pipeline: still one round
// trip, each script bounded by the chunk, and the run invisible until the
// commit.
func (s *Store) RunCreate(ctx context.Context, params *store.RunCreateParams) (*store.RunCreateResult, error) {
	req, found, err := s.prepareCreate(ctx, params)
	if err != nil || found != nil {
		return found, err
	}
	var v []any
	if req.parts == nil {
		v, err = s.runScript(ctx, scriptRunCreate, req.keys, req.args...)
	} else {
		v, err = s.createInParts(ctx, req.keys, req.parts, req.args)
	}
	if err != nil {
		return nil, err
	}
	return s.createAnswer(ctx, req, v)
}

// createReq is one run's create, ready to send: run_create.lua's keys and
// arguments, and the parts written before it for a large run.
type createReq struct {
	params *store.RunCreateParams
	wf     *store.WorkflowSpec
	id     string
	keys   []string
	args   []any
	parts  [][]any
}

// prepareCreate validates params and builds the create, taking the run's
// id. A large keyed run whose key is taken answers found instead.
func (s *Store) prepareCreate(ctx context.Context, params *store.RunCreateParams) (req *createReq, found *store.RunCreateResult, err error) {
	if params == nil || params.Workflow == nil || len(params.Workflow.Tasks) == 0 {
		return nil, nil, fmt.Errorf("redisstore: run create needs a workflow with tasks: %w", store.ErrInvalidArgument)
	}
	wf, err := normalize(params.Workflow)
	if err != nil {
		return nil, nil, err
	}
	if params.Key != "" {
		if err := ids.Check(params.Key); err != nil {
			return nil, nil, fmt.Errorf("redisstore: run key %s %v: %w", ids.Quote(params.Key), err, store.ErrInvalidArgument)
		}
	}
	for field, v := range map[string]string{"tenant": params.Tenant, "service": params.Service} {
		if v != "" && ids.Check(v) != nil {
			return nil, nil, fmt.Errorf("redisstore: %s %s %v: %w", field, ids.Quote(v), ids.Check(v), store.ErrInvalidArgument)
		}
	}
	strat, err := strategyLetter(wf.Strategy)
	if err != nil {
		return nil, nil, err
	}
	if err := s.checkLimits(wf); err != nil {
		return nil, nil, err
	}

	// Everything is computed before the first write.
	children := make(map[string][]edgeRef, len(wf.Tasks))
	for i := range wf.Tasks {
		for _, d := range wf.Tasks[i].Deps {
			children[d.Task] = append(children[d.Task], edgeRef{Task: wf.Tasks[i].Name, On: d.On})
		}
	}
	enc := s.values()
	mayApart := len(wf.Tasks) <= apartMaxTasks
	names := make([]string, len(wf.Tasks))
	var roots, apart []any
	taskFieldsOf := make([][]any, len(wf.Tasks))
	for i := range wf.Tasks {
		t := &wf.Tasks[i]
		names[i] = t.Name
		if len(t.Deps) == 0 {
			roots = append(roots, t.Name)
		}
		tf := encodeTask(t, enc, mayApart, s.cfg.format)
		f := []any{"d:" + t.Name, tf.def, "s:" + t.Name, newTaskState}
		if tf.parents != "" {
			f = append(f, "u:"+t.Name, tf.parents)
		}
		if ch := children[t.Name]; len(ch) > 0 {
			f = append(f, "c:"+t.Name, encodeEdges(ch))
		}
		if len(t.Limits) > 0 {
			f = append(f, "l:"+t.Name, encodeLimits(t.Limits))
		}
		if tf.apart {
			apart = append(apart, t.Name, tf.payload)
		}
		taskFieldsOf[i] = f
	}
	runFields := []any{"o", strings.Join(names, " "),
		"i", encodeRunInfo(runInfo{Workflow: wf.Name, Tenant: params.Tenant, Service: params.Service, Metadata: params.Metadata}, s.cfg.format)}
	runFields = append(runFields, "q", s.queryField(wf.Name, params))
	if params.Key != "" {
		runFields = append(runFields, "k", params.Key)
	}

	// A keyed run of one call needs no look-up first: the create finds a
	// taken key itself. A run sent in parts looks first, so that a taken key
	// costs no parts.
	var shard int
	if params.Key != "" {
		shard = int(keyHash(params.Key) % uint32(s.cfg.shards))
	}
	if params.Key != "" && len(wf.Tasks) > createChunk {
		old, err := s.client.Get(ctx, s.keys.keyIndex(shard, params.Key)).Result()
		switch {
		case err == nil:
			found, err := s.existing(ctx, old)
			return nil, found, err
		case !errors.Is(err, redis.Nil):
			return nil, nil, mapErr(err)
		}
	}
	want := -1
	if params.Key != "" {
		want = shard
	}
	id, shard, err := s.ids.take(ctx, s.client, s.keys.seq(), s.cfg.shards, want)
	if err != nil {
		return nil, nil, mapErr(err)
	}
	if _, ok := shardOf(id, s.cfg.shards); !ok {
		return nil, nil, fmt.Errorf("redisstore: unexpected run id %q", id)
	}

	// Small runs: every field in the commit. Large runs: task fields in
	// parts of createChunk tasks, the run's own fields in the commit.
	var parts [][]any
	fields := runFields
	prior := 0
	if len(wf.Tasks) <= createChunk {
		for _, f := range taskFieldsOf {
			fields = append(fields, f...)
		}
	} else {
		for i := 0; i < len(taskFieldsOf); i += createChunk {
			var part []any
			for _, f := range taskFieldsOf[i:min(i+createChunk, len(taskFieldsOf))] {
				part = append(part, f...)
			}
			prior += len(part) / 2
			parts = append(parts, part)
		}
	}
	keys := []string{s.keys.run(shard, id)}
	if params.Key != "" {
		keys = append(keys, s.keys.keyIndex(shard, params.Key))
	}
	args := make([]any, 0, 9+len(roots)+len(fields)+len(apart))
	args = append(args, s.stepArg(), s.keys.base(shard), id, strat, len(wf.Tasks), prior, len(fields)/2, len(roots), len(apart)/2)
	args = append(args, roots...)
	args = append(args, fields...)
	args = append(args, apart...)
	return &createReq{params: params, wf: wf, id: id, keys: keys, args: args, parts: parts}, nil, nil
}

// createKeyTaken is run_create.lua's reply code when the idempotency key
// names another run, whose id follows. It shares codeNotFound's value:
// createAnswer reads it before any shared code.
const createKeyTaken = 1

// createAnswer reads run_create.lua's reply.
func (s *Store) createAnswer(ctx context.Context, req *createReq, v []any) (*store.RunCreateResult, error) {
	r := &reply{v: v}
	code, val := r.int(), r.str()
	if r.err != nil {
		return nil, r.err
	}
	switch code {
	case createKeyTaken:
		return s.existing(ctx, val)
	case createAdmission:
		return nil, admissionRefusal(val)
	case codeCorrupt:
		return nil, fmt.Errorf("redisstore: run %s: parts expired before the commit", req.id)
	case codeOK:
	default:
		return nil, fmt.Errorf("redisstore: create run %s: %w", req.id, codeErr(code))
	}
	created, err := strconv.ParseInt(val, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("redisstore: create reply %q: %w", val, err)
	}
	return &store.RunCreateResult{Run: newRunRecord(req.id, req.wf, req.params, created)}, nil
}

// createInParts sends one run_create_part.lua per part and the commit in one
// pipeline. A pipeline cannot fall back from EVALSHA to EVAL per command,
// so on NOSCRIPT it loads the scripts and sends the pipeline again (parts
// are idempotent until the commit, and a commit that found parts missing
// deleted them).
func (s *Store) createInParts(ctx context.Context, keys []string, parts [][]any, commit []any) ([]any, error) {
	ttl := partTTL.Milliseconds()
	for try := 0; ; try++ {
		pipe := s.client.Pipeline()
		for _, p := range parts {
			scriptRunCreatePart.eval.EvalSha(ctx, pipe, s.guarded(keys[:1]), append([]any{ttl}, p...)...)
		}
		last := scriptRunCreate.eval.EvalSha(ctx, pipe, s.guarded(keys), commit...)
		cmds, err := pipe.Exec(ctx)
		if err != nil && try == 0 && hasNoScript(cmds) {
			for _, sc := range []*redis.Script{scriptRunCreatePart.eval, scriptRunCreate.eval} {
				if err := sc.Load(ctx, s.client).Err(); err != nil {
					return nil, mapErr(err)
				}
			}
			continue
		}
		for _, c := range cmds {
			if err := c.Err(); err != nil {
				return nil, mapErr(err)
			}
		}
		if err != nil {
			return nil, mapErr(err)
		}
		out, err := last.Slice()
		if err != nil {
			return nil, mapErr(err)
		}
		return out, nil
	}
}

func hasNoScript(cmds []redis.Cmder) bool {
	for _, c := range cmds {
		if err := c.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			return true
		}
	}
	return false
}

func (s *Store) existing(ctx context.Context, id string) (*store.RunCreateResult, error) {
	run, err := s.RunGet(ctx, &store.RunGetParams{ID: id})
	if err != nil {
		return nil, err
	}
	return &store.RunCreateResult{Run: run, Existing: true}, nil
}

// newRunRecord builds the answer of a create from what was written, so the
// create needs no read back. Root tasks due at creation are ready.
func newRunRecord(id string, wf *store.WorkflowSpec, params *store.RunCreateParams, createdMs int64) *store.Run {
	run := &store.Run{
		ID: id, Key: params.Key, Workflow: wf.Name, Strategy: wf.Strategy, Status: store.RunPending,
		Tenant: params.Tenant, Service: params.Service, Total: len(wf.Tasks),
		CreatedAt: msTime(createdMs), Tasks: make([]store.TaskInstance, len(wf.Tasks)),
	}
	if params.Metadata != nil {
		run.Metadata = make(map[string]string, len(params.Metadata))
		for k, v := range params.Metadata {
			run.Metadata[k] = v
		}
	}
	for i := range wf.Tasks {
		t := &wf.Tasks[i]
		st := store.TaskPending
		if len(t.Deps) == 0 {
			due := createdMs
			if !t.RunAt.IsZero() && ceilMillis(t.RunAt) > due {
				due = ceilMillis(t.RunAt)
			}
			if d := ceilDurMillis(t.Delay); d > 0 && createdMs+d > due {
				due = createdMs + d
			}
			if due <= createdMs {
				st = store.TaskReady
			}
		}
		queue := t.Queue
		if queue == "" {
			queue = store.DefaultQueue
		}
		run.Tasks[i] = store.TaskInstance{Name: t.Name, Handler: t.Handler, Queue: queue, Status: st}
	}
	return run
}

// queryField encodes field q of a run: what its query indexes and its
// retention need, in text Lua reads: "<workflow>:<service>:<tenant>:<S>:<F>:<C>",
// the last three the retention in ms of the run should it end completed,
// failed or cancelled, settled here at creation when WithRetentionFor gave
// rules (without rules q ends after the tenant: "<workflow>:<service>:<tenant>:"). Names
// hold no ':' (internal/ids); a workflow name that is not a valid name is
// left out, so that run is in no workflow index.
func (s *Store) queryField(workflow string, params *store.RunCreateParams) string {
	if ids.Check(workflow) != nil {
		workflow = ""
	}
	if s.cfg.retain.Uniform() {
		// No rule: the run ends with the retention of the process that
		// finishes it, as before rules existed; q stays short.
		return workflow + ":" + params.Service + ":" + params.Tenant + ":"
	}
	ret := func(st store.RunStatus) string {
		return strconv.FormatInt(s.cfg.retain.For(params.Service, string(st)).Milliseconds(), 10)
	}
	return workflow + ":" + params.Service + ":" + params.Tenant + ":" + ret(store.RunCompleted) + ":" + ret(store.RunFailed) + ":" + ret(store.RunCancelled)
}
