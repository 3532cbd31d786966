package redisstore

// A slot being migrated between two Cluster nodes is split: some of its
// keys are on the source, the others already on the target. Redis checks
// the keys a script call declares before running it (all present: it
// runs; some missing: TRYAGAIN, or ASK to the target, which answers
// TRYAGAIN for several keys it lacks), but it checks each key the script
// touches only as the script reaches it: a script that runs on the source
// and then reaches a key already moved, or one it would create (a ready
// list of a released child, a counter of a new minute), stops there with
// "Script attempted to access a non local key", its earlier writes kept.
// A finish would then record a task succeeded and its child ready without
// pushing the child on its ready list, and the run would never end.
//
// So on a Cluster every script call also declares a guard key: the
// call's first key with slotGuardMark appended, which shares its slot
// (the hash tag is the first {...}) and which nothing ever writes. While
// the slot is split the guard is missing on both sides, so Redis refuses
// the call up front, before anything is written, with TRYAGAIN or ASK and
// then TRYAGAIN: go-redis retries those, and what it gives up on reaches
// the caller as a refusal that wrote nothing, safe to send again (see
// serverState in scripts.go). Once the slot is moved, calls run as
// before. The library's glue (unguardLua) drops the guard from KEYS
// before the script sees it, so no script knows of it; a standalone
// server or Sentinel gets no guard (no slot ever moves there) and the
// glue leaves KEYS as it is.
//
// Cost: one more key argument per script call on a Cluster, and on every
// server a length, an index and a byte compare in the glue per call.
const slotGuardMark = "~"

// unguardLua drops a trailing guard key from a call's KEYS. No key of
// this store ends in slotGuardMark (names are of [A-Za-z0-9._-]), so the
// last key is the guard exactly when it does. string.byte(s, -1) is the
// last byte; 126 is '~'.
const unguardLua = `local function unguard(k)
  local n = #k
  if n > 0 and string.byte(k[n], -1) == 126 then k[n] = nil end
  return k
end
`

// guarded answers the keys of a script call with the guard appended, on a
// Cluster; elsewhere keys unchanged. keys itself is never written to.
func (s *Store) guarded(keys []string) []string {
	if !s.cluster || len(keys) == 0 {
		return keys
	}
	out := make([]string, len(keys)+1)
	copy(out, keys)
	out[len(keys)] = keys[0] + slotGuardMark
	return out
}
