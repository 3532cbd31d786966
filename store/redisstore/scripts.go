package redisstore

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/plaitdag/plait/store"
	"github.com/redis/go-redis/v9"
)

// One Lua script per transition family, named after the store method it
// serves (task_claim.lua for TaskClaim; run_create_part.lua is the part of
// RunCreate that writes a long run in chunks), each opening with its
// header: KEYS, ARGV, the transition it makes, its reply, then four
// sections, each labelled so: Retried: (its reply was lost and it is sent
// again), Lost data: (Redis lost data: a restart without persistence, a
// flush, a failover to a replica that lagged), Out of memory: (Redis is
// full) and Cut off: (the worker or caller is cut off from Redis).
// headers_test.go holds every script to it. The scripts share the
// lib_*.lua files (scriptLibs says which each needs):
//
//	(reply codes)    OK, NOT_FOUND, STALE... as Lua locals, which codesTable
//	                 renders from the Go codes (codes.go), first of all
//	common.lua       key builder, lease and queue entries (keys_test.go reads it)
//	lib_buffers.lua  the per-call cache of hash fields, write buffers, flush
//	lib_ctx.lua      the context of a call, from its step and retention
//	lib_codec.lua    the packed run meta, task state and definition header
//	lib_limit.lua    task limits: admit at a claim, release as an attempt ends
//	lib_admission.lua caps on pending tasks: checked at a create, counted
//	                 by task_to as tasks end
//	lib_status.lua   task_to and run_to, the one place a status letter
//	                 changes; statusTable (status_table.go) renders
//	                 plait's status machine into the Lua tables they
//	                 check, put right before lib_limit.lua
//	lib_delete.lua   forget_run, a finished run removed (delete, prune)
//	lib_query.lua    the checks of a run filter made run by run, and the
//	                 skip past a cursor (list, count)
//	lib_run.lua      a task made due, a run's end
//	lib_create.lua   a run sent whole written (run_create, run_create_many)
//	lib_cancel.lua   stop_run (run_cancel.lua, strategy stop)
//	lib_finish.lua   the finish step and the release of children
//	lib_handoff.lua  ready entries of the same call popped before their push
//	lib_claim.lua    the claim step
//
// so each script is still one self-contained call touching the keys of one
// hash tag.
//
// Round trips on the hot path (single shard; with N shards a claim and a
// sweep visit shards one after another until their limit is met):
//
//	TaskClaim        1 script call (task_claim.lua)
//	TaskFinish       1 script call per shard touched by the batch
//	                 (task_finish.lua)
//	TaskFinishClaim  1 script call (task_finish_claim.lua) per shard
//	                 touched by the batch; more shards only while the claim
//	                 limit is not met
//	LeaseExtend      1 script call per shard touched by the batch
//	                 (lease_extend.lua)
//	LeaseSweep       1 script call per shard (lease_sweep.lua)
//	ReadyWait        BLPOP on the wake lists of its queues (no script)
//	RunCreate        1: run_create.lua, with an id from the store's block
//	                 (one INCRBY of the sequence per idBlockSize runs); a
//	                 run of more than createChunk tasks sends
//	                 run_create_part.lua per chunk and run_create.lua in one
//	                 pipeline (still 1 round trip; 2 when keyed: the key
//	                 index is looked up first)
//	RunCreateMany    1 pipeline per createManyChunk runs: one
//	                 run_create_many.lua call per shard per createManyRuns
//	                 runs (or createManyBytes of arguments)
//	RunGet           1: HGETALL of the run hash
//	RunCancel        1: run_cancel.lua answers with the run's fields
//	RunReplay        1: run_replay.lua answers with the reset tasks and the
//	                 run's fields
//	RunWait          SUBSCRIBE to the events channel on the store's one
//	                 shared pub/sub connection (hub.go; once for every
//	                 waiter), HGETALL, then wait for a message naming the
//	                 run, which the call that ends it publishes
//	EventRead        LRANGE of a run's events or one XRANGE per shard
//	                 (pipelined), then one pipelined HMGET per run
//	StoreStats       HGETALL of each shard's counters, then LRANGE of each
//	                 task name's window (2 pipelines)
//	QueueList        3 pipelines (queue_list.go)
//	TaskSearch       per section and shard read, 1 to 3 round trips
//	                 (task_search.go)
//
// Every script runs one of two ways, chosen once by New and running the same
// Lua source:
//
//   - Redis Functions (Redis 7+): New loads one library holding every lib
//     file once and every transition (FUNCTION LOAD on every master), and
//     each call is an FCALL. The helpers are defined once per load instead
//     of once per call, which on redis-server is most of the cost of a small
//     script.
//   - EVALSHA of the lib files the script needs followed by the script's
//     own file, falling back to EVAL on NOSCRIPT (the script cache is empty
//     after a restart or failover), when the server has no FUNCTION command
//     (miniredis, older servers) or refuses the load. Only the needed lib
//     files are sent, so a small script such as lease_extend.lua does not
//     define the finish and claim steps on every call.
//
// A function call that finds no function (a restarted server without
// persistence) loads the library again and retries. When Redis is out of
// memory, the functions declared allow-oom (lease_extend, task_finish,
// lease_sweep, run_cancel and the control writes: see allowOOM) run whole,
// and the others (creates, claims) are refused up front, whole;
// TaskFinishClaim then applies its outcomes with task_finish and claims
// nothing. On the EVALSHA path (no functions) Redis refuses a
// script only at its first write that needs memory, so there a claim,
// whose first write is a removal, still runs, and an extend, whose first
// write is a ZADD, is refused.

//go:embed lua/*.lua
var luaFS embed.FS

// script is one transition: its EVALSHA form and its function name.
type script struct {
	name string
	eval *redis.Script
	fn   string
}

// allowOOM names the functions Redis runs whole when it is out of memory:
// those that only move work a worker holds forward or give memory back
// (lease_extend, task_finish, lease_sweep, run_cancel, run_delete,
// run_delete_many, run_prune, dead_letter_purge), and the bounded control
// writes an operator needs most when Redis is full (node heartbeats, so
// no node vanishes from the registry; drain; pause; a task control; a cap
// on pending tasks, which is how one stops a tenant filling it). The
// others, which bring new work into Redis or lease more of it (creates
// and claims), are declared without flags, so Redis refuses them up front
// when it is out of memory, before any write: nothing is half written and
// the call answers store.ErrStoreFull.
var allowOOM = map[string]bool{"task_finish": true, "lease_extend": true, "lease_sweep": true, "run_cancel": true,
	"schedule_record_fire": true, "leader_acquire": true, "leader_release": true,
	"node_heartbeat": true, "node_drain": true, "queue_pause": true,
	"run_delete": true, "run_prune": true, "dead_letter_purge": true,
	"task_control": true, "run_delete_many": true, "admission_set": true}

// readOnly names the functions that write nothing (flag no-writes): Redis
// runs them at maxmemory and on replicas.
var readOnly = map[string]bool{"run_list": true, "run_count": true}

var scriptNames = []string{"run_create", "run_create_many", "run_create_part", "task_claim", "task_finish", "task_finish_claim",
	"lease_extend", "lease_sweep", "run_cancel", "run_replay",
	"run_delete", "run_prune", "run_list", "run_count", "task_log_append", "task_progress", "dead_letter_purge",
	"schedule_save", "schedule_record_fire", "leader_acquire", "leader_release",
	"node_heartbeat", "node_drain", "queue_pause",
	"task_control", "run_note", "run_delete_many", "admission_set"}

// libOrder is the order of the lib files: each uses only those before it.
// codesLib and statusLib stand for what codesTable and statusTable render.
var libOrder = []string{codesLib, "common", "lib_buffers", "lib_ctx", "lib_codec", statusLib, "lib_limit", "lib_admission", "lib_names",
	"lib_status", "lib_delete", "lib_query", "lib_run", "lib_create", "lib_cancel", "lib_finish", "lib_handoff", "lib_claim"}

const statusLib = "(status table)"

// baseLibs are the lib files every script gets.
var baseLibs = []string{codesLib, "common", "lib_buffers", "lib_ctx", "lib_codec", statusLib, "lib_limit", "lib_admission", "lib_names", "lib_status"}

// scriptLibs names the lib files beyond baseLibs that each script needs.
var scriptLibs = map[string][]string{
	"run_create":        {"lib_run", "lib_create"},
	"run_create_many":   {"lib_create"},
	"run_create_part":   nil,
	"task_claim":        {"lib_handoff", "lib_claim"},
	"task_finish":       {"lib_run", "lib_cancel", "lib_finish"},
	"task_finish_claim": {"lib_run", "lib_cancel", "lib_finish", "lib_handoff", "lib_claim"},
	"lease_extend":      nil,
	"lease_sweep":       {"lib_run", "lib_cancel", "lib_finish"},
	"run_cancel":        {"lib_run", "lib_cancel"},
	"run_replay":        {"lib_run", "lib_cancel", "lib_finish"},
	// The schedule scripts use only now_ms and int of common.lua, and the
	// reply codes.
	"schedule_save":        nil,
	"schedule_record_fire": nil,
	"leader_acquire":       nil,
	"leader_release":       nil,
	// So do the node scripts.
	"node_heartbeat": nil,
	"node_drain":     nil,
	"queue_pause":    nil,
	// The query scripts: delete and prune share forget_run, list and
	// count the checks of a filter.
	"run_delete": {"lib_delete"},
	"run_prune":  {"lib_delete"},
	"run_list":   {"lib_query"},
	"run_count":  {"lib_query"},
	// task_log_append reads a task's state with state_parse of lib_codec.lua.
	"task_log_append": nil,
	// task_progress uses state_parse, note and flush_events of the base
	// libs.
	"task_progress": nil,
	// dead_letter_purge uses key and entry of common.lua.
	"dead_letter_purge": nil,
	// task_control releases children and ends runs as a finish does;
	// run_note uses note and flush_events of the base libs;
	// run_delete_many shares delete_run with run_delete.
	"task_control":    {"lib_run", "lib_cancel", "lib_finish"},
	"run_note":        nil,
	"run_delete_many": {"lib_delete"},
	// admission_set writes one hash field.
	"admission_set": nil,
}

var (
	scriptRunCreate          = newScript("run_create")
	scriptRunCreateMany      = newScript("run_create_many")
	scriptRunCreatePart      = newScript("run_create_part")
	scriptTaskClaim          = newScript("task_claim")
	scriptTaskFinish         = newScript("task_finish")
	scriptTaskFinishClaim    = newScript("task_finish_claim")
	scriptLeaseExtend        = newScript("lease_extend")
	scriptLeaseSweep         = newScript("lease_sweep")
	scriptRunCancel          = newScript("run_cancel")
	scriptRunReplay          = newScript("run_replay")
	scriptScheduleSave       = newScript("schedule_save")
	scriptScheduleRecordFire = newScript("schedule_record_fire")
	scriptLeaderAcquire      = newScript("leader_acquire")
	scriptLeaderRelease      = newScript("leader_release")
	scriptNodeHeartbeat      = newScript("node_heartbeat")
	scriptNodeDrain          = newScript("node_drain")
	scriptQueuePause         = newScript("queue_pause")
	scriptRunDelete          = newScript("run_delete")
	scriptRunPrune           = newScript("run_prune")
	scriptRunList            = newScript("run_list")
	scriptRunCount           = newScript("run_count")
	scriptTaskLogAppend      = newScript("task_log_append")
	scriptTaskProgress       = newScript("task_progress")
	scriptDeadLetterPurge    = newScript("dead_letter_purge")
	scriptTaskControl        = newScript("task_control")
	scriptRunNote            = newScript("run_note")
	scriptRunDeleteMany      = newScript("run_delete_many")
	scriptAdmissionSet       = newScript("admission_set")
)

// library is the source of the function library and libraryName its name,
// which carries a hash of the source, so stores of different versions
// sharing one server each call their own functions.
var library, libraryName = buildLibrary()

func luaFile(name string) string {
	switch name {
	case codesLib:
		return codesTable()
	case statusLib:
		return statusTable()
	}
	b, err := luaFS.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(err)
	}
	return string(b)
}

// libSource is the lib files named in libs (and baseLibs), in libOrder.
func libSource(libs ...string) string {
	want := map[string]bool{}
	for _, l := range baseLibs {
		want[l] = true
	}
	for _, l := range libs {
		want[l] = true
	}
	var b strings.Builder
	for _, l := range libOrder {
		if want[l] {
			b.WriteString(luaFile(l))
			b.WriteString("\n")
		}
	}
	return b.String()
}

// body wraps a transition's file into a function of KEYS and ARGV, a field
// of the table scripts (scriptsTable) rather than a local of its own: the
// library is one Lua chunk, which may hold at most 200 locals, and the lib
// files need them.
func body(name string) string {
	return "scripts." + name + " = function(KEYS, ARGV)\n" + luaFile(name) + "\nend\n"
}

// scriptsTable declares the table body puts each transition in.
const scriptsTable = "local scripts = {}\n"

// newScript builds the EVALSHA form of a script: the lib files it needs,
// then its own file.
func newScript(name string) *script {
	return &script{name: name, eval: redis.NewScript(scriptSource(name))}
}

// scriptSource is the source of the EVALSHA form of the script name.
func scriptSource(name string) string {
	return "-- plait " + name + "\n" + libSource(scriptLibs[name]...) + scriptsTable + body(name) + unguardLua +
		"return scripts." + name + "(unguard(KEYS), ARGV)\n"
}

func buildLibrary() (string, string) {
	var b strings.Builder
	b.WriteString(libSource(libOrder...))
	b.WriteString(scriptsTable)
	for _, n := range scriptNames {
		b.WriteString(body(n))
	}
	b.WriteString(unguardLua)
	src := b.String()
	sum := sha1.Sum([]byte(src))
	name := "plait_" + hex.EncodeToString(sum[:6])
	var reg strings.Builder
	for _, n := range scriptNames {
		flags := "{}"
		if allowOOM[n] {
			flags = "{'allow-oom'}"
		}
		if readOnly[n] {
			flags = "{'no-writes'}"
		}
		reg.WriteString("redis.register_function{function_name='" + name + "_" + n +
			"', callback=function(k, a) reset() return scripts." + n + "(unguard(k), a) end, flags=" + flags + "}\n")
	}
	return "#!lua name=" + name + "\n" + src + reg.String(), name
}

func (sc *script) function() string { return libraryName + "_" + sc.name }

// loadLibrary loads the function library on every master; a library of
// this very source already loaded counts as loaded.
func (s *Store) loadLibrary(ctx context.Context) error {
	load := func(ctx context.Context, c redis.Cmdable) error {
		err := c.FunctionLoad(ctx, library).Err()
		if err != nil && strings.Contains(err.Error(), "already exists") {
			return nil
		}
		return err
	}
	if cc, ok := s.client.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return load(ctx, c) })
	}
	return load(ctx, s.client)
}

// runScript runs sc and maps Redis's OOM refusal to store.ErrStoreFull and
// the other refusals of the call for what it carries to store.ErrRejected
// (scriptErr).
// On the function path the refusal is up front and whole (see allowOOM);
// a function call that finds no function (a restarted server without
// persistence) loads the library again, and when even that fails (the
// load is refused for memory) runs the same source as EVALSHA, whose
// scripts order their writes so that Redis refuses only a first write (see
// each script's "Out of memory" line).
func (s *Store) runScript(ctx context.Context, sc *script, keys []string, args ...any) ([]any, error) {
	keys = s.guarded(keys)
	var v any
	var err error
	if s.functions {
		v, err = s.client.FCall(ctx, sc.function(), keys, args...).Result()
		if err != nil && strings.Contains(err.Error(), "Function not found") {
			if lerr := s.loadLibrary(ctx); lerr == nil {
				v, err = s.client.FCall(ctx, sc.function(), keys, args...).Result()
			} else {
				v, err = sc.eval.Run(ctx, s.client, keys, args...).Result()
			}
		}
	} else {
		v, err = sc.eval.Run(ctx, s.client, keys, args...).Result()
	}
	if err != nil {
		return nil, scriptErr(err)
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

// mapErr turns backend errors the contract names into its sentinels, and
// a refusal for the ACL user's permissions into a *PermissionError.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if isOOM(err) {
		return fmt.Errorf("%w: %w", store.ErrStoreFull, err)
	}
	if pe := permissionErr(err); pe != nil {
		return pe
	}
	return err
}

func isOOM(err error) bool {
	return err != nil && !errors.Is(err, redis.Nil) && strings.Contains(err.Error(), "OOM command not allowed")
}

// scriptErr is mapErr for a script call, which also wraps
// store.ErrRejected around an error reply that the same call would meet
// again: "ERR Protocol error: invalid bulk length" for an argument over
// the server's proto-max-bulk-len, a script's error. The replies that say
// something of the server's state rather than of the call are left as
// they are, to be retried: OOM (store.ErrStoreFull), a missing script or
// function, a loading, busy, read-only or failing-over server, a
// redirection, and the refusals of authentication and ACLs.
func scriptErr(err error) error {
	err = mapErr(err)
	var re redis.Error
	if err == nil || errors.Is(err, store.ErrStoreFull) || errors.Is(err, ErrPermission) || errors.Is(err, redis.Nil) || !errors.As(err, &re) {
		return err
	}
	msg := re.Error()
	code, _, _ := strings.Cut(msg, " ")
	if serverState[code] || strings.Contains(msg, "Function not found") || strings.Contains(msg, "max number of clients") {
		return err
	}
	return fmt.Errorf("%w: %w", store.ErrRejected, err)
}

// serverState holds the error codes of replies about the server's state.
var serverState = map[string]bool{"OOM": true, "NOSCRIPT": true, "LOADING": true, "BUSY": true, "READONLY": true,
	"MASTERDOWN": true, "TRYAGAIN": true, "CLUSTERDOWN": true, "MOVED": true, "ASK": true, "NOREPLICAS": true,
	"UNBLOCKED": true, "NOAUTH": true, "NOPERM": true, "WRONGPASS": true}
