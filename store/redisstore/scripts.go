package redisstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait"
)

// One Lua script per transition, each opening with its KEYS/ARGV/returns
// header. lua/common.lua holds the shared helpers and the finish and claim
// steps, and is prepended to every script, so each script is still one
// self-contained EVAL touching the keys of one hash tag.
//
// Round trips on the hot path (single shard; with N shards a claim and a
// sweep visit shards one after another until their limit is met):
//
//	TaskClaim        1 script call (claim.lua)
//	TaskFinish       1 script call per shard touched by the batch (finish.lua)
//	TaskFinishClaim  1 script call (finish_claim.lua) per shard touched by
//	                 the batch; more shards only while the claim limit is not met
//	LeaseExtend      1 script call per shard touched by the batch (extend.lua)
//	LeaseSweep       1 script call per shard (sweep.lua)
//	ReadyWait        BLPOP on the wake lists of its queues (no script)
//	RunCreate        2: next_id.lua (INCR of the id sequence), then
//	                 create_run.lua; a run of more than createChunk tasks
//	                 sends create_part.lua per chunk and create_run.lua in
//	                 one pipeline (still 2 round trips)
//	RunGet           1: HGETALL of the run hash
//	RunCancel        1: cancel_run.lua answers with the run's fields
//	RunWait          SUBSCRIBE to the run's channel, HGETALL, then wait for
//	                 the message the run's end publishes
//
// Scripts run with Script.Run: EVALSHA, falling back to EVAL on NOSCRIPT
// (the script cache is empty after a restart or failover).

//go:embed lua/*.lua
var luaFS embed.FS

var (
	scriptNextID      = newScript("next_id")
	scriptCreateRun   = newScript("create_run")
	scriptCreatePart  = newScript("create_part")
	scriptClaim       = newScript("claim")
	scriptFinish      = newScript("finish")
	scriptFinishClaim = newScript("finish_claim")
	scriptExtend      = newScript("extend")
	scriptSweep       = newScript("sweep")
	scriptCancelRun   = newScript("cancel_run")
)

// newScript builds a script from the common helpers followed by the
// transition's own file.
func newScript(name string) *redis.Script {
	common, err := luaFS.ReadFile("lua/common.lua")
	if err != nil {
		panic(err)
	}
	body, err := luaFS.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(err)
	}
	return redis.NewScript("-- plait " + name + "\n" + string(common) + "\n" + string(body))
}

// Script return codes.
const (
	codeOK       = 0
	codeNotFound = 1
	codeStale    = 2
	codeInvalid  = 3
	codeCorrupt  = 4
)

// codeErrors is the one table mapping script return codes to sentinels.
var codeErrors = map[int64]error{
	codeNotFound: plait.ErrNotFound,
	codeStale:    plait.ErrStaleEpoch,
	codeInvalid:  plait.ErrInvalidArgument,
	codeCorrupt:  errCorrupt,
}

// codeErr returns the error of a script return code, nil for codeOK.
func codeErr(code int64) error {
	if code == codeOK {
		return nil
	}
	if err, ok := codeErrors[code]; ok {
		return err
	}
	return fmt.Errorf("redisstore: unknown script code %d", code)
}

// runScript runs s and maps Redis's OOM refusal to plait.ErrStoreFull.
// Redis refuses only a script's first write when the script started out of
// memory (later writes of a script that already wrote go through), and the
// scripts validate before their first write, so a refused script has
// written nothing; one whose first write frees memory (a finish removing
// its lease entry) runs whole.
func runScript(ctx context.Context, c redis.Scripter, s *redis.Script, keys []string, args ...any) ([]any, error) {
	v, err := s.Run(ctx, c, keys, args...).Result()
	if err != nil {
		return nil, mapErr(err)
	}
	out, ok := v.([]any)
	if !ok {
		if n, isInt := v.(int64); isInt {
			return []any{n}, nil
		}
		return nil, fmt.Errorf("redisstore: unexpected script reply %T", v)
	}
	return out, nil
}

// mapErr turns backend errors the contract names into its sentinels.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if isOOM(err) {
		return fmt.Errorf("%w: %w", plait.ErrStoreFull, err)
	}
	return err
}

func isOOM(err error) bool {
	return err != nil && !errors.Is(err, redis.Nil) && strings.Contains(err.Error(), "OOM command not allowed")
}

// reply reads a script's flat reply.
type reply struct {
	v   []any
	i   int
	err error
}

func (r *reply) next() any {
	if r.i >= len(r.v) {
		if r.err == nil {
			r.err = fmt.Errorf("redisstore: script reply too short (%d values)", len(r.v))
		}
		return nil
	}
	x := r.v[r.i]
	r.i++
	return x
}

func (r *reply) str() string {
	switch x := r.next().(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case nil:
		return ""
	default:
		if r.err == nil {
			r.err = fmt.Errorf("redisstore: unexpected reply value %T", x)
		}
		return ""
	}
}

func (r *reply) int() int64 {
	switch x := r.next().(type) {
	case int64:
		return x
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil && r.err == nil {
			r.err = fmt.Errorf("redisstore: reply value %q is not an integer", x)
		}
		return n
	default:
		if r.err == nil {
			r.err = fmt.Errorf("redisstore: unexpected reply value %T", x)
		}
		return 0
	}
}
