package redisstore

import (
	"strconv"
	"time"

	"github.com/plaitdag/plait/store"
)

// A final attempt folded into the task's state (format version 8).
//
// A finish that ends a task succeeded with no error text, or failed not by
// its Timeout, writes no attempt record in a run of format version 8 or
// later: the task's state s: already holds everything the record would
// (attempt, epoch, claim and end offsets, worker, generation), w:<task>
// its queued time and e:<task> its error. Every other end (a retry, a
// timeout, a release, a crash, a cancel, a success with error text) writes
// its record as before, and so does every finish of a run of version 7.
// Before a move rewrites a folded state (a replay), run_replay.lua writes
// the record out (unfold in lua/lib_codec.lua), and history copies of
// version 8 runs carry w: and e: (keep_history). foldedAttempt is the Go
// side: the attempt the state stands for, equal to what the record would
// have decoded to.

// foldFormatVersion is the first format version whose final attempts are
// folded into the task's state.
const foldFormatVersion = 8

// hashVersion returns the format version of a run hash or of its history
// copy: the first byte of field i (0 when it has none).
func hashVersion(h map[string]string) int {
	if i := h["i"]; i != "" {
		return int(i[0])
	}
	return 0
}

// foldedAttempt returns the final attempt of task name folded into its
// state st, when there is one: the run is of version 8 or later, the task
// succeeded or failed, and its claim of epoch st.epoch has no record of
// its own. The attempt is the one that record would have decoded to: its
// start the claim offset, its duration the end offset minus it, outcome
// succeeded (S) or failed (F), the error e:<task> of a failed task (a
// success folds only when it had no error text, so a stale e: is never
// read for it), the queued time w:<task>, no retry delay.
func foldedAttempt(name string, h map[string]string, st taskState, version int, created int64) (store.Attempt, bool, error) {
	if version < foldFormatVersion || st.epoch <= 0 {
		return store.Attempt{}, false, nil
	}
	var outcome, errText string
	switch st.letter {
	case 'S':
		outcome = "succeeded"
	case 'F':
		outcome, errText = "failed", h["e:"+name]
	default:
		return store.Attempt{}, false, nil
	}
	if _, ok := h["a:"+name+":"+strconv.FormatInt(st.epoch, 10)]; ok {
		return store.Attempt{}, false, nil
	}
	claim := st.claim
	if claim < 0 {
		claim = 0
	}
	if st.ended < 0 {
		return store.Attempt{}, false, corrupt("task %q ended with no end time", name)
	}
	var queued time.Time
	if w, ok := h["w:"+name]; ok {
		off, err := strconv.ParseInt(w, 10, 64)
		if err != nil {
			return store.Attempt{}, false, corrupt("task %q queued time %s", name, clip(w))
		}
		queued = msTime(created + off)
	}
	started := msTime(created + claim)
	dur := time.Duration(st.ended-claim) * time.Millisecond
	a := store.Attempt{
		QueuedAt:   queued,
		Attempt:    st.attempt,
		Epoch:      st.epoch,
		Generation: st.gen,
		StartedAt:  started,
		EndedAt:    started.Add(dur),
		Duration:   dur,
		Outcome:    outcome,
		Error:      errText,
	}
	a.Worker, a.Node = store.SplitWorker(st.worker)
	return a, true, nil
}
