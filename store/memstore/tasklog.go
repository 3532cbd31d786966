package memstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// WithTaskLogLimit caps the lines the attempts of one task log (see
// [store.TaskLogStore]): at most lines lines and bytes bytes of text per
// task, all attempts together; the lines past the cap are counted as
// dropped. Defaults to [store.TaskLogLinesDefault] and
// [store.TaskLogBytesDefault], as on Redis; values below 1 or above
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

// taskLog is what a task's attempts logged: the lines kept, their bytes,
// how many the cap refused, and the result of each append by epoch and
// sequence number, so a resend answers it again.
type taskLog struct {
	lines   []store.LogLine
	bytes   int
	dropped int
	appends map[string]store.TaskLogAppendResult
}

// TaskLogAppend stores lines of an attempt under the task's cap. See
// [store.TaskLogStore].
func (s *Store) TaskLogAppend(ctx context.Context, params *store.TaskLogAppendParams) (*store.TaskLogAppendResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.liveRunLocked(params.Lease.RunID)
	if err != nil {
		return nil, err
	}
	i, ok := r.find(params.Lease.Task)
	if !ok {
		return nil, fmt.Errorf("memstore: run %s task %s: %w", r.rec.ID, ids.Quote(params.Lease.Task), store.ErrNotFound)
	}
	t := &r.tasks[i]
	if t.epoch != params.Lease.Epoch {
		return nil, fmt.Errorf("memstore: run %s task %s log of epoch %d, task at %d: %w",
			r.rec.ID, t.inst.Name, params.Lease.Epoch, t.epoch, store.ErrStaleEpoch)
	}
	if r.logs == nil {
		r.logs = make(map[string]*taskLog)
	}
	tl := r.logs[t.inst.Name]
	if tl == nil {
		tl = &taskLog{appends: make(map[string]store.TaskLogAppendResult)}
		r.logs[t.inst.Name] = tl
	}
	id := strconv.FormatInt(params.Lease.Epoch, 10) + ":" + strconv.Itoa(params.Seq)
	if res, seen := tl.appends[id]; seen {
		return &res, nil
	}
	res := store.TaskLogAppendResult{}
	for _, line := range params.Lines {
		if res.Dropped > 0 || len(tl.lines) >= s.cfg.logLines || tl.bytes+len(line.Text) > s.cfg.logBytes {
			res.Dropped++
			continue
		}
		line.Time = time.UnixMilli(line.Time.UnixMilli()).UTC()
		line.Attempt, line.Epoch = params.Attempt, params.Lease.Epoch
		tl.lines = append(tl.lines, line)
		tl.bytes += len(line.Text)
		res.Stored++
	}
	tl.dropped += res.Dropped
	tl.appends[id] = res
	return &res, nil
}

// TaskLogRead answers a task's stored lines. See [store.TaskLogStore].
func (s *Store) TaskLogRead(ctx context.Context, params *store.TaskLogReadParams) (*store.TaskLogReadResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runLocked(params.RunID)
	if err != nil {
		return nil, err
	}
	if _, ok := r.find(params.Task); !ok {
		return nil, fmt.Errorf("memstore: run %s task %s: %w", r.rec.ID, ids.Quote(params.Task), store.ErrNotFound)
	}
	res := &store.TaskLogReadResult{}
	tl := r.logs[params.Task]
	if tl == nil {
		return res, nil
	}
	res.Dropped = tl.dropped
	for _, line := range tl.lines {
		if params.Attempt > 0 && line.Attempt != params.Attempt {
			continue
		}
		res.Lines = append(res.Lines, line)
	}
	return res, nil
}
