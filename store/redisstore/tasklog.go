package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
	"github.com/redis/go-redis/v9"
)

// WithTaskLogLimit caps the lines the attempts of one task log (see
// [store.TaskLogStore]): at most lines lines and bytes bytes of text per
// task, all attempts together; the lines past the cap are counted as
// dropped. Defaults to [store.TaskLogLinesDefault] and
// [store.TaskLogBytesDefault]; values below 1 or above
// [store.TaskLogLinesMax] and [store.TaskLogBytesMax] are errors.
func WithTaskLogLimit(lines, bytes int) Option {
	return func(c *config) {
		if err := store.CheckTaskLogLimit(lines, bytes); err != nil {
			c.reject("WithTaskLogLimit", strconv.Itoa(lines)+", "+strconv.Itoa(bytes), err.Error())
			return
		}
		c.logLines, c.logBytes = lines, bytes
	}
}

// TaskLogAppend stores lines of an attempt under the task's cap. See
// [store.TaskLogStore]. One round trip (task_log_append.lua).
func (s *Store) TaskLogAppend(ctx context.Context, params *store.TaskLogAppendParams) (*store.TaskLogAppendResult, error) {
	shard, err := s.runShard(params.Lease.RunID)
	if err != nil {
		return nil, err
	}
	id := params.Lease.RunID
	args := make([]any, 0, 6+len(params.Lines))
	args = append(args, params.Lease.Task, params.Lease.Epoch, params.Attempt, params.Seq, s.cfg.logLines, s.cfg.logBytes)
	for _, l := range params.Lines {
		args = append(args, strconv.FormatInt(l.Time.UnixMilli(), 10)+","+strconv.Itoa(int(l.Level))+","+
			strconv.Itoa(len(l.Text))+";"+l.Text)
	}
	v, err := s.runScript(ctx, scriptTaskLogAppend, []string{s.keys.run(shard, id), s.keys.taskLogs(shard, id)}, args...)
	if err != nil {
		return nil, err
	}
	r := &reply{v: v}
	code, stored, dropped := r.int(), r.int(), r.int()
	if r.err != nil {
		return nil, r.err
	}
	if err := codeErr(code); err != nil {
		return nil, fmt.Errorf("redisstore: task log of run %s task %s epoch %d: %w", id, ids.Quote(params.Lease.Task), params.Lease.Epoch, err)
	}
	return &store.TaskLogAppendResult{Stored: int(stored), Dropped: int(dropped)}, nil
}

// TaskLogRead answers a task's stored lines. See [store.TaskLogStore]. One
// round trip: a pipeline of HEXISTS on the run hash (is the task there)
// and HGETALL of the run's log hash.
func (s *Store) TaskLogRead(ctx context.Context, params *store.TaskLogReadParams) (*store.TaskLogReadResult, error) {
	shard, err := s.runShard(params.RunID)
	if err != nil {
		return nil, err
	}
	var exists *redis.BoolCmd
	var all *redis.MapStringStringCmd
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		exists = p.HExists(ctx, s.keys.run(shard, params.RunID), "s:"+params.Task)
		all = p.HGetAll(ctx, s.keys.taskLogs(shard, params.RunID))
		return nil
	})
	if err != nil {
		return nil, mapErr(err)
	}
	if !exists.Val() {
		return nil, fmt.Errorf("redisstore: run %s task %s: %w", params.RunID, ids.Quote(params.Task), store.ErrNotFound)
	}
	return decodeTaskLog(params.Task, params.Attempt, all.Val())
}

// logBatch is one stored append of a task: its epoch and sequence number
// and its value.
type logBatch struct {
	epoch, seq int64
	value      string
}

// decodeTaskLog gathers the lines of one task from the run's log hash, in
// the order they were appended (by epoch, then sequence number).
func decodeTaskLog(task string, attempt int, h map[string]string) (*store.TaskLogReadResult, error) {
	res := &store.TaskLogReadResult{}
	if totals, ok := h["n:"+task]; ok {
		f := strings.Split(totals, ",")
		if len(f) != 3 {
			return nil, corrupt("task log totals %s", clip(totals))
		}
		d, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, corrupt("task log totals %s", clip(totals))
		}
		res.Dropped = d
	}
	prefix := "b:" + task + ":"
	var batches []logBatch
	for field, v := range h {
		rest, ok := strings.CutPrefix(field, prefix)
		if !ok {
			continue
		}
		es, ss, ok := strings.Cut(rest, ":")
		e, err1 := strconv.ParseInt(es, 10, 64)
		q, err2 := strconv.ParseInt(ss, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, corrupt("task log field %s", clip(field))
		}
		batches = append(batches, logBatch{epoch: e, seq: q, value: v})
	}
	sort.Slice(batches, func(i, j int) bool {
		if batches[i].epoch != batches[j].epoch {
			return batches[i].epoch < batches[j].epoch
		}
		return batches[i].seq < batches[j].seq
	})
	for _, b := range batches {
		head, body, ok := strings.Cut(b.value, ";")
		f := strings.Split(head, ",")
		if !ok || len(f) != 3 {
			return nil, corrupt("task log batch %s", clip(b.value))
		}
		n, err := strconv.Atoi(f[0])
		if err != nil {
			return nil, corrupt("task log batch %s", clip(b.value))
		}
		lines, err := decodeLogLines(body, n, b.epoch)
		if err != nil {
			return nil, err
		}
		if attempt > 0 && n != attempt {
			continue
		}
		res.Lines = append(res.Lines, lines...)
	}
	return res, nil
}

// decodeLogLines decodes lines "timeMs,level,textLen;" + text, one after
// another.
func decodeLogLines(s string, attempt int, epoch int64) ([]store.LogLine, error) {
	var out []store.LogLine
	for len(s) > 0 {
		head, rest, ok := strings.Cut(s, ";")
		f := strings.Split(head, ",")
		if !ok || len(f) != 3 {
			return nil, corrupt("task log line %s", clip(s))
		}
		ms, err1 := strconv.ParseInt(f[0], 10, 64)
		lv, err2 := strconv.Atoi(f[1])
		n, err3 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || err3 != nil || n < 0 || n > len(rest) {
			return nil, corrupt("task log line %s", clip(head))
		}
		out = append(out, store.LogLine{Time: msTime(ms), Level: slog.Level(lv), Text: rest[:n], Attempt: attempt, Epoch: epoch})
		s = rest[n:]
	}
	return out, nil
}
