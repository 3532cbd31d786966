// Package redisstore is the Redis [plait.Store]: every transition is one Lua
// script over keys that share one hash tag, so it runs unchanged on a single
// Redis, behind Sentinel, or on Redis Cluster.
//
// # Layout
//
// A run and all its keys live in one shard (one hash tag); each shard also
// holds its own ready lists, delayed sets, lease set and wake-up list, so
// every script touches one slot. keys.go describes the keys and
// docs/redis-schema.md maps them to the structures of the design documents.
//
// # Ownership
//
// The caller owns the client given to [New] and closes it; the store never
// closes it.
//
// # Eviction
//
// Redis must run with maxmemory-policy noeviction: an evicting policy can
// drop a run or a lease entry and break the guarantees. [New] warns loudly
// when it sees another policy, and refuses to start under
// [WithStrictEviction]. A write refused for lack of memory (OOM) returns
// [plait.ErrStoreFull] with nothing half-written.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/clock"
	"github.com/plaitdag/plait/internal/ids"
)

// Option defaults.
const (
	// PrefixDefault is the key prefix.
	PrefixDefault = "plait"
	// ShardsDefault is the number of hash-tag shards.
	ShardsDefault = 1
	// RetentionDefault is how long a finished run's keys are kept.
	RetentionDefault = 24 * time.Hour
	// MaxShards bounds WithShards.
	MaxShards = 16384
)

// Tuning of the blocking waits and bounded script work.
const (
	// waitChunk caps one blocking BLPOP, so a wait notices its context and
	// its timeout without relying on client-side deadlines.
	waitChunk = time.Second
	// promoteBound caps how many due delayed tasks one claim moves per queue.
	promoteBound = 4096
	// createChunk is the most tasks RunCreate writes in one script call; a
	// larger run is written in parts, pipelined, and committed last.
	createChunk = 256
	// partTTL bounds the life of a part of a run whose commit never came.
	partTTL = time.Hour
	// apartMaxTasks is the largest run whose long payloads are kept in
	// their own keys, so that the run hash keeps Redis's compact listpack
	// encoding (at most 128 fields of at most 64 bytes each); a larger run's
	// hash is a hashtable anyway.
	apartMaxTasks = 16
)

// ErrEvictionPolicy is returned by [New] under [WithStrictEviction] when the
// server's maxmemory-policy is not noeviction or cannot be read.
var ErrEvictionPolicy = errors.New("redisstore: maxmemory-policy is not noeviction")

// Option configures a [Store].
type Option func(*config)

// config holds the settings of a Store. A zero config means all defaults.
type config struct {
	// prefix starts every key. Defaults to PrefixDefault.
	prefix string
	// shards is the number of hash-tag shards. Defaults to ShardsDefault.
	shards int
	// clock, when set, replaces Redis TIME (tests only).
	clock plait.Clock
	// retention is the TTL of a finished run's keys. Defaults to
	// RetentionDefault.
	retention time.Duration
	// logger receives warnings. Defaults to slog.Default().
	logger *slog.Logger
	// strictEviction refuses to start unless maxmemory-policy is noeviction.
	strictEviction bool
	// compress is the size from which payloads and results are compressed;
	// 0 turns compression off.
	compress int
}

// WithPrefix sets the key prefix. Defaults to PrefixDefault. It must be a
// non-empty name without braces; New rejects it otherwise.
func WithPrefix(p string) Option { return func(c *config) { c.prefix = p } }

// WithShards spreads runs and queues over n hash-tag shards (slots), the
// scale-out knob for Redis Cluster. Defaults to ShardsDefault. Every process
// sharing a prefix must use the same n, and n must not change while runs
// exist: a run's shard is its id modulo n. Below 1 or above MaxShards is
// an error.
func WithShards(n int) Option { return func(c *config) { c.shards = n } }

// WithClock makes the store pass "now" from clk to its scripts instead of
// using Redis TIME. For tests only: in production the server's clock is the
// one clock every process agrees on. Nil keeps Redis TIME.
func WithClock(clk plait.Clock) Option { return func(c *config) { c.clock = clk } }

// WithRetention sets how long a finished run's keys are kept. Defaults to
// RetentionDefault; zero means the default; negative is an error.
func WithRetention(d time.Duration) Option { return func(c *config) { c.retention = d } }

// WithLogger sets the logger for warnings. Defaults to slog.Default(); nil
// means the default.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithStrictEviction makes New fail with [ErrEvictionPolicy] unless the
// server reports maxmemory-policy noeviction. Without it New only logs a
// warning.
func WithStrictEviction() Option { return func(c *config) { c.strictEviction = true } }

// WithCompression compresses payloads and results of at least
// thresholdBytes bytes with DEFLATE (compress/flate) when that makes them
// smaller. It is transparent to callers: every stored value carries a flag
// byte, so values written with and without compression read alike, and
// processes sharing a prefix may differ in this option. Zero (the default)
// turns compression off; negative is an error.
func WithCompression(thresholdBytes int) Option {
	return func(c *config) { c.compress = thresholdBytes }
}

func (c *config) withDefaults() {
	if c.prefix == "" {
		c.prefix = PrefixDefault
	}
	if c.shards == 0 {
		c.shards = ShardsDefault
	}
	if c.retention == 0 {
		c.retention = RetentionDefault
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
}

func (c *config) validate() error {
	var errs []error
	if err := ids.Check(c.prefix); err != nil {
		errs = append(errs, fmt.Errorf("redisstore: prefix %q %v: %w", c.prefix, err, plait.ErrInvalidOption))
	}
	if c.shards < 1 || c.shards > MaxShards {
		errs = append(errs, fmt.Errorf("redisstore: %d shards, want 1..%d: %w", c.shards, MaxShards, plait.ErrInvalidOption))
	}
	if c.compress < 0 {
		errs = append(errs, fmt.Errorf("redisstore: compression threshold %d is negative: %w", c.compress, plait.ErrInvalidOption))
	}
	if c.retention < time.Millisecond {
		errs = append(errs, fmt.Errorf("redisstore: retention %s is below 1ms: %w", c.retention, plait.ErrInvalidOption))
	}
	return errors.Join(errs...)
}

// Store is a [plait.Store] over a redis.UniversalClient. Build one with
// [New]; it is safe for concurrent use by many goroutines and processes.
type Store struct {
	client  redis.UniversalClient
	cluster bool
	// functions: scripts run as FCALL of the loaded library (see scripts.go).
	functions bool
	cfg       config
	keys      keys
	// next rotates the first shard a claim, sweep or wait visits.
	next atomic.Uint32
	// ids is the block of run ids this store reserved.
	ids idBlock
}

// New returns a Store over client. The caller owns client and closes it
// after the store's last use; the store never closes it. New checks the
// server's maxmemory-policy (see [WithStrictEviction]).
func New(ctx context.Context, client redis.UniversalClient, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, fmt.Errorf("redisstore: nil client: %w", plait.ErrInvalidOption)
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Store{client: client, cfg: cfg, keys: keys{prefix: cfg.prefix}}
	_, s.cluster = client.(*redis.ClusterClient)
	if err := s.checkEviction(ctx); err != nil {
		return nil, err
	}
	s.functions = s.loadLibrary(ctx) == nil
	return s, nil
}

// checkEviction reads maxmemory-policy with CONFIG GET, then INFO memory,
// and warns (or fails, when strict) unless it is noeviction.
func (s *Store) checkEviction(ctx context.Context) error {
	policy := ""
	if m, err := s.client.ConfigGet(ctx, "maxmemory-policy").Result(); err == nil {
		policy = m["maxmemory-policy"]
	}
	if policy == "" {
		if info, err := s.client.Info(ctx, "memory").Result(); err == nil {
			for _, line := range strings.Split(info, "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(line), "maxmemory_policy:"); ok {
					policy = v
				}
			}
		}
	}
	switch {
	case policy == "noeviction":
		return nil
	case policy == "":
		if s.cfg.strictEviction {
			return fmt.Errorf("%w: the server does not report it", ErrEvictionPolicy)
		}
		s.cfg.logger.Warn("redisstore: cannot read the server's maxmemory-policy; it must be noeviction, or runs and leases may be evicted")
	default:
		if s.cfg.strictEviction {
			return fmt.Errorf("%w: it is %s", ErrEvictionPolicy, policy)
		}
		s.cfg.logger.Warn("redisstore: maxmemory-policy is not noeviction; runs and leases may be evicted under memory pressure",
			slog.String("maxmemory-policy", policy))
	}
	return nil
}

// nowArg is the "now" argument of every script: the injected clock in ms,
// or "" to let the script read Redis TIME.
func (s *Store) nowArg() string {
	if s.cfg.clock == nil {
		return ""
	}
	return strconv.FormatInt(s.cfg.clock.Now().UnixMilli(), 10)
}

func (s *Store) retentionMs() int64 { return s.cfg.retention.Milliseconds() }

// shardOrder returns every shard once, starting at a rotating one.
func (s *Store) shardOrder() []int {
	n := s.cfg.shards
	out := make([]int, n)
	start := 0
	if n > 1 {
		start = int(s.next.Add(1) % uint32(n))
	}
	for i := range out {
		out[i] = (start + i) % n
	}
	return out
}

func (s *Store) values() valueCodec { return valueCodec{threshold: s.cfg.compress} }

// wakeKeys returns the wake lists of the queues on one shard.
func (s *Store) wakeKeys(shard int, queues []string) []string {
	out := make([]string, len(queues))
	for i, q := range queues {
		out[i] = s.keys.wake(shard, q)
	}
	return out
}

// queueKeys returns, per queue, its delayed zset and its four ready lists
// (urgent first): the KEYS layout claim.lua and finish_claim.lua expect.
func (s *Store) queueKeys(shard int, queues []string) []string {
	out := make([]string, 0, 5*len(queues))
	for _, q := range queues {
		out = append(out, s.keys.delayed(shard, q))
		for p := 3; p >= 0; p-- {
			out = append(out, s.keys.ready(shard, q, p))
		}
	}
	return out
}

func checkQueues(queues []string) ([]string, error) {
	if len(queues) == 0 {
		return []string{plait.DefaultQueue}, nil
	}
	seen := make(map[string]bool, len(queues))
	out := make([]string, 0, len(queues))
	for _, q := range queues {
		if err := ids.Check(q); err != nil {
			return nil, fmt.Errorf("redisstore: queue %q %v: %w", q, err, plait.ErrInvalidArgument)
		}
		if !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	return out, nil
}

// runShard returns the shard of a run id, or ErrNotFound for an id this
// store cannot have issued.
func (s *Store) runShard(id string) (int, error) {
	shard, ok := shardOf(id, s.cfg.shards)
	if !ok {
		return 0, fmt.Errorf("redisstore: run %q: %w", id, plait.ErrNotFound)
	}
	return shard, nil
}

// normalize fills the defaults a workflow may leave empty (strategy
// continue, queue "default"), as memstore does, and checks what the store
// relies on: names that go into keys and records are valid ids, task names
// are unique, dependencies name other tasks, and enumerations are in range.
// Everything else (cycles, sizes) is the scheduler's validation.
func normalize(wf *plait.WorkflowSpec) (*plait.WorkflowSpec, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("redisstore: workflow %q: "+format+": %w", append(append([]any{wf.Name}, args...), plait.ErrInvalidArgument)...)
	}
	out := *wf
	if out.Strategy == "" {
		out.Strategy = plait.StrategyContinue
	}
	if _, err := strategyLetter(out.Strategy); err != nil {
		return nil, err
	}
	out.Tasks = make([]plait.TaskSpec, len(wf.Tasks))
	index := make(map[string]bool, len(wf.Tasks))
	for i := range wf.Tasks {
		t := wf.Tasks[i]
		if err := ids.Check(t.Name); err != nil {
			return nil, bad("task name %q %v", t.Name, err)
		}
		if index[t.Name] {
			return nil, bad("task %q listed twice", t.Name)
		}
		index[t.Name] = true
		if t.Queue == "" {
			t.Queue = plait.DefaultQueue
		}
		if err := ids.Check(t.Queue); err != nil {
			return nil, bad("task %q queue %q %v", t.Name, t.Queue, err)
		}
		if t.Priority < plait.PriorityLow || t.Priority > plait.PriorityUrgent {
			return nil, bad("task %q priority %d", t.Name, t.Priority)
		}
		if t.Join != plait.JoinAll && t.Join != plait.JoinAny {
			return nil, bad("task %q join %d", t.Name, t.Join)
		}
		out.Tasks[i] = t
	}
	for i := range out.Tasks {
		t := &out.Tasks[i]
		seen := make(map[string]bool, len(t.Deps))
		for _, d := range t.Deps {
			if !index[d.Task] || d.Task == t.Name || seen[d.Task] {
				return nil, bad("task %q depends on %q", t.Name, d.Task)
			}
			seen[d.Task] = true
			if d.On > plait.OnFailure {
				return nil, bad("task %q condition %d", t.Name, d.On)
			}
		}
	}
	return &out, nil
}

// RunCreate stores a workflow as a new run. See [plait.Store.RunCreate].
// Round trips: the create script, with an id from the store's block (one
// INCRBY of the sequence per idBlockSize runs; a keyed run of more than
// createChunk tasks looks up its key index first). A run of more than createChunk
// tasks is written by one create_part.lua call per chunk and committed by
// create_run.lua, all in one pipeline: still one round trip, each script
// bounded by the chunk, and the run invisible until the commit.
func (s *Store) RunCreate(ctx context.Context, params *plait.RunCreateParams) (*plait.RunCreateResult, error) {
	req, found, err := s.prepareCreate(ctx, params)
	if err != nil || found != nil {
		return found, err
	}
	var v []any
	if req.parts == nil {
		v, err = s.runScript(ctx, scriptCreateRun, req.keys, req.args...)
	} else {
		v, err = s.createInParts(ctx, req.keys, req.parts, req.args)
	}
	if err != nil {
		return nil, err
	}
	return s.createAnswer(ctx, req, v)
}

// createReq is one run's create, ready to send: create_run.lua's keys and
// arguments, and the parts written before it for a large run.
type createReq struct {
	params *plait.RunCreateParams
	wf     *plait.WorkflowSpec
	id     string
	keys   []string
	args   []any
	parts  [][]any
}

// prepareCreate validates params and builds the create, taking the run's
// id. A large keyed run whose key is taken answers found instead.
func (s *Store) prepareCreate(ctx context.Context, params *plait.RunCreateParams) (req *createReq, found *plait.RunCreateResult, err error) {
	if params == nil || params.Workflow == nil || len(params.Workflow.Tasks) == 0 {
		return nil, nil, fmt.Errorf("redisstore: run create needs a workflow with tasks: %w", plait.ErrInvalidArgument)
	}
	wf, err := normalize(params.Workflow)
	if err != nil {
		return nil, nil, err
	}
	if params.Key != "" {
		if err := ids.Check(params.Key); err != nil {
			return nil, nil, fmt.Errorf("redisstore: run key %q %v: %w", params.Key, err, plait.ErrInvalidArgument)
		}
	}
	strat, err := strategyLetter(wf.Strategy)
	if err != nil {
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
		tf := encodeTask(t, enc, mayApart)
		f := []any{"d:" + t.Name, tf.def, "s:" + t.Name, "P,0,0,0,0,0,,,,"}
		if tf.parents != "" {
			f = append(f, "u:"+t.Name, tf.parents)
		}
		if ch := children[t.Name]; len(ch) > 0 {
			f = append(f, "c:"+t.Name, encodeEdges(ch))
		}
		if tf.apart {
			apart = append(apart, t.Name, tf.payload)
		}
		taskFieldsOf[i] = f
	}
	runFields := []any{"o", strings.Join(names, " "),
		"i", encodeRunInfo(runInfo{Workflow: wf.Name, Tenant: params.Tenant, Service: params.Service, Metadata: params.Metadata})}
	if params.Key != "" {
		runFields = append(runFields, "k", params.Key)
	}

	// A keyed run of one call needs no look-up first: the create finds a
	// taken key itself. A run sent in parts looks first, so that a taken key
	// costs no parts.
	var shard int
	if params.Key != "" {
		shard = int(fnv32a(params.Key) % uint32(s.cfg.shards))
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
	seq, err := s.ids.take(ctx, s.client, s.keys.seq(), s.cfg.shards, want)
	if err != nil {
		return nil, nil, mapErr(err)
	}
	if seq < 1 {
		return nil, nil, fmt.Errorf("redisstore: unexpected run id %d", seq)
	}
	shard = int(seq % int64(s.cfg.shards))
	id := strconv.FormatInt(seq, 10)

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
	args = append(args, s.nowArg(), s.keys.base(shard), id, strat, len(wf.Tasks), prior, len(fields)/2, len(roots), len(apart)/2)
	args = append(args, roots...)
	args = append(args, fields...)
	args = append(args, apart...)
	return &createReq{params: params, wf: wf, id: id, keys: keys, args: args, parts: parts}, nil, nil
}

// createAnswer reads create_run.lua's reply.
func (s *Store) createAnswer(ctx context.Context, req *createReq, v []any) (*plait.RunCreateResult, error) {
	r := &reply{v: v}
	code, val := r.int(), r.str()
	if r.err != nil {
		return nil, r.err
	}
	switch code {
	case 1:
		return s.existing(ctx, val)
	case codeCorrupt:
		return nil, fmt.Errorf("redisstore: run %s: parts expired before the commit", req.id)
	}
	created, err := strconv.ParseInt(val, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("redisstore: create reply %q: %w", val, err)
	}
	return &plait.RunCreateResult{Run: newRunRecord(req.id, req.wf, req.params, created)}, nil
}

// createInParts sends one create_part.lua per part and the commit in one
// pipeline. A pipeline cannot fall back from EVALSHA to EVAL per command,
// so on NOSCRIPT it loads the scripts and sends the pipeline again (parts
// are idempotent until the commit, and a commit that found parts missing
// deleted them).
func (s *Store) createInParts(ctx context.Context, keys []string, parts [][]any, commit []any) ([]any, error) {
	ttl := partTTL.Milliseconds()
	for try := 0; ; try++ {
		pipe := s.client.Pipeline()
		for _, p := range parts {
			scriptCreatePart.eval.EvalSha(ctx, pipe, keys[:1], append([]any{ttl}, p...)...)
		}
		last := scriptCreateRun.eval.EvalSha(ctx, pipe, keys, commit...)
		cmds, err := pipe.Exec(ctx)
		if err != nil && try == 0 && hasNoScript(cmds) {
			for _, sc := range []*redis.Script{scriptCreatePart.eval, scriptCreateRun.eval} {
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

func (s *Store) existing(ctx context.Context, id string) (*plait.RunCreateResult, error) {
	run, err := s.RunGet(ctx, &plait.RunGetParams{ID: id})
	if err != nil {
		return nil, err
	}
	return &plait.RunCreateResult{Run: run, Existing: true}, nil
}

// newRunRecord builds the answer of a create from what was written, so the
// create needs no read back. Root tasks due at creation are ready.
func newRunRecord(id string, wf *plait.WorkflowSpec, params *plait.RunCreateParams, createdMs int64) *plait.Run {
	run := &plait.Run{
		ID: id, Key: params.Key, Workflow: wf.Name, Strategy: wf.Strategy, Status: plait.RunPending,
		Tenant: params.Tenant, Service: params.Service, Total: len(wf.Tasks),
		CreatedAt: msTime(createdMs), Tasks: make([]plait.TaskInstance, len(wf.Tasks)),
	}
	if params.Metadata != nil {
		run.Metadata = make(map[string]string, len(params.Metadata))
		for k, v := range params.Metadata {
			run.Metadata[k] = v
		}
	}
	for i := range wf.Tasks {
		t := &wf.Tasks[i]
		st := plait.TaskPending
		if len(t.Deps) == 0 {
			due := createdMs
			if !t.RunAt.IsZero() && ceilMillis(t.RunAt) > due {
				due = ceilMillis(t.RunAt)
			}
			if d := ceilDurMillis(t.Delay); d > 0 && createdMs+d > due {
				due = createdMs + d
			}
			if due <= createdMs {
				st = plait.TaskReady
			}
		}
		run.Tasks[i] = plait.TaskInstance{Name: t.Name, Handler: t.Handler, Status: st}
	}
	return run
}

// RunGet returns a run with its tasks: one HGETALL. See [plait.Store.RunGet].
func (s *Store) RunGet(ctx context.Context, params *plait.RunGetParams) (*plait.Run, error) {
	shard, err := s.runShard(params.ID)
	if err != nil {
		return nil, err
	}
	h, err := s.client.HGetAll(ctx, s.keys.run(shard, params.ID)).Result()
	if err != nil {
		return nil, mapErr(err)
	}
	if len(h) == 0 {
		return nil, fmt.Errorf("redisstore: run %q: %w", params.ID, plait.ErrNotFound)
	}
	return decodeRun(params.ID, h)
}

// RunCancel cancels a run. See [plait.Store.RunCancel]. One round trip: the
// script answers with the run's fields.
func (s *Store) RunCancel(ctx context.Context, params *plait.RunCancelParams) (*plait.Run, error) {
	shard, err := s.runShard(params.ID)
	if err != nil {
		return nil, err
	}
	v, err := s.runScript(ctx, scriptCancelRun, []string{s.keys.run(shard, params.ID)},
		s.nowArg(), s.keys.base(shard), s.retentionMs(), params.ID, params.Reason)
	if err != nil {
		return nil, err
	}
	r := &reply{v: v}
	code := r.int()
	if r.err != nil {
		return nil, r.err
	}
	if err := codeErr(code); err != nil {
		return nil, fmt.Errorf("redisstore: cancel run %q: %w", params.ID, err)
	}
	h := make(map[string]string, (len(v)-1)/2)
	for r.i+1 < len(v) {
		k := r.str()
		h[k] = r.str()
	}
	if r.err != nil {
		return nil, r.err
	}
	return decodeRun(params.ID, h)
}

// RunWait blocks until the run is terminal. A run not finished yet is
// waited for on its pub/sub channel, to which the script that ends the run
// publishes: RunWait subscribes first and reads the run after, so an end
// between the two is seen by the read. A finished run costs no memory for
// its waiters. While waiting it reads the run again every waitChunk, which
// covers a message lost to a reconnect. See [plait.Store.RunWait].
func (s *Store) RunWait(ctx context.Context, params *plait.RunWaitParams) (*plait.Run, error) {
	shard, err := s.runShard(params.ID)
	if err != nil {
		return nil, err
	}
	run, err := s.RunGet(ctx, &plait.RunGetParams{ID: params.ID})
	if err != nil || run.Status.Terminal() {
		return run, err
	}
	ps := s.client.Subscribe(ctx, s.keys.done(shard, params.ID))
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, mapErr(err)
	}
	msgs := ps.Channel()
	for {
		run, err := s.RunGet(ctx, &plait.RunGetParams{ID: params.ID})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		if run.Status.Terminal() {
			return run, nil
		}
		t := time.NewTimer(waitChunk)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-msgs:
		case <-t.C:
		}
		t.Stop()
	}
}

// blpop blocks on keys for at most d (and never past ctx's end) and reports
// whether it took a token. With putBack, a token taken is pushed back for
// other waiters; a token taken after ctx ended is always pushed back, so an
// abandoned wait loses no wake-up.
func (s *Store) blpop(ctx context.Context, keys []string, d time.Duration, putBack bool) (bool, error) {
	if dl, ok := ctx.Deadline(); ok {
		if left := dl.Sub(clock.Real{}.Now()); left < d {
			d = left
		}
	}
	if d < time.Millisecond {
		d = time.Millisecond
	}
	type answer struct {
		got bool
		err error
	}
	ch := make(chan answer, 1)
	bctx := context.WithoutCancel(ctx)
	go func() {
		args := make([]any, 0, len(keys)+2)
		args = append(args, "blpop")
		for _, k := range keys {
			args = append(args, k)
		}
		args = append(args, strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
		v, err := s.client.Do(bctx, args...).StringSlice()
		switch {
		case errors.Is(err, redis.Nil):
			ch <- answer{}
			return
		case err != nil:
			ch <- answer{err: err}
			return
		}
		if len(v) == 2 && (putBack || ctx.Err() != nil) {
			_ = s.client.LPush(bctx, v[0], v[1]).Err()
		}
		ch <- answer{got: len(v) == 2}
	}()
	select {
	case a := <-ch:
		if a.err != nil && ctx.Err() == nil {
			var nerr interface{ Timeout() bool }
			if errors.As(a.err, &nerr) && nerr.Timeout() {
				return false, nil // a client read timeout below d: a spurious return
			}
			return false, a.err
		}
		return a.got, nil
	case <-ctx.Done():
		return false, nil
	}
}

// TaskClaim claims ready tasks. See [plait.Store.TaskClaim]. One script
// call per shard visited; with one shard, one round trip.
func (s *Store) TaskClaim(ctx context.Context, params *plait.TaskClaimParams) (*plait.TaskClaimResult, error) {
	queues, err := checkClaim(params)
	if err != nil {
		return nil, err
	}
	res := &plait.TaskClaimResult{}
	if err := s.claimShards(ctx, params, queues, res, nil, true); err != nil {
		return nil, err
	}
	return res, nil
}

// checkClaim validates claim arguments and returns the queues to claim from.
func checkClaim(params *plait.TaskClaimParams) ([]string, error) {
	if params.Limit < 1 || params.LeaseDuration <= 0 {
		return nil, fmt.Errorf("redisstore: claim needs a limit >= 1 and a positive lease: %w", plait.ErrInvalidArgument)
	}
	return checkQueues(params.Queues)
}

// claimShards claims on the shards not in skip, in rotating order, until
// params.Limit tasks are in res. first reports whether res.Now is still to
// be set. A failure after some tasks were claimed keeps them.
func (s *Store) claimShards(ctx context.Context, params *plait.TaskClaimParams, queues []string, res *plait.TaskClaimResult, skip map[int]bool, first bool) error {
	leaseMs := ceilDurMillis(params.LeaseDuration)
	for _, shard := range s.shardOrder() {
		left := params.Limit - len(res.Tasks)
		if left <= 0 {
			break
		}
		if skip[shard] {
			continue
		}
		keys := append([]string{s.keys.active(shard)}, s.queueKeys(shard, queues)...)
		v, err := s.runScript(ctx, scriptClaim, keys,
			s.nowArg(), s.keys.base(shard), params.WorkerID, left, leaseMs, len(queues), promoteBound)
		if err != nil {
			if len(res.Tasks) > 0 {
				break // keep what was claimed; the rest waits for the next claim
			}
			return err
		}
		if err := s.readClaim(&reply{v: v}, res, first); err != nil {
			return err
		}
		first = false
	}
	return nil
}

// readClaim reads the claim part of a script reply (see claim.lua) into
// res; first sets res.Now.
func (s *Store) readClaim(r *reply, res *plait.TaskClaimResult, first bool) error {
	now, next, n := r.int(), r.int(), r.int()
	if first {
		res.Now = msTime(now)
	}
	if next > 0 && (res.NextDueAt.IsZero() || msTime(next).Before(res.NextDueAt)) {
		res.NextDueAt = msTime(next)
	}
	for j := int64(0); j < n && r.err == nil; j++ {
		ct := &plait.ClaimedTask{}
		ct.Lease.RunID = r.str()
		ct.Lease.Task = r.str()
		ct.Lease.Epoch = r.int()
		ct.LeaseUntil = msTime(r.int())
		def, parents, payload := r.str(), r.str(), r.str()
		ct.Attempt = int(r.int())
		ct.FirstStartedAt = msTime(r.int())
		k := r.int()
		var bad error
		for p := int64(0); p < k && r.err == nil; p++ {
			name, result := r.str(), r.str()
			if ct.ParentResults == nil {
				ct.ParentResults = make(map[string][]byte, k)
			}
			b, err := decodeValue(result)
			if err != nil && bad == nil {
				bad = fmt.Errorf("parent %q result: %w", name, err)
			}
			ct.ParentResults[name] = b
		}
		if r.err != nil {
			break
		}
		spec, err := decodeTaskDef(ct.Lease.Task, def, parents, payload)
		if err == nil {
			err = bad
		}
		if err != nil {
			// The lease stays with this worker and the sweep reports it.
			s.cfg.logger.Error("redisstore: claimed task has a corrupt record",
				slog.String("run", ct.Lease.RunID), slog.String("task", ct.Lease.Task), slog.Any("err", err))
			continue
		}
		ct.Spec = spec
		res.Tasks = append(res.Tasks, ct)
	}
	return r.err
}

// byShard groups the indexes of a batch by the shard of their run.
type shardBatch struct {
	shard int
	idx   []int
}

func (s *Store) groupByShard(n int, runID func(i int) string, bad func(i int, err error)) []shardBatch {
	var out []shardBatch
	pos := map[int]int{}
	for i := 0; i < n; i++ {
		shard, err := s.runShard(runID(i))
		if err != nil {
			bad(i, err)
			continue
		}
		j, ok := pos[shard]
		if !ok {
			j = len(out)
			pos[shard] = j
			out = append(out, shardBatch{shard: shard})
		}
		out[j].idx = append(out[j].idx, i)
	}
	return out
}

// checkOutcomes answers the outcomes no script needs to see and reports
// which are to be sent.
func checkOutcomes(outcomes []plait.TaskOutcome) ([]plait.TaskFinishResult, []bool) {
	out := make([]plait.TaskFinishResult, len(outcomes))
	valid := make([]bool, len(outcomes))
	for i, o := range outcomes {
		switch {
		case o.Outcome < plait.OutcomeSucceeded || o.Outcome > plait.OutcomeReturned:
			out[i].Err = fmt.Errorf("redisstore: unknown outcome %d: %w", o.Outcome, plait.ErrInvalidArgument)
		case ids.Check(o.Lease.Task) != nil:
			out[i].Err = fmt.Errorf("redisstore: run %q has no task %q: %w", o.Lease.RunID, o.Lease.Task, plait.ErrNotFound)
		default:
			valid[i] = true
		}
	}
	return out, valid
}

// finishBatches groups the valid outcomes by shard; outcomes whose run id
// this store cannot have issued are answered ErrNotFound.
func (s *Store) finishBatches(outcomes []plait.TaskOutcome, out []plait.TaskFinishResult, valid []bool) []shardBatch {
	batches := s.groupByShard(len(outcomes),
		func(i int) string { return outcomes[i].Lease.RunID },
		func(i int, err error) {
			if valid[i] {
				out[i].Err = err
			}
		})
	for j := range batches {
		idx := batches[j].idx[:0]
		for _, i := range batches[j].idx {
			if valid[i] {
				idx = append(idx, i)
			}
		}
		batches[j].idx = idx
	}
	return batches
}

// outcomeArgs appends the run hash keys and the 7 arguments per outcome of
// one shard's batch (see finish.lua).
func (s *Store) outcomeArgs(b shardBatch, outcomes []plait.TaskOutcome, keys []string, args []any) ([]string, []any) {
	enc := s.values()
	for _, i := range b.idx {
		o := &outcomes[i]
		keys = append(keys, s.keys.run(b.shard, o.Lease.RunID))
		var delay int64
		if o.Outcome == plait.OutcomeRetry {
			delay = ceilDurMillis(o.RetryDelay)
		}
		result := ""
		if o.Outcome == plait.OutcomeSucceeded && len(o.Result) > 0 {
			result = enc.encode(o.Result)
		}
		args = append(args, o.Lease.RunID, o.Lease.Task, o.Lease.Epoch, int(o.Outcome), result, o.Error, delay)
	}
	return keys, args
}

// readFinish reads the finish part of a script reply into out.
func readFinish(r *reply, b shardBatch, outcomes []plait.TaskOutcome, out []plait.TaskFinishResult) error {
	for _, i := range b.idx {
		code, st := r.int(), r.str()
		if r.err != nil {
			return r.err
		}
		if err := codeErr(code); err != nil {
			out[i].Err = fmt.Errorf("redisstore: finish %s/%s: %w", outcomes[i].Lease.RunID, outcomes[i].Lease.Task, err)
		}
		if st != "" {
			out[i].RunStatus = runStatusByLetter[st[0]]
		}
	}
	return nil
}

// TaskFinish applies outcomes. See [plait.Store.TaskFinish]. One script
// call per shard touched by the batch.
func (s *Store) TaskFinish(ctx context.Context, params *plait.TaskFinishParams) ([]plait.TaskFinishResult, error) {
	out, valid := checkOutcomes(params.Outcomes)
	for _, b := range s.finishBatches(params.Outcomes, out, valid) {
		if len(b.idx) == 0 {
			continue
		}
		keys, args := s.outcomeArgs(b, params.Outcomes,
			[]string{s.keys.active(b.shard)},
			[]any{s.nowArg(), s.keys.base(b.shard), s.retentionMs(), len(b.idx)})
		v, err := s.runScript(ctx, scriptFinish, keys, args...)
		if err != nil {
			return nil, err
		}
		if err := readFinish(&reply{v: v}, b, params.Outcomes, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// TaskFinishClaim finishes, then claims. See [plait.Store.TaskFinishClaim].
// One script call (finish_claim.lua) per shard touched by the outcomes,
// each finishing that shard's outcomes and claiming what is still wanted
// there (where the released children are); then, while the limit is not
// met, claims on the other shards. With one shard: one round trip.
func (s *Store) TaskFinishClaim(ctx context.Context, params *plait.TaskFinishClaimParams) (*plait.TaskFinishClaimResult, error) {
	cp := &params.Claim
	claim := cp.Limit > 0
	var queues []string
	if claim {
		var err error
		if queues, err = checkClaim(cp); err != nil {
			return nil, err
		}
	}
	outcomes := params.Finish.Outcomes
	out, valid := checkOutcomes(outcomes)
	res := &plait.TaskFinishClaimResult{Finished: out}
	if claim {
		res.Claimed = &plait.TaskClaimResult{}
	}
	leaseMs := ceilDurMillis(cp.LeaseDuration)
	first := true
	done := map[int]bool{}
	for _, b := range s.finishBatches(outcomes, out, valid) {
		if len(b.idx) == 0 {
			continue
		}
		limit := 0
		if claim {
			limit = cp.Limit - len(res.Claimed.Tasks)
		}
		keys := []string{s.keys.active(b.shard)}
		nq := 0
		if limit > 0 {
			keys = append(keys, s.queueKeys(b.shard, queues)...)
			nq = len(queues)
		}
		keys, args := s.outcomeArgs(b, outcomes, keys,
			[]any{s.nowArg(), s.keys.base(b.shard), s.retentionMs(), cp.WorkerID, limit, leaseMs, nq, promoteBound, len(b.idx)})
		v, err := s.runScript(ctx, scriptFinishClaim, keys, args...)
		if err != nil {
			return nil, err
		}
		r := &reply{v: v}
		if err := readFinish(r, b, outcomes, out); err != nil {
			return nil, err
		}
		if limit > 0 {
			if err := s.readClaim(r, res.Claimed, first); err != nil {
				return nil, err
			}
			first = false
			done[b.shard] = true
		}
	}
	if claim && len(res.Claimed.Tasks) < cp.Limit {
		if err := s.claimShards(ctx, cp, queues, res.Claimed, done, first); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// LeaseExtend extends held leases. See [plait.Store.LeaseExtend]. One script
// call per shard touched by the batch.
func (s *Store) LeaseExtend(ctx context.Context, params *plait.LeaseExtendParams) ([]plait.LeaseExtendResult, error) {
	if params.Duration <= 0 {
		return nil, fmt.Errorf("redisstore: lease extend needs a positive duration: %w", plait.ErrInvalidArgument)
	}
	out := make([]plait.LeaseExtendResult, len(params.Leases))
	valid := make([]bool, len(params.Leases))
	for i, l := range params.Leases {
		if ids.Check(l.Task) != nil {
			out[i].Err = fmt.Errorf("redisstore: run %q has no task %q: %w", l.RunID, l.Task, plait.ErrNotFound)
			continue
		}
		valid[i] = true
	}
	batches := s.groupByShard(len(params.Leases),
		func(i int) string { return params.Leases[i].RunID },
		func(i int, err error) {
			if valid[i] {
				out[i].Err = err
			}
		})
	durMs := ceilDurMillis(params.Duration)
	for _, b := range batches {
		keys := []string{s.keys.active(b.shard)}
		args := []any{s.nowArg(), durMs, 0}
		var sent []int
		for _, i := range b.idx {
			if !valid[i] {
				continue
			}
			l := params.Leases[i]
			sent = append(sent, i)
			keys = append(keys, s.keys.run(b.shard, l.RunID))
			args = append(args, l.RunID, l.Task, l.Epoch)
		}
		if len(sent) == 0 {
			continue
		}
		args[2] = len(sent)
		v, err := s.runScript(ctx, scriptExtend, keys, args...)
		if err != nil {
			return nil, err
		}
		r := &reply{v: v}
		until := msTime(r.int())
		for _, i := range sent {
			code := r.int()
			if r.err != nil {
				return nil, r.err
			}
			if err := codeErr(code); err != nil {
				out[i].Err = fmt.Errorf("redisstore: extend %s/%s: %w", params.Leases[i].RunID, params.Leases[i].Task, err)
				continue
			}
			out[i].Until = until
		}
	}
	return out, nil
}

// LeaseSweep recovers expired leases. See [plait.Store.LeaseSweep]. One
// script call per shard visited.
func (s *Store) LeaseSweep(ctx context.Context, params *plait.LeaseSweepParams) (*plait.LeaseSweepResult, error) {
	if params.Limit < 1 || params.CrashLimit < 0 {
		return nil, fmt.Errorf("redisstore: sweep needs a limit >= 1 and a crash limit >= 0: %w", plait.ErrInvalidArgument)
	}
	res := &plait.LeaseSweepResult{}
	left := params.Limit
	order := s.shardOrder()
	for i, shard := range order {
		if left <= 0 {
			res.More = res.More || i < len(order)
			break
		}
		v, err := s.runScript(ctx, scriptSweep, []string{s.keys.active(shard)},
			s.nowArg(), s.keys.base(shard), s.retentionMs(), left, params.CrashLimit)
		if err != nil {
			return nil, err
		}
		r := &reply{v: v}
		more, n := r.int(), r.int()
		res.More = res.More || more == 1
		for j := int64(0); j < n && r.err == nil; j++ {
			kind, run, task, extra := r.str(), r.str(), r.str(), r.str()
			switch kind {
			case "q", "d":
				epoch, err := strconv.ParseInt(extra, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("redisstore: sweep reply epoch %q: %w", extra, err)
				}
				l := plait.Lease{RunID: run, Task: task, Epoch: epoch}
				if kind == "q" {
					res.Requeued = append(res.Requeued, l)
				} else {
					res.Dead = append(res.Dead, l)
				}
				left--
			default:
				msg := fmt.Sprintf("run %s task %s: %s", run, task, extra)
				s.cfg.logger.Error("redisstore: sweep skipped a corrupt record", slog.String("record", msg))
				res.Corrupt = append(res.Corrupt, msg)
				left--
			}
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	return res, nil
}

// ReadyWait blocks until work may be claimable. See [plait.Store.ReadyWait].
// It blocks with BLPOP on the wake lists of its queues (at most waitChunk
// per call): one BLPOP over every shard's lists, or, on a Cluster client,
// one shard per call in rotation. Every script that makes a task ready or
// delayed pushes a token to that task's queue list, and a claim that takes
// a task its own call readied takes the token back, so a token is waiting
// for any work that appeared after the caller's last empty claim; delayed
// tasks becoming due are the caller's timer (NextDueAt), not a token. A
// zero Timeout means no timeout.
func (s *Store) ReadyWait(ctx context.Context, params *plait.ReadyWaitParams) error {
	queues, err := checkQueues(params.Queues)
	if err != nil {
		return err
	}
	order := s.shardOrder()
	var deadline time.Time
	if params.Timeout > 0 {
		deadline = clock.Real{}.Now().Add(params.Timeout)
	}
	perShard := make([][]string, len(order))
	var all []string
	for i, shard := range order {
		perShard[i] = s.wakeKeys(shard, queues)
		all = append(all, perShard[i]...)
	}
	for turn := 0; ; turn++ {
		if ctx.Err() != nil {
			return nil
		}
		d := waitChunk
		if !deadline.IsZero() {
			left := deadline.Sub(clock.Real{}.Now())
			if left <= 0 {
				return nil
			}
			if left < d {
				d = left
			}
		}
		keys := all
		if s.cluster && len(perShard) > 1 {
			keys = perShard[turn%len(perShard)]
			if per := waitChunk / time.Duration(len(perShard)); per < d {
				d = max(per, 50*time.Millisecond)
			}
		}
		got, err := s.blpop(ctx, keys, d, false)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return mapErr(err)
		}
		if got {
			return nil
		}
	}
}

var _ plait.Store = (*Store)(nil)
