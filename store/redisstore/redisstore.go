// Package redisstore is the Redis [store.Store]: every transition is one Lua
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
// # Records and their version
//
// A run is one hash, and codec.go describes its fields. Field i, written
// once when the run is created, opens with the format version of the whole
// hash. This package reads every version from the oldest it still knows
// up to its own, and refuses a run written by a newer plait with a
// [*RecordVersionError] (matching [ErrRecordVersion]) rather than misread
// it; during a rolling upgrade, a process not yet upgraded refuses the runs
// an upgraded one created until it is upgraded too.
// Every time and duration the scripts keep is in ms.
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
// [WithStrictEviction].
//
// # Out of memory
//
// When Redis reaches maxmemory, work already leased keeps moving: lease
// extensions, finishes, sweeps and cancels are Redis functions declared
// allow-oom, which Redis runs whole, so no long task loses its lease to a
// full Redis. What brings new work in or leases more of it is refused up
// front, whole, with [store.ErrStoreFull]: RunCreate and RunCreateMany
// (nothing is written) and TaskClaim; a TaskFinishClaim applies its
// outcomes and claims nothing. Nothing needs resetting: once memory is
// freed, creates and claims work again. A result over [WithMaxResultBytes]
// (which New lowers to the server's proto-max-bulk-len) is refused for its
// outcome alone, with [store.ErrResultTooLarge]; a call Redis refuses as a
// whole for what it carries answers [store.ErrRejected]. On a
// server without functions (Redis before 7) scripts run as EVALSHA, where
// Redis refuses only a script's first write that needs memory: there a
// claim still runs and an extend is refused (see each script's header).
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
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

// Store is a [store.Store] over a redis.UniversalClient. Build one with
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
	// waiters keeps the blocking connections of ReadyWait on a cluster
	// with several shards (ready_cluster.go).
	waiters chan *waitSet
	// ids is the block of run ids this store reserved.
	ids idBlock
	// hub is the one pub/sub connection of the store's waiters (hub.go).
	hub *hub
	// runHubs are the hubs of RunWait on a cluster, one per master (hub.go).
	runHubs hubs
	// bulkMax is the server's proto-max-bulk-len, the longest argument it
	// takes, as New read it; 0 when it could not (capResults).
	bulkMax int
}

// New returns a Store over client. The caller owns client and closes it
// after the store's last use; the store never closes it.
//
// New answers an error wrapping [store.ErrInvalidOption] for a nil client,
// or a nil option, and one [*store.OptionError] per option given out of
// range, joined (the shared options refuse what memstore's refuse). Its
// first contact with the server is one PING bounded by 1.5 s or ctx's
// deadline, whichever is sooner: no answer is an [*UnreachableError]
// (matching [ErrUnreachable]) naming the client's addresses, and New stops
// there. It then checks the server's maxmemory-policy (see
// [WithStrictEviction]) and answers [ErrEvictionPolicy] when strict mode
// refuses it, and reads proto-max-bulk-len to cap the largest result
// (see [WithMaxResultBytes]). Last, it records the layout under the
// prefix on first use (the shard count and whether stats are on;
// layout.go), or answers a [*LayoutError] when the prefix was first used
// with another shard count, a [*StatsMismatchError] when it was first
// used with another stats setting than [WithStats] gives (both match
// [ErrLayoutMismatch]), and, under [WithExistingPrefix], a
// [*PrefixUnknownError] (matching [ErrPrefixUnknown]) when it was never
// used.
func New(ctx context.Context, client redis.UniversalClient, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, fmt.Errorf("redisstore: nil client: %w", store.ErrInvalidOption)
	}
	var cfg config
	for i, o := range opts {
		if o == nil {
			cfg.errs = append(cfg.errs, fmt.Errorf("redisstore: option %d is nil: %w", i, store.ErrInvalidOption))
			continue
		}
		o(&cfg)
	}
	if err := cfg.err(); err != nil {
		return nil, err
	}
	cfg.withDefaults()
	s := &Store{client: client, cfg: cfg, keys: keys{prefix: cfg.prefix}}
	_, s.cluster = client.(*redis.ClusterClient)
	s.waiters = make(chan *waitSet, 1)
	if err := s.reach(ctx); err != nil {
		return nil, err
	}
	if err := s.checkEviction(ctx); err != nil {
		return nil, err
	}
	s.capResults(ctx)
	if err := s.checkLayout(ctx); err != nil {
		return nil, err
	}
	s.functions = s.loadLibrary(ctx) == nil
	s.hub = newHub(client)
	return s, nil
}

// capResults lowers the largest result to what the server takes in one
// argument: proto-max-bulk-len, read with CONFIG GET (on a Cluster, the
// smallest of its masters'), less the flag byte a stored result starts
// with (finish.go sends it as one argument, the flag byte then the
// result). A server that refuses CONFIG (managed Redis, ACLs) keeps the
// option's limit: a result Redis refuses then fails its attempt too, once
// the Scheduler has split the batch it came in (store.ErrRejected).
func (s *Store) capResults(ctx context.Context) {
	var mu sync.Mutex
	limit := int64(0)
	read := func(ctx context.Context, c redis.Cmdable) error {
		m, err := c.ConfigGet(ctx, "proto-max-bulk-len").Result()
		if err != nil {
			return err
		}
		n, err := strconv.ParseInt(m["proto-max-bulk-len"], 10, 64)
		if err != nil || n < 2 {
			return fmt.Errorf("redisstore: proto-max-bulk-len %q", m["proto-max-bulk-len"])
		}
		mu.Lock()
		if limit == 0 || n < limit {
			limit = n
		}
		mu.Unlock()
		return nil
	}
	if cc, ok := s.client.(*redis.ClusterClient); ok {
		_ = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return read(ctx, c) })
	} else {
		_ = read(ctx, s.client)
	}
	s.bulkMax = int(limit)
	if limit == 0 || limit-1 >= int64(s.cfg.maxResult) {
		return
	}
	s.cfg.logger.Info("redisstore: the server's proto-max-bulk-len lowers the largest result the store keeps",
		slog.Int64("proto-max-bulk-len", limit), slog.Int("max-result-bytes", int(limit-1)),
		slog.Int("configured", s.cfg.maxResult))
	s.cfg.maxResult = int(limit - 1)
}

// checkEviction reads maxmemory-policy with CONFIG GET, then INFO memory,
// and warns (or fails, when strict) unless it is noeviction.
func (s *Store) checkEviction(ctx context.Context) error {
	policy := ""
	if m, err := s.client.ConfigGet(ctx, "maxmemory-policy").Result(); err == nil {
		policy = m["maxmemory-policy"]
	}
	if policy == "" {
		info, err := s.client.Info(ctx, "memory").Result()
		if lost := s.lostContact(err); lost != nil {
			return lost // not a policy it could read, so no warning about one
		}
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "maxmemory_policy:"); ok {
				policy = v
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

// retentionArg is the retention argument of the scripts that may end a
// run: "<retention ms>", then ":<history ms>" when attempt records are
// kept past their run (new_ctx in lua/lib_buffers.lua).
func (s *Store) retentionArg() string {
	arg := strconv.FormatInt(s.retentionMs(), 10)
	if h := s.cfg.history.Milliseconds(); h > 0 {
		arg += ":" + strconv.FormatInt(h, 10)
	}
	return arg
}

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

// queueKeys returns, per queue, its delayed zset, its four ready lists
// (urgent first) and the index of its tasks set aside by handler: the KEYS
// layout task_claim.lua and task_finish_claim.lua expect.
func (s *Store) queueKeys(shard int, queues []string) []string {
	out := make([]string, 0, queueKeyCount*len(queues))
	for _, q := range queues {
		out = append(out, s.keys.delayed(shard, q))
		for p := 3; p >= 0; p-- {
			out = append(out, s.keys.ready(shard, q, p))
		}
		out = append(out, s.keys.asideIndex(shard, q))
	}
	return out
}

// queueKeyCount is how many keys queueKeys passes per queue.
const queueKeyCount = 6

func checkQueues(queues []string) ([]string, error) {
	if len(queues) == 0 {
		return []string{store.DefaultQueue}, nil
	}
	seen := make(map[string]bool, len(queues))
	out := make([]string, 0, len(queues))
	for _, q := range queues {
		if _, _, ok := store.SplitRoutedQueue(q); !ok {
			err := ids.Check(q)
			if err == nil {
				err = errors.New("is not a routed queue name as store.RoutedQueue builds it")
			}
			return nil, fmt.Errorf("redisstore: queue %s %v: %w", ids.Quote(q), err, store.ErrInvalidArgument)
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
		return 0, fmt.Errorf("redisstore: run %s: %w", ids.Quote(id), store.ErrNotFound)
	}
	return shard, nil
}

var _ store.Store = (*Store)(nil)
