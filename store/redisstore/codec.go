package redisstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/plaitdag/plait"
)

// Record encodings. The Lua-facing parts (run meta "m", task state "s:",
// the definition header of "d:", attempt records "a:") are described at the
// top of lua/common.lua; this file is their Go mirror. The parts only Go
// reads (run info "i", the body of "d:") are a small binary format: a
// version byte, then uvarint-length-prefixed strings and varints.

// errCorrupt marks a record that cannot be decoded.
var errCorrupt = errors.New("redisstore: corrupt record")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errCorrupt}, args...)...)
}

// codecVersion opens the binary parts. Version 2 stores the retry policy
// only when set, and payloads with the value flag byte (see valueCodec).
const codecVersion = 2

// Run status letters (meta field st) and task status letters (state st).
var (
	runStatusByLetter = map[byte]plait.RunStatus{
		'P': plait.RunPending, 'U': plait.RunRunning, 'S': plait.RunCompleted,
		'F': plait.RunFailed, 'C': plait.RunCancelled,
	}
	taskStatusByLetter = map[byte]plait.TaskStatus{
		'P': plait.TaskPending, 'W': plait.TaskPending, 'R': plait.TaskReady,
		'U': plait.TaskRunning, 'Y': plait.TaskRetrying, 'S': plait.TaskSucceeded,
		'F': plait.TaskFailed, 'K': plait.TaskSkipped, 'C': plait.TaskCancelled,
		'D': plait.TaskDead,
	}
	outcomeByLetter = map[byte]string{
		's': "succeeded", 'r': "retry", 'f': "failed", 'l': "released",
		'c': "crashed", 'x': "cancelled",
	}
)

func strategyLetter(s plait.ErrorStrategy) (string, error) {
	switch s {
	case plait.StrategyContinue, "":
		return "c", nil
	case plait.StrategyStop:
		return "s", nil
	case plait.StrategySkip:
		return "k", nil
	}
	return "", fmt.Errorf("redisstore: unknown error strategy %q: %w", s, plait.ErrInvalidArgument)
}

func strategyOf(l string) (plait.ErrorStrategy, bool) {
	switch l {
	case "c":
		return plait.StrategyContinue, true
	case "s":
		return plait.StrategyStop, true
	case "k":
		return plait.StrategySkip, true
	}
	return "", false
}

// writer appends the binary encoding.
type writer struct{ b []byte }

func (w *writer) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) varint(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *writer) str(s string)     { w.uvarint(uint64(len(s))); w.b = append(w.b, s...) }
func (w *writer) bytes(b []byte) {
	if b == nil {
		w.uvarint(0)
		return
	}
	w.uvarint(uint64(len(b)) + 1)
	w.b = append(w.b, b...)
}

// reader consumes the binary encoding; the first problem sticks in err.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = corrupt("truncated or malformed %s", what)
	}
}

func (r *reader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint(what string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) take(n uint64, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.fail(what)
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) str(what string) string { return string(r.take(r.uvarint(what), what)) }

func (r *reader) bytes(what string) []byte {
	n := r.uvarint(what)
	if n == 0 || r.err != nil {
		return nil
	}
	return append([]byte{}, r.take(n-1, what)...)
}

func (r *reader) byte1(what string) byte {
	b := r.take(1, what)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// runInfo is the immutable part of a run that only Go reads (field "i").
type runInfo struct {
	Workflow string
	Tenant   string
	Service  string
	Metadata map[string]string
}

func encodeRunInfo(in runInfo) string {
	w := &writer{b: []byte{codecVersion}}
	w.str(in.Workflow)
	w.str(in.Tenant)
	w.str(in.Service)
	if in.Metadata == nil {
		w.uvarint(0)
	} else {
		w.uvarint(uint64(len(in.Metadata)) + 1)
		for _, k := range sortedKeys(in.Metadata) {
			w.str(k)
			w.str(in.Metadata[k])
		}
	}
	return string(w.b)
}

func decodeRunInfo(s string) (runInfo, error) {
	r := &reader{b: []byte(s)}
	if v := r.byte1("version"); r.err == nil && v != codecVersion {
		return runInfo{}, corrupt("run info version %d", v)
	}
	var in runInfo
	in.Workflow = r.str("workflow")
	in.Tenant = r.str("tenant")
	in.Service = r.str("service")
	if n := r.uvarint("metadata"); n > 0 && r.err == nil {
		n--
		if n > uint64(len(r.b)) {
			return runInfo{}, corrupt("metadata count %d", n)
		}
		in.Metadata = make(map[string]string, n)
		for i := uint64(0); i < n && r.err == nil; i++ {
			k := r.str("metadata key")
			in.Metadata[k] = r.str("metadata value")
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("run info trailer")
	}
	return in, r.err
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	// insertion sort keeps this file free of extra imports; maps are small.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// edgeRef is one dependency edge as stored in an edge list.
type edgeRef struct {
	Task string
	On   plait.Condition
}

// encodeEdges encodes an edge list field (u:<task>, c:<task>).
func encodeEdges(es []edgeRef) string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(e.Task)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(int(e.On)))
	}
	return b.String()
}

// maxListpackValue is Redis's default hash-max-listpack-value: a hash whose
// values all fit stays in the compact listpack encoding.
const maxListpackValue = 64

// taskFields are the stored fields of one task definition.
type taskFields struct {
	// def is field d:<task>: the Lua header line, then the body.
	def string
	// parents is field u:<task>, empty for a root.
	parents string
	// payload is the value of the payload key p:<run>:<task> when the
	// payload is kept apart (apart), else empty.
	payload string
	apart   bool
}

// encodeTask encodes a task definition. Payloads go through enc (flag byte,
// optional compression). With mayApart, a payload that would make d:<task>
// longer than a listpack value goes to its own key instead, so the run hash
// stays compact.
func encodeTask(t *plait.TaskSpec, enc valueCodec, mayApart bool) taskFields {
	var payload string
	if t.Payload != nil {
		payload = enc.encode(t.Payload)
	}
	out := taskFields{def: encodeTaskDef(t, payload, false)}
	if mayApart && len(payload) > 0 && len(out.def) > maxListpackValue {
		out.def = encodeTaskDef(t, "", true)
		out.payload = payload
		out.apart = true
	}
	if len(t.Deps) > 0 {
		es := make([]edgeRef, len(t.Deps))
		for i, d := range t.Deps {
			es[i] = edgeRef{Task: d.Task, On: d.On}
		}
		out.parents = encodeEdges(es)
	}
	return out
}

// encodeTaskDef encodes field d:<task>: the Lua header line
// "queue,prio,runAtMs,delayMs,join,deps,apart", then the body. payload is
// the encoded payload (flag byte first), inline unless apart.
func encodeTaskDef(t *plait.TaskSpec, payload string, apart bool) string {
	var b strings.Builder
	queue := t.Queue
	if queue == "" {
		queue = plait.DefaultQueue
	}
	b.WriteString(queue)
	b.WriteByte(',')
	b.WriteString(strconv.Itoa(prioDigit(int8(t.Priority))))
	b.WriteByte(',')
	var runAt int64
	if !t.RunAt.IsZero() {
		runAt = ceilMillis(t.RunAt)
	}
	b.WriteString(strconv.FormatInt(runAt, 10))
	b.WriteByte(',')
	b.WriteString(strconv.FormatInt(ceilDurMillis(t.Delay), 10))
	b.WriteByte(',')
	b.WriteString(strconv.Itoa(int(t.Join)))
	b.WriteByte(',')
	b.WriteString(strconv.Itoa(len(t.Deps)))
	if apart {
		b.WriteString(",1\n")
	} else {
		b.WriteString(",0\n")
	}

	w := &writer{b: []byte{codecVersion}}
	w.str(t.Handler)
	if t.Payload == nil || apart {
		w.uvarint(0)
	} else {
		w.uvarint(uint64(len(payload)) + 1)
		w.b = append(w.b, payload...)
	}
	if t.Retry != (plait.RetryPolicy{}) {
		w.uvarint(1)
		w.varint(int64(t.Retry.MaxAttempts))
		w.uvarint(uint64(t.Retry.Backoff))
		w.varint(int64(t.Retry.InitialInterval))
		w.varint(int64(t.Retry.MaxInterval))
		w.uvarint(math.Float64bits(t.Retry.Multiplier))
		w.uvarint(math.Float64bits(t.Retry.Jitter))
		w.varint(int64(t.Retry.MaxElapsed))
	} else {
		w.uvarint(0)
	}
	w.varint(int64(t.Timeout))
	if t.Requires == nil {
		w.uvarint(0)
	} else {
		w.uvarint(uint64(len(t.Requires)) + 1)
		for _, c := range t.Requires {
			w.str(c)
		}
	}
	if t.RunAt.IsZero() {
		w.uvarint(0)
	} else {
		w.uvarint(1)
		w.varint(t.RunAt.Unix())
		w.varint(int64(t.RunAt.Nanosecond()))
	}
	w.varint(int64(t.Delay))
	b.Write(w.b)
	return b.String()
}

// ceilMillis rounds a time up to the millisecond, so a due time is never
// earlier than asked.
func ceilMillis(t time.Time) int64 {
	ms := t.UnixMilli()
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return ms
}

func ceilDurMillis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// decodeEdges decodes an edge list field into dependencies.
func decodeEdges(name, s string) ([]plait.Dep, error) {
	if s == "" {
		return nil, nil
	}
	var out []plait.Dep
	for _, e := range strings.Split(s, " ") {
		task, cond, ok := strings.Cut(e, ":")
		c, err := strconv.Atoi(cond)
		if !ok || err != nil || c < 0 || c > 2 || task == "" {
			return nil, corrupt("task %q dependency %q", name, clip(e))
		}
		out = append(out, plait.Dep{Task: task, On: plait.Condition(c)})
	}
	return out, nil
}

// decodeTaskDef decodes field d:<task>, with the task's parents (field
// u:<task>) and its payload key's value (when the header says the payload
// is apart), back into a spec named name.
func decodeTaskDef(name, s, parents, payload string) (plait.TaskSpec, error) {
	head, body, ok := strings.Cut(s, "\n")
	if !ok {
		return plait.TaskSpec{}, corrupt("task %q definition has no header", name)
	}
	f := strings.Split(head, ",")
	if len(f) != 7 {
		return plait.TaskSpec{}, corrupt("task %q definition header has %d fields", name, len(f))
	}
	t := plait.TaskSpec{Name: name, Queue: f[0]}
	p, err := strconv.Atoi(f[1])
	if err != nil || p < 0 || p > 3 {
		return plait.TaskSpec{}, corrupt("task %q priority %q", name, f[1])
	}
	t.Priority = plait.Priority(p - 1)
	j, err := strconv.Atoi(f[4])
	if err != nil || j < 0 || j > 1 {
		return plait.TaskSpec{}, corrupt("task %q join %q", name, f[4])
	}
	t.Join = plait.Join(j)
	deps, err := strconv.Atoi(f[5])
	if err != nil || deps < 0 {
		return plait.TaskSpec{}, corrupt("task %q dependency count %q", name, f[5])
	}
	if f[6] != "0" && f[6] != "1" {
		return plait.TaskSpec{}, corrupt("task %q payload flag %q", name, f[6])
	}
	apart := f[6] == "1"
	if t.Deps, err = decodeEdges(name, parents); err != nil {
		return plait.TaskSpec{}, err
	}
	if len(t.Deps) != deps {
		return plait.TaskSpec{}, corrupt("task %q lists %d dependencies, header %d", name, len(t.Deps), deps)
	}

	r := &reader{b: []byte(body)}
	if v := r.byte1("version"); r.err == nil && v != codecVersion {
		return plait.TaskSpec{}, corrupt("task %q definition version %d", name, v)
	}
	t.Handler = r.str("handler")
	if n := r.uvarint("payload"); n > 0 && r.err == nil {
		raw := r.take(n-1, "payload")
		if r.err == nil {
			if t.Payload, err = decodeValue(string(raw)); err != nil {
				return plait.TaskSpec{}, fmt.Errorf("task %q payload: %w", name, err)
			}
		}
	}
	if r.uvarint("retry") == 1 {
		t.Retry.MaxAttempts = int(r.varint("max attempts"))
		t.Retry.Backoff = plait.BackoffKind(r.uvarint("backoff"))
		t.Retry.InitialInterval = time.Duration(r.varint("initial interval"))
		t.Retry.MaxInterval = time.Duration(r.varint("max interval"))
		t.Retry.Multiplier = math.Float64frombits(r.uvarint("multiplier"))
		t.Retry.Jitter = math.Float64frombits(r.uvarint("jitter"))
		t.Retry.MaxElapsed = time.Duration(r.varint("max elapsed"))
	}
	t.Timeout = time.Duration(r.varint("timeout"))
	if n := r.uvarint("requires"); n > 0 && r.err == nil {
		n--
		if n > uint64(len(r.b)) {
			return plait.TaskSpec{}, corrupt("task %q requires count %d", name, n)
		}
		t.Requires = make([]string, 0, n)
		for i := uint64(0); i < n && r.err == nil; i++ {
			t.Requires = append(t.Requires, r.str("capability"))
		}
	}
	if r.uvarint("run at") == 1 {
		sec := r.varint("run at seconds")
		nsec := r.varint("run at nanoseconds")
		if r.err == nil {
			if nsec < 0 || nsec >= 1e9 {
				return plait.TaskSpec{}, corrupt("task %q run at nanoseconds %d", name, nsec)
			}
			t.RunAt = time.Unix(sec, nsec).UTC()
		}
	}
	t.Delay = time.Duration(r.varint("delay"))
	if r.err == nil && len(r.b) != 0 {
		r.fail("definition trailer")
	}
	if r.err != nil {
		return plait.TaskSpec{}, fmt.Errorf("task %q: %w", name, r.err)
	}
	if apart {
		if payload == "" {
			return plait.TaskSpec{}, corrupt("task %q payload key missing", name)
		}
		if t.Payload, err = decodeValue(payload); err != nil {
			return plait.TaskSpec{}, fmt.Errorf("task %q payload: %w", name, err)
		}
	}
	return t, nil
}

// runMeta is the decoded field m.
type runMeta struct {
	status                                  plait.RunStatus
	total, succ, failed, skipped, cancelled int
	created                                 int64
	started, ended                          int64 // offsets from created, -1 when unset
	strategy                                plait.ErrorStrategy
}

func decodeMeta(s string) (runMeta, error) {
	f := strings.Split(s, ",")
	if len(f) != 10 || len(f[0]) != 1 {
		return runMeta{}, corrupt("run meta %q", clip(s))
	}
	var m runMeta
	var ok bool
	if m.status, ok = runStatusByLetter[f[0][0]]; !ok {
		return runMeta{}, corrupt("run status %q", f[0])
	}
	var err error
	ints := []*int{&m.total, &m.succ, &m.failed, &m.skipped, &m.cancelled}
	for i, p := range ints {
		if *p, err = strconv.Atoi(f[1+i]); err != nil || *p < 0 {
			return runMeta{}, corrupt("run counter %q", f[1+i])
		}
	}
	if m.created, err = strconv.ParseInt(f[6], 10, 64); err != nil {
		return runMeta{}, corrupt("run created %q", f[6])
	}
	if m.started, err = optInt(f[7]); err != nil {
		return runMeta{}, err
	}
	if m.ended, err = optInt(f[8]); err != nil {
		return runMeta{}, err
	}
	if m.strategy, ok = strategyOf(f[9]); !ok {
		return runMeta{}, corrupt("run strategy %q", f[9])
	}
	return m, nil
}

func optInt(s string) (int64, error) {
	if s == "" {
		return -1, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, corrupt("time offset %q", clip(s))
	}
	return v, nil
}

// taskState is the decoded field s:<task>.
type taskState struct {
	status                       plait.TaskStatus
	letter                       byte
	attempt                      int
	epoch                        int64
	crashes, resolved, satisfied int
	first, claim, ended          int64 // offsets, -1 when unset
	worker                       string
}

func decodeState(s string) (taskState, error) {
	f := strings.SplitN(s, ",", 10)
	if len(f) != 10 || len(f[0]) != 1 {
		return taskState{}, corrupt("task state %q", clip(s))
	}
	var t taskState
	var ok bool
	t.letter = f[0][0]
	if t.status, ok = taskStatusByLetter[t.letter]; !ok {
		return taskState{}, corrupt("task status %q", f[0])
	}
	var err error
	if t.attempt, err = strconv.Atoi(f[1]); err != nil || t.attempt < 0 {
		return taskState{}, corrupt("task attempt %q", f[1])
	}
	if t.epoch, err = strconv.ParseInt(f[2], 10, 64); err != nil || t.epoch < 0 {
		return taskState{}, corrupt("task epoch %q", f[2])
	}
	for i, p := range []*int{&t.crashes, &t.resolved, &t.satisfied} {
		if *p, err = strconv.Atoi(f[3+i]); err != nil || *p < 0 {
			return taskState{}, corrupt("task counter %q", f[3+i])
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

// decodeAttempts decodes field a:<task>.
func decodeAttempts(s string, created int64) ([]plait.Attempt, error) {
	var out []plait.Attempt
	for len(s) > 0 {
		head, rest, ok := strings.Cut(s, ";")
		if !ok {
			return nil, corrupt("attempt record %q", clip(s))
		}
		f := strings.Split(head, ",")
		if len(f) != 7 || len(f[4]) != 1 {
			return nil, corrupt("attempt record %q", clip(head))
		}
		var n [6]int64
		for i, j := range []int{0, 1, 2, 3, 5, 6} {
			v, err := strconv.ParseInt(f[j], 10, 64)
			if err != nil {
				return nil, corrupt("attempt field %q", clip(f[j]))
			}
			n[i] = v
		}
		outcome, ok := outcomeByLetter[f[4][0]]
		wl, el := n[4], n[5]
		if !ok || wl < 0 || el < 0 || wl > int64(len(rest)) || el > int64(len(rest))-wl {
			return nil, corrupt("attempt record %q", clip(head))
		}
		out = append(out, plait.Attempt{
			Attempt:   int(n[0]),
			Epoch:     n[1],
			StartedAt: msTime(created + n[2]),
			Duration:  time.Duration(n[3]) * time.Millisecond,
			Outcome:   outcome,
			Worker:    rest[:wl],
			Error:     rest[wl : wl+el],
		})
		s = rest[wl+el:]
	}
	return out, nil
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func offTime(created, off int64) time.Time {
	if off < 0 {
		return time.Time{}
	}
	return msTime(created + off)
}

func clip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strconv.Quote(s)
}

// decodeRun builds a run from its hash fields.
func decodeRun(id string, h map[string]string) (*plait.Run, error) {
	ms, ok := h["m"]
	if !ok {
		// A large run's parts are written before the commit adds m.
		return nil, fmt.Errorf("redisstore: run %q: %w", id, plait.ErrNotFound)
	}
	m, err := decodeMeta(ms)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	info, err := decodeRunInfo(h["i"])
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	run := &plait.Run{
		ID:        id,
		Key:       h["k"],
		Workflow:  info.Workflow,
		Strategy:  m.strategy,
		Status:    m.status,
		Tenant:    info.Tenant,
		Service:   info.Service,
		Metadata:  info.Metadata,
		Total:     m.total,
		Succeeded: m.succ,
		Failed:    m.failed,
		Skipped:   m.skipped,
		Cancelled: m.cancelled,
		CreatedAt: msTime(m.created),
		StartedAt: offTime(m.created, m.started),
		EndedAt:   offTime(m.created, m.ended),
	}
	var names []string
	if o := h["o"]; o != "" {
		names = strings.Split(o, " ")
	}
	if len(names) != m.total {
		return nil, corrupt("run %s lists %d tasks, total %d", id, len(names), m.total)
	}
	run.Tasks = make([]plait.TaskInstance, len(names))
	for i, name := range names {
		in, err := decodeInstance(name, h, m.created)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		run.Tasks[i] = in
	}
	return run, nil
}

func decodeInstance(name string, h map[string]string, created int64) (plait.TaskInstance, error) {
	ss, ok := h["s:"+name]
	if !ok {
		return plait.TaskInstance{}, corrupt("task %q has no state", name)
	}
	st, err := decodeState(ss)
	if err != nil {
		return plait.TaskInstance{}, fmt.Errorf("task %q: %w", name, err)
	}
	handler, err := decodeHandler(name, h["d:"+name])
	if err != nil {
		return plait.TaskInstance{}, err
	}
	in := plait.TaskInstance{
		Name:      name,
		Handler:   handler,
		Status:    st.status,
		Attempt:   st.attempt,
		Epoch:     st.epoch,
		Crashes:   st.crashes,
		Error:     h["e:"+name],
		Worker:    st.worker,
		StartedAt: offTime(created, st.first),
		EndedAt:   offTime(created, st.ended),
	}
	if r, ok := h["r:"+name]; ok {
		if in.Result, err = decodeValue(r); err != nil {
			return plait.TaskInstance{}, fmt.Errorf("task %q result: %w", name, err)
		}
	}
	if a, ok := h["a:"+name]; ok {
		if in.Attempts, err = decodeAttempts(a, created); err != nil {
			return plait.TaskInstance{}, fmt.Errorf("task %q: %w", name, err)
		}
	}
	return in, nil
}

// decodeHandler reads only the handler name of field d:<task> (RunGet needs
// nothing else of a definition).
func decodeHandler(name, s string) (string, error) {
	_, body, ok := strings.Cut(s, "\n")
	if !ok {
		return "", corrupt("task %q definition has no header", name)
	}
	r := &reader{b: []byte(body)}
	if v := r.byte1("version"); r.err == nil && v != codecVersion {
		return "", corrupt("task %q definition version %d", name, v)
	}
	h := r.str("handler")
	if r.err != nil {
		return "", fmt.Errorf("task %q: %w", name, r.err)
	}
	return h, nil
}
