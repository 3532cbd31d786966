package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// TaskProgress stores progress reports of running attempts, each with its
// event. See [store.ProgressStore]. One script call (task_progress.lua)
// per shard touched by the batch; a report reads its task's state and
// latest report and writes field pg:<task> of its run hash and one event.
// Nothing on the claim or finish path reads or writes these fields: a
// task that never reports costs nothing.
func (s *Store) TaskProgress(ctx context.Context, params *store.TaskProgressParams) ([]store.TaskProgressResult, error) {
	if err := params.Validate(); err != nil {
		return nil, fmt.Errorf("redisstore: %w", err)
	}
	reps := params.Reports
	out := make([]store.TaskProgressResult, len(reps))
	valid := make([]bool, len(reps))
	for i, r := range reps {
		if ids.Check(r.Lease.Task) != nil {
			out[i].Err = fmt.Errorf("redisstore: run %s has no task %s: %w", ids.Quote(r.Lease.RunID), ids.Quote(r.Lease.Task), store.ErrNotFound)
			continue
		}
		valid[i] = true
	}
	batches := s.groupByShard(len(reps),
		func(i int) string { return reps[i].Lease.RunID },
		func(i int, err error) {
			if valid[i] {
				out[i].Err = err
			}
		})
	for _, b := range batches {
		var keys []string
		args := []any{s.stepArg(), s.keys.base(b.shard), 0}
		var sent []int
		for _, i := range b.idx {
			if !valid[i] {
				continue
			}
			r := &reps[i]
			sent = append(sent, i)
			keys = append(keys, s.keys.run(b.shard, r.Lease.RunID))
			args = append(args, r.Lease.RunID, r.Lease.Task, r.Lease.Epoch, formatProgress(r.Value), r.Note)
		}
		if len(sent) == 0 {
			continue
		}
		args[2] = len(sent)
		v, err := s.runScript(ctx, scriptTaskProgress, keys, args...)
		if err != nil {
			return nil, err
		}
		r := &reply{v: v}
		for _, i := range sent {
			code := r.int()
			if r.err != nil {
				return nil, r.err
			}
			if err := codeErr(code); err != nil {
				l := reps[i].Lease
				out[i].Err = fmt.Errorf("redisstore: progress of run %s task %s epoch %d: %w", l.RunID, ids.Quote(l.Task), l.Epoch, err)
			}
		}
	}
	return out, nil
}

// formatProgress writes a progress value as the scripts store it: the
// shortest decimal that reads back as the same float64.
func formatProgress(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// decodeProgress decodes a report of field pg:<task> or pg:<task>:<epoch>:
// "epoch,attempt,atMs,value;" then the note.
func decodeProgress(s string) (*store.TaskProgress, error) {
	head, note, ok := strings.Cut(s, ";")
	f := strings.Split(head, ",")
	if !ok || len(f) != 4 {
		return nil, corrupt("progress %s", clip(s))
	}
	epoch, err1 := strconv.ParseInt(f[0], 10, 64)
	attempt, err2 := strconv.Atoi(f[1])
	at, err3 := strconv.ParseInt(f[2], 10, 64)
	value, err4 := strconv.ParseFloat(f[3], 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return nil, corrupt("progress %s", clip(head))
	}
	return &store.TaskProgress{Value: value, Note: note, Attempt: attempt, Epoch: epoch, At: msTime(at)}, nil
}

// taskProgress is the latest report of task name in run hash h, nil when
// it has none.
func taskProgress(name string, h map[string]string) (*store.TaskProgress, error) {
	v, ok := h["pg:"+name]
	if !ok {
		return nil, nil
	}
	p, err := decodeProgress(v)
	if err != nil {
		return nil, fmt.Errorf("task %q: %w", name, err)
	}
	return p, nil
}

// attemptProgress gives each attempt record of task name its attempt's
// last report: field pg:<task>:<epoch>, or the task's latest report when
// its attempt made it. One map lookup per record.
func attemptProgress(name string, h map[string]string, latest *store.TaskProgress, attempts []store.Attempt) error {
	prefix := "pg:" + name + ":"
	for i := range attempts {
		a := &attempts[i]
		if latest != nil && latest.Epoch == a.Epoch {
			a.Progress = latest.Clone()
			continue
		}
		v, ok := h[prefix+strconv.FormatInt(a.Epoch, 10)]
		if !ok {
			continue
		}
		p, err := decodeProgress(v)
		if err != nil {
			return fmt.Errorf("task %q: %w", name, err)
		}
		a.Progress = p
	}
	return nil
}

// decodeProgressEvent decodes the body of a progress event (after its
// '%'): "<task>,<attempt>,<epoch>,<value>,<note length>;" then the note
// and the worker (task_progress.lua).
func decodeProgressEvent(ev *store.StoreEvent, v string) error {
	head, rest, ok := strings.Cut(v, ";")
	f := strings.Split(head, ",")
	if !ok || len(f) < 5 || len(f) > 6 || f[0] == "" {
		return corrupt("event %s is malformed", clip(v))
	}
	if len(f) == 6 {
		gen, err := strconv.ParseInt(f[5], 10, 64)
		if err != nil || gen < 1 {
			return corrupt("event %s is malformed", clip(v))
		}
		ev.Generation = gen
	}
	attempt, err1 := strconv.Atoi(f[1])
	epoch, err2 := strconv.ParseInt(f[2], 10, 64)
	value, err3 := strconv.ParseFloat(f[3], 64)
	n, err4 := strconv.Atoi(f[4])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || n < 0 || n > len(rest) {
		return corrupt("event %s is malformed", clip(v))
	}
	ev.Task, ev.TaskStatus, ev.Type = f[0], store.TaskRunning, store.EventTaskProgress
	ev.Attempt, ev.Epoch = attempt, epoch
	ev.Progress = &store.TaskProgress{Value: value, Note: rest[:n], Attempt: attempt, Epoch: epoch, At: ev.At}
	ev.Worker, ev.Node = store.SplitWorker(rest[n:])
	return nil
}

var _ store.ProgressStore = (*Store)(nil)
