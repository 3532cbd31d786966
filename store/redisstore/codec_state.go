package redisstore

import (
	"strconv"
	"strings"
	"time"

	"github.com/plaitdag/plait/store"
)

// The fields of a task the scripts change as it runs: the state s: and
// the attempt records a:, text laid out in lua/lib_codec.lua. Go writes only
// the state of a new task, at create, and reads both.

// newTaskState is field s:<task> of a task just created: pending, no
// attempt, no epoch, nothing resolved.
const newTaskState = "P,0,0,0,0,0,,,,"

// taskStatusOf decodes a task status letter (state field st). W, a task
// waiting in the delayed set, is pending to callers.
func taskStatusOf(letter byte) (store.TaskStatus, bool) {
	switch letter {
	case 'P', 'W':
		return store.TaskPending, true
	case 'R':
		return store.TaskReady, true
	case 'U':
		return store.TaskRunning, true
	case 'Y':
		return store.TaskRetrying, true
	case 'S':
		return store.TaskSucceeded, true
	case 'F':
		return store.TaskFailed, true
	case 'K':
		return store.TaskSkipped, true
	case 'C':
		return store.TaskCancelled, true
	case 'D':
		return store.TaskDead, true
	}
	return "", false
}

// outcomeOf decodes the outcome letter of an attempt record.
func outcomeOf(letter byte) (string, bool) {
	switch letter {
	case 's':
		return "succeeded", true
	case 'r':
		return "retry", true
	case 'f':
		return "failed", true
	case 't':
		return "timed out", true
	case 'l':
		return "released", true
	case 'c':
		return "crashed", true
	case 'x':
		return "cancelled", true
	}
	return "", false
}

// taskState is the decoded field s:<task>.
type taskState struct {
	status                       store.TaskStatus
	letter                       byte
	attempt                      int
	epoch                        int64
	crashes, resolved, satisfied int
	first, claim, ended          int64 // offsets, -1 when unset
	worker                       string
	gen                          int64 // the generation of the replay that last reset the task
}

// decodeState decodes field s:<task>:
// "st[gen],attempt,epoch,crashes,resolved,satisfied,firstStartOff,claimOff,endOff,worker".
func decodeState(s string) (taskState, error) {
	f := strings.SplitN(s, ",", 10)
	if len(f) != 10 {
		return taskState{}, corrupt("task state %s", clip(s))
	}
	var t taskState
	var ok bool
	letter, gen, err := splitGen(f[0])
	if err != nil {
		return taskState{}, err
	}
	t.letter, t.gen = letter[0], gen
	if t.status, ok = taskStatusOf(t.letter); !ok {
		return taskState{}, corrupt("task status %s", clip(f[0]))
	}
	if t.attempt, err = strconv.Atoi(f[1]); err != nil || t.attempt < 0 {
		return taskState{}, corrupt("task attempt %s", clip(f[1]))
	}
	if t.epoch, err = strconv.ParseInt(f[2], 10, 64); err != nil || t.epoch < 0 {
		return taskState{}, corrupt("task epoch %s", clip(f[2]))
	}
	for i, p := range []*int{&t.crashes, &t.resolved, &t.satisfied} {
		if *p, err = strconv.Atoi(f[3+i]); err != nil || *p < 0 {
			return taskState{}, corrupt("task counter %s", clip(f[3+i]))
		}
	}
	for i, p := range []*int64{&t.first, &t.claim, &t.ended} {
		if *p, err = optInt(f[6+i]); err != nil {
			return taskState{}, err
		}
	}
	t.worker = f[9]
	return t, nil
}

// decodeTaskAttempts gathers the attempt records of one task of state st
// in a hash of format version version: those of a run written before
// per-epoch fields, in a:<task>, then one field a:<task>:<epoch> per ended
// claim up to the task's epoch, oldest first, then the final attempt
// folded into the state (version 8; codec_fold.go) when the task has one.
// It looks up at most epoch fields and never scans the hash.
func decodeTaskAttempts(name string, h map[string]string, st taskState, version int, created int64) ([]store.Attempt, error) {
	epoch := st.epoch
	var out []store.Attempt
	if a, ok := h["a:"+name]; ok {
		legacy, err := decodeAttempts(a, created)
		if err != nil {
			return nil, err
		}
		out = legacy
	}
	prefix := "a:" + name + ":"
	for e := int64(1); e <= epoch; e++ {
		a, ok := h[prefix+strconv.FormatInt(e, 10)]
		if !ok {
			continue
		}
		recs, err := decodeAttempts(a, created)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	folded, ok, err := foldedAttempt(name, h, st, version, created)
	if err != nil {
		return nil, err
	}
	if ok {
		out = append(out, folded)
	}
	return out, nil
}

// decodeAttempts decodes attempt records, one after another, each
// "attempt,epoch,startOff,durMs,outcome[gen],wlen,elen[,delayMs[,queuedOff]];"
// then the worker and the error, whose lengths the record gives. A record
// without queuedOff was written before the queued time was kept; its
// QueuedAt stays zero. gen, the run's generation when above 0, follows the
// outcome letter (format version 7).
func decodeAttempts(s string, created int64) ([]store.Attempt, error) {
	var out []store.Attempt
	for len(s) > 0 {
		head, rest, ok := strings.Cut(s, ";")
		if !ok {
			return nil, corrupt("attempt record %s", clip(s))
		}
		f := strings.Split(head, ",")
		if len(f) < 7 || len(f) > 9 {
			return nil, corrupt("attempt record %s", clip(head))
		}
		letter, gen, err := splitGen(f[4])
		if err != nil {
			return nil, err
		}
		var n [8]int64
		for i, j := range []int{0, 1, 2, 3, 5, 6, 7, 8} {
			if j >= len(f) {
				break
			}
			v, err := strconv.ParseInt(f[j], 10, 64)
			if err != nil {
				return nil, corrupt("attempt field %s", clip(f[j]))
			}
			n[i] = v
		}
		outcome, ok := outcomeOf(letter[0])
		wl, el := n[4], n[5]
		if !ok || wl < 0 || el < 0 || n[6] < 0 || wl > int64(len(rest)) || el > int64(len(rest))-wl {
			return nil, corrupt("attempt record %s", clip(head))
		}
		started := msTime(created + n[2])
		dur := time.Duration(n[3]) * time.Millisecond
		var queued time.Time
		if len(f) == 9 {
			queued = msTime(created + n[7])
		}
		out = append(out, store.Attempt{
			QueuedAt:   queued,
			Attempt:    int(n[0]),
			Epoch:      n[1],
			Generation: gen,
			StartedAt:  started,
			EndedAt:    started.Add(dur),
			Duration:   dur,
			Outcome:    outcome,
			Error:      rest[wl : wl+el],
			RetryDelay: time.Duration(n[6]) * time.Millisecond,
		})
		a := &out[len(out)-1]
		a.Worker, a.Node = store.SplitWorker(rest[:wl])
		s = rest[wl+el:]
	}
	return out, nil
}
