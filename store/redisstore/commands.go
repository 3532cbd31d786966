package redisstore

import "strings"

// The commands a store sends. Redis checks an ACL user's permissions on
// every command a client sends and on every command a script or function
// runs, so the list holds both: the calls of this package's Go code and the
// redis.call lines of lua/. An operator who gives plait its own ACL user
// allows exactly these (docs/operations.md); acl_test.go runs the
// conformance suite through such a user, so a command missing here fails
// it, and doctor.go asks Redis, one ACL DRYRUN per command, whether a user
// may run each.

// commandUse is one command of the store: its name as ACL SETUSER takes it
// ("evalsha", "function|load") and a sample of its arguments, which the
// doctor's ACL DRYRUN sends: {k} stands for a key under the prefix, {c} for
// a channel under it. The arguments only need the command's arity; DRYRUN
// runs nothing.
type commandUse struct {
	name string
	args string
}

// commandUses is the table Commands answers, sorted by name.
var commandUses = []commandUse{
	{"asking", ""},                  // a Cluster client following an ASK redirection
	{"blpop", "{k} 1"},              // ReadyWait (wait.go, ready_cluster.go)
	{"client|id", ""},               // ReadyWait on a Cluster (ready_cluster.go)
	{"client|unblock", "1"},         // ReadyWait on a Cluster, ending a wait
	{"cluster|slots", ""},           // a Cluster client learning the slots
	{"command", ""},                 // a Cluster client learning the key positions
	{"del", "{k}"},                  // scripts; NodeRemove, schedule delete
	{"eval", "x 1 {k}"},             // a script whose EVALSHA met NOSCRIPT
	{"evalsha", "x 1 {k}"},          // scripts where functions are missing
	{"exec", ""},                    // transactions (layout, nodes, schedules)
	{"exists", "{k}"},               // scripts
	{"fcall", "x 1 {k}"},            // every script, as a function
	{"fcall_ro", "x 1 {k}"},         // run_list, run_count
	{"function|load", "x"},          // New, and after a flush
	{"get", "{k}"},                  // scripts; the layout record, results
	{"hdel", "{k} f"},               // scripts
	{"hexists", "{k} f"},            // scripts; results, task logs
	{"hget", "{k} f"},               // scripts; reads
	{"hgetall", "{k}"},              // scripts; RunGet and other reads
	{"hincrby", "{k} f 1"},          // scripts (counters)
	{"hlen", "{k}"},                 // scripts
	{"hmget", "{k} f"},              // scripts; reads
	{"hset", "{k} f v"},             // scripts
	{"hsetnx", "{k} f v"},           // task_log_append: the run's mark that it has logs
	{"incr", "{k}"},                 // scripts (control version)
	{"incrby", "{k} 1"},             // the run id block (ids.go)
	{"llen", "{k}"},                 // scripts; queue depths
	{"lpop", "{k}"},                 // scripts (claims)
	{"lpos", "{k} v"},               // TaskSearch
	{"lpush", "{k} v"},              // scripts; ReadyWait giving a token back
	{"lrange", "{k} 0 1"},           // scripts; reads
	{"lrem", "{k} 0 v"},             // scripts
	{"ltrim", "{k} 0 1"},            // scripts
	{"mget", "{k}"},                 // scripts
	{"multi", ""},                   // transactions
	{"persist", "{k}"},              // scripts
	{"pexpire", "{k} 1"},            // scripts (retention, TTLs)
	{"ping", ""},                    // New's first contact, the pub/sub keepalive
	{"pttl", "{k}"},                 // scripts
	{"publish", "{c} m"},            // scripts: a run's end, the events channel
	{"rpush", "{k} v"},              // scripts
	{"sadd", "{k} m"},               // scripts; the prefix registry
	{"scard", "{k}"},                // scripts; the prefix registry
	{"script|load", "x"},            // scripts where functions are missing
	{"set", "{k} v"},                // scripts; the layout record
	{"smembers", "{k}"},             // scripts; reads
	{"srandmember", "{k} 1"},        // the prefix registry (WithExistingPrefix)
	{"srem", "{k} m"},               // scripts
	{"subscribe", "{c}"},            // RunWait, EventSubscribe (hub.go)
	{"time", ""},                    // scripts without an injected clock; Ping
	{"unsubscribe", "{c}"},          // RunWait, EventSubscribe
	{"unwatch", ""},                 // the end of a WATCH transaction
	{"watch", "{k}"},                // the layout record's stats setting
	{"xadd", "{k} * f v"},           // scripts (events, name indexes)
	{"xdel", "{k} 0-1"},             // scripts (name indexes)
	{"xlen", "{k}"},                 // scripts (name indexes)
	{"xrange", "{k} - +"},           // scripts (name indexes); EventRead
	{"xrevrange", "{k} + -"},        // scripts (name indexes); EventRead's start
	{"zadd", "{k} 1 m"},             // scripts
	{"zcard", "{k}"},                // scripts; reads
	{"zcount", "{k} 0 1"},           // scripts; reads
	{"zrange", "{k} 0 1"},           // scripts; reads
	{"zrangebylex", "{k} - +"},      // ScheduleList
	{"zrangebyscore", "{k} 0 1"},    // scripts; reads
	{"zrank", "{k} m"},              // TaskSearch
	{"zrem", "{k} m"},               // scripts; NodeRemove, schedules
	{"zremrangebyscore", "{k} 0 1"}, // scripts
	{"zrevrangebyscore", "{k} 1 0"}, // scripts; DeadLetterList
	{"zrevrank", "{k} m"},           // DeadLetterList
	{"zscore", "{k} m"},             // scripts; reads
}

// Commands returns, sorted, every Redis command a Store sends, in the form
// ACL SETUSER takes (a subcommand as "function|load"): the commands of its
// Go code and those its scripts run, which Redis checks against the user
// too. A user allowed exactly these on the keys "<prefix>:*" and the
// channels "<prefix>:*" runs every method of the Store:
//
//	ACL SETUSER plait on >password resetkeys ~<prefix>:* resetchannels &<prefix>:* -@all +blpop +client|id ...
//
// Beside them, a Store uses two kinds of commands when it may and does
// without them when refused: New reads maxmemory-policy and
// proto-max-bulk-len with CONFIG GET, then INFO (its check of the eviction
// policy only warns when neither answers, unless [WithStrictEviction]), and
// adds its prefix to the key plait:{layout}:prefixes (SADD; the list
// [*PrefixUnknownError] names). The connection handshake of go-redis
// (HELLO, AUTH, CLIENT SETINFO) needs no permission or is let fail by the
// client; a client given a database other than 0 or a client name sends
// SELECT or CLIENT SETNAME on each connection too, which its user then
// needs. The returned slice is the caller's.
func Commands() []string {
	out := make([]string, len(commandUses))
	for i, c := range commandUses {
		out[i] = c.name
	}
	return out
}

// dryRunArgs is the ACL DRYRUN argument list of c: its name, split at '|'
// into command and subcommand, then its sample arguments with key and
// channel put in.
func (c commandUse) dryRunArgs(key, channel string) []any {
	var out []any
	for _, w := range strings.Split(c.name, "|") {
		out = append(out, w)
	}
	for _, a := range strings.Fields(c.args) {
		switch a {
		case "{k}":
			a = key
		case "{c}":
			a = channel
		}
		out = append(out, a)
	}
	return out
}
