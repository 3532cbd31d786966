package redisstore

import (
	"hash/fnv"
	"io"
	"strconv"
	"strings"
)

// Key layout. Every key but the id sequence lives under one shard's hash tag:
//
//	<prefix>:{seq}                       run id sequence (string, INCRBY per block)
//	<prefix>:{<shard>}:r:<run>           run hash: meta, spec and state of every task
//	<prefix>:{<shard>}:w:<run>           run channel of earlier plaits (pub/sub, no key): their RunWait waits on it; unused now
//	<prefix>:{<shard>}:k:<key>           idempotency key -> run id
//	<prefix>:{<shard>}:p:<run>:<task>    payload of a task of a small run, kept apart until the task ends
//	<prefix>:{<shard>}:x:<run>           dead-lettered task names of a run (list)
//	<prefix>:{<shard>}:dl                dead letters of the shard (zset, score dead-lettered ms, member "<run> <task>")
//	<prefix>:{<shard>}:tl:<run>          lines the run's tasks logged (hash; tasklog.go, task_log_append.lua)
//	<prefix>:{<shard>}:h:<run>           attempt records kept past the run (hash of its m, i, o, s: and a: fields)
//	<prefix>:{<shard>}:q:<queue>:<prio>  ready list of one (queue, priority), prio 0 (low) .. 3 (urgent)
//	<prefix>:{<shard>}:z:<queue>         delayed zset of one queue, score = due time (ms)
//	<prefix>:{<shard>}:n:<queue>         wake-up tokens for ReadyWait on one queue (list, at most 64)
//	<prefix>:{<shard>}:g:<queue>         handlers with tasks of the queue set aside (set)
//	<prefix>:{<shard>}:g:<queue>:<handler> tasks of the queue set aside for want of the handler (list)
//	<prefix>:{<shard>}:g:<queue>:<handler>:n wake-up tokens for ReadyWait of processes with the handler (list, at most 64)
//	<prefix>:{<shard>}:active            lease zset of the shard, score = lease deadline (ms)
//	<prefix>:{<shard>}:c:<request>       claim memory of a claim sent with a request id (string, PX lease)
//	<prefix>:{<shard>}:ia                every run of the shard (zset, score created ms, member run id)
//	<prefix>:{<shard>}:it:<status>       runs in status letter U, S, F or C (zset, as ia); pending ones are the rest
//	<prefix>:{<shard>}:iw:<workflow>     runs of one workflow (zset, as ia)
//	<prefix>:{<shard>}:is:<service>      runs of one service (zset, as ia)
//	<prefix>:{<shard>}:iu:<svc>:<tenant> runs of one service and tenant (zset, as ia)
//	<prefix>:{<shard>}:iv:<tenant>       runs of one tenant (zset, as ia)
//	<prefix>:{<shard>}:x<w|s|u|v>:<name> the name indexes above from format version 8 (stream, id created ms-seq, field r: run ids)
//	<prefix>:{<shard>}:ie:<ms>           finished runs of one retention in due order (list of "<due>:<run>:<st>:<wf>:<svc>:<tenant>")
//	<prefix>:{<shard>}:iel               the retentions (ms) that have an expiry list (set)
//	<prefix>:{<shard>}:e                 event stream of the shard, one entry per script call (MAXLEN ~ global cap, in entries)
//	<prefix>:{<shard>}:st                counters of the shard (hash: q:<queue>:<counter>, n:<task>)
//	<prefix>:{<shard>}:sd:<task>         recent attempt durations of a task name in ms (list, newest first, capped)
//	<prefix>:{<shard>}:sm:<hour>:<c>     one counter's counts per minute of an hour (hash: minute 0-59 -> count, TTL 25 h)
//	<prefix>:{<shard>}:ac                caps on pending tasks of the shard (hash: q:<queue>, t:<tenant> -> cap; admission.go)
//	<prefix>:{<shard>}:an                pending tasks counted against a cap (hash, fields as ac)
//	<prefix>:ev                          events channel (pub/sub, no key): a script that appended events publishes to it, naming the runs it ended
//	<prefix>:{sched}:s:<name>            schedule hash: def, next, last, run, ver, upd (schedule.go)
//	<prefix>:{sched}:due                 schedules by next instant (zset, score ms; only those with one)
//	<prefix>:{sched}:names               every schedule name (zset, score 0, read by lex range)
//	<prefix>:{sched}:leader              the schedule leader lease: holder, epoch, until (hash, never deleted)
//	<prefix>:{nodes}:n:<id>              node hash: what the node reported, start, beat, exp, drain (nodes.go)
//	<prefix>:{nodes}:h:<id>              node history, newest first (list, capped)
//	<prefix>:{nodes}:live                live nodes (zset, score = expiry ms)
//	<prefix>:{nodes}:cap:<capability>    live nodes of one capability (zset, score = expiry ms)
//	<prefix>:{nodes}:paused              paused queues (set)
//	<prefix>:{nodes}:ctl                 control version, bumped by every pause and resume (string)
//	<prefix>:{layout}                    the shard count, key layout and stats setting, recorded on first use (string)
//	plait:{layout}:prefixes              every prefix New was called with, whatever the store's prefix (set, prefixes.go)
//
// The shard is a decimal number and a run id is "<n>-<nonce>" (ids.go; a
// plain "<n>" from stores before the nonce), where n is a sequence number
// whose remainder modulo the shard count is its shard and the nonce is of
// [a-z0-9]; queue names, handler names, run keys and task names are
// restricted to [A-Za-z0-9._-] by internal/ids, and a routed queue joins
// such names with '+' (store.RoutedQueue), so no component can contain
// ':', '{' or '}' and the layout is injective without escaping.
//
// The Lua helper key() (lua/common.lua) mirrors the shard-local part of this
// layout for the one case where a script must reach keys it only discovers
// while running (the queue of a released child, the run hash of an entry
// popped from a shard queue); it builds them from the base string below,
// which Go passes in ARGV, so they share the shard's slot by construction.
// keys_test.go checks that both builders agree.

// keys builds every key string of a store. It is the only place in Go where
// key strings are formed.
type keys struct {
	prefix string
}

// seq is the run id sequence; it has its own slot.
func (k keys) seq() string { return k.prefix + ":{seq}" }

// base is the common start of every key of shard s, hash tag included.
func (k keys) base(s int) string { return k.prefix + ":{" + strconv.Itoa(s) + "}:" }

// run is the run hash.
func (k keys) run(s int, id string) string { return k.base(s) + "r:" + id }

// done is the run's channel of plaits before the end of a run rode in the
// events channel's message: their RunWait subscribes to it and their
// scripts publish the run's status letter to it. Nothing of this plait
// publishes there (lua/lib_run.lua says what an old RunWait sees in a
// rolling upgrade); the name stays reserved. It is a channel, not a key.
func (k keys) done(s int, id string) string { return k.base(s) + "w:" + id }

// payload holds the payload of a task kept apart from the run hash.
func (k keys) payload(s int, id, task string) string { return k.base(s) + "p:" + id + ":" + task }

// deadLetters lists the dead-lettered tasks of a run.
func (k keys) deadLetters(s int, id string) string { return k.base(s) + "x:" + id }

// deadIndex is the dead-letter index of a shard.
func (k keys) deadIndex(s int) string { return k.base(s) + "dl" }

// taskLogs is the hash of the lines a run's tasks logged.
func (k keys) taskLogs(s int, id string) string { return k.base(s) + "tl:" + id }

// history holds the attempt records of a finished run beyond the run's own
// retention (WithHistoryRetention).
func (k keys) history(s int, id string) string { return k.base(s) + "h:" + id }

// keyIndex maps an idempotency key to its run id.
func (k keys) keyIndex(s int, key string) string { return k.base(s) + "k:" + key }

// ready is the ready list of one queue and priority digit (0 low .. 3 urgent).
func (k keys) ready(s int, queue string, prio int) string {
	return k.base(s) + "q:" + queue + ":" + strconv.Itoa(prio)
}

// delayed is the delayed zset of one queue.
func (k keys) delayed(s int, queue string) string { return k.base(s) + "z:" + queue }

// asideIndex is the set of handlers that have tasks of queue set aside on
// shard s: a claim that lacked the handler met them (see routing in
// lib_claim.lua).
func (k keys) asideIndex(s int, queue string) string { return k.base(s) + "g:" + queue }

// aside is the list of tasks of queue set aside on shard s for want of
// handler. claim_tasks builds it in Lua as the index key, ':' and the
// handler.
func (k keys) aside(s int, queue, handler string) string {
	return k.asideIndex(s, queue) + ":" + handler
}

// asideWake is the wake-up list of the tasks of queue set aside for want
// of handler: ReadyWait of a process with the handler blocks on it.
// claim_tasks builds it in Lua as the aside list key and ":n".
func (k keys) asideWake(s int, queue, handler string) string {
	return k.aside(s, queue, handler) + ":n"
}

// queueNames is the queue registry of a shard: every queue (plain or
// routed) whose ready lists or delayed set ever went from empty to
// non-empty there (register_queue in lib_buffers.lua).
func (k keys) queueNames(s int) string { return k.base(s) + "qn" }

// active is the lease zset of a shard.
func (k keys) active(s int) string { return k.base(s) + "active" }

// claimMemo remembers what a claim sent with request id rid did on shard s.
func (k keys) claimMemo(s int, rid string) string { return k.base(s) + "c:" + rid }

// wake is the wake-up list of one queue of a shard.
func (k keys) wake(s int, queue string) string { return k.base(s) + "n:" + queue }

// allIndex lists every run of shard s.
func (k keys) allIndex(s int) string { return k.base(s) + "ia" }

// statusIndex lists the runs of shard s in status letter st (U, S, F, C).
func (k keys) statusIndex(s int, st string) string { return k.base(s) + "it:" + st }

// workflowIndex lists the runs of shard s of one workflow.
func (k keys) workflowIndex(s int, wf string) string { return k.base(s) + "iw:" + wf }

// serviceIndex lists the runs of shard s of one service.
func (k keys) serviceIndex(s int, svc string) string { return k.base(s) + "is:" + svc }

// tenantIndex lists the runs of shard s of one service and tenant.
func (k keys) tenantIndex(s int, svc, tenant string) string {
	return k.base(s) + "iu:" + svc + ":" + tenant
}

// tenantOnlyIndex lists the runs of shard s of one tenant, of any
// service.
func (k keys) tenantOnlyIndex(s int, tenant string) string { return k.base(s) + "iv:" + tenant }

// nameStream is the stream form of name index zset (workflowIndex,
// serviceIndex, tenantIndex, tenantOnlyIndex) of shard s: x<kind>:<name>
// for i<kind>:<name>, where format version 8 files runs (lua/lib_names.lua).
func (k keys) nameStream(s int, zset string) string {
	base := k.base(s)
	return base + "x" + zset[len(base)+1:]
}

// endIndex lists the finished runs of shard s in status letter st (S, F,
// C) by their end.
func (k keys) endIndex(s int, st string) string { return k.base(s) + "if:" + st }

// expiryList holds the finished runs of shard s kept for retention ms, in
// the order they expire, for the pruner.
func (k keys) expiryList(s int, ms int64) string {
	return k.base(s) + "ie:" + strconv.FormatInt(ms, 10)
}

// expiryLists is the set of the retentions of shard s with an expiry list.
func (k keys) expiryLists(s int) string { return k.base(s) + "iel" }

// sched is the start of every schedule key: one hash tag of their own,
// apart from the run shards, so each schedule script touches one slot.
func (k keys) sched() string { return k.prefix + ":{sched}:" }

// schedule is the hash of one schedule.
func (k keys) schedule(name string) string { return k.sched() + "s:" + name }

// scheduleDue orders schedules by next instant.
func (k keys) scheduleDue() string { return k.sched() + "due" }

// scheduleNames lists every schedule name.
func (k keys) scheduleNames() string { return k.sched() + "names" }

// leader is the schedule leader lease.
func (k keys) leader() string { return k.sched() + "leader" }

// nodesTag is the start of every node key: one hash tag of their own, so
// each node script touches one slot.
func (k keys) nodesTag() string { return k.prefix + ":{nodes}:" }

// node is the hash of one node.
func (k keys) node(id string) string { return k.nodesTag() + "n:" + id }

// nodeHistory is the capped history list of one node.
func (k keys) nodeHistory(id string) string { return k.nodesTag() + "h:" + id }

// nodesLive orders live nodes by expiry.
func (k keys) nodesLive() string { return k.nodesTag() + "live" }

// nodesByCapability orders the live nodes of one capability by expiry.
func (k keys) nodesByCapability(capability string) string {
	return k.nodesTag() + "cap:" + capability
}

// pausedQueues is the set of paused queues.
func (k keys) pausedQueues() string { return k.nodesTag() + "paused" }

// control is the control version.
func (k keys) control() string { return k.nodesTag() + "ctl" }

// layout records the shard count and key layout of the prefix.
func (k keys) layout() string { return k.prefix + ":{layout}" }

// events is the event stream of a shard.
func (k keys) events(s int) string { return k.base(s) + "e" }

// stats is the counters hash of a shard.
func (k keys) stats(s int) string { return k.base(s) + "st" }

// admissionCaps is the hash of the caps on pending tasks of shard s.
func (k keys) admissionCaps(s int) string { return k.base(s) + "ac" }

// admissionCounts is the hash of the pending tasks of shard s counted
// against a cap.
func (k keys) admissionCounts(s int) string { return k.base(s) + "an" }

// durations is the list of recent attempt durations of a task name.
func (k keys) durations(s int, task string) string { return k.base(s) + "sd:" + task }

// statsMinutes is the per-minute hash of one counter and hour (hours since
// the Unix epoch) of a shard, kept under WithStats.
func (k keys) statsMinutes(s int, hour int64, counter string) string {
	return k.base(s) + "sm:" + strconv.FormatInt(hour, 10) + ":" + counter
}

// eventsChannel is the pub/sub channel a script that appended events
// publishes to, for live readers of every shard.
func (k keys) eventsChannel() string { return k.prefix + ":ev" }

// shardOf returns the shard of a run id: its sequence number modulo the
// shard count. Ids are "<n>-<nonce>" (see ids.go), or a plain "<n>" as
// stores before the nonce wrote them. It reports false for an id this store
// cannot have issued.
func shardOf(id string, shards int) (int, bool) {
	num := id
	if dash := strings.IndexByte(id, '-'); dash >= 0 {
		num = id[:dash]
		nonce := id[dash+1:]
		if len(nonce) != nonceLen {
			return 0, false
		}
		for i := 0; i < len(nonce); i++ {
			if c := nonce[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
				return 0, false
			}
		}
	}
	// ParseUint refuses signs and anything but digits; a leading zero
	// would give one run two ids.
	if num == "" || num[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(num, 10, 63)
	if err != nil {
		return 0, false
	}
	return int(n % uint64(shards)), true
}

// keyHash picks the shard of an idempotency key: its 32-bit FNV-1a hash,
// which every process sharing a prefix must compute alike, so it cannot
// change.
func keyHash(key string) uint32 {
	h := fnv.New32a()
	_, _ = io.WriteString(h, key)
	return h.Sum32()
}

// prioDigit maps a priority to the digit in its ready key: 0 low .. 3 urgent.
func prioDigit(p int8) int { return int(p) + 1 }
