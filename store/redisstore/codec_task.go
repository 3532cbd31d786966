package redisstore

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/plaitdag/plait/store"
)

// A task's definition in the run hash: the field d: (a header line the
// scripts read, then a binary body only Go reads) and the edge lists u:
// and c:. codec_state.go has the fields that change as the task runs.

// edgeRef is one dependency edge as stored in an edge list.
type edgeRef struct {
	Task string
	On   store.Condition
}

// encodeEdges encodes an edge list field (u:<task>, c:<task>):
// "name:cond name:cond".
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

// decodeEdges decodes an edge list field into dependencies.
func decodeEdges(name, s string) ([]store.Dep, error) {
	if s == "" {
		return nil, nil
	}
	var out []store.Dep
	for _, e := range strings.Split(s, " ") {
		task, cond, ok := strings.Cut(e, ":")
		c, err := strconv.Atoi(cond)
		if !ok || err != nil || c < 0 || c > 2 || task == "" {
			return nil, corrupt("task %q dependency %s", name, clip(e))
		}
		out = append(out, store.Dep{Task: task, On: store.Condition(c)})
	}
	return out, nil
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
func encodeTask(t *store.TaskSpec, enc valueCodec, mayApart bool, version byte) taskFields {
	var payload string
	if t.Payload != nil {
		payload = enc.encode(t.Payload)
	}
	out := taskFields{def: encodeTaskDef(t, payload, false, version)}
	if mayApart && len(payload) > 0 && len(out.def) > maxListpackValue {
		out.def = encodeTaskDef(t, "", true, version)
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
// "queue,prio,runAtMs,delayMs,join,deps,apart" (queue: the routed queue the
// task is kept on), then the body: the version
// byte and the spec. payload is the encoded payload (flag byte first),
// inline unless apart.
func encodeTaskDef(t *store.TaskSpec, payload string, apart bool, version byte) string {
	var b strings.Builder
	// The scripts queue the task by this name: its routed queue when it
	// requires capabilities (store.RoutedQueue).
	b.WriteString(store.RoutedQueue(t.Queue, t.Requires))
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

	w := &writer{b: []byte{version}}
	w.str(t.Handler)
	if t.Payload == nil || apart {
		w.uvarint(0)
	} else {
		w.uvarint(uint64(len(payload)) + 1)
		w.b = append(w.b, payload...)
	}
	if t.Retry != (store.RetryPolicy{}) {
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
	// Version 3: the limits, as the spec has them (the scripts read l:),
	// only when there are some: a definition without ends at the delay.
	if len(t.Limits) > 0 {
		w.uvarint(uint64(len(t.Limits)))
	}
	for _, l := range t.Limits {
		w.str(l.Key)
		w.uvarint(uint64(l.Concurrency))
		w.uvarint(uint64(l.Rate))
		w.varint(int64(l.Per))
	}
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

// ceilDurMillis rounds a duration up to the millisecond, the unit of every
// duration a script reads; zero and negative are 0.
func ceilDurMillis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// taskDef is field d:<task> decoded: the spec but for its dependencies
// (field u:) and a payload kept apart, and what the header says of those.
type taskDef struct {
	spec  store.TaskSpec
	deps  int
	apart bool
	// route is the queue the task is kept on (the header's queue).
	route string
}

// decodeDef is the one decoder of field d:<task>. The version byte that
// opens the body is read first, so a definition of a version this code does
// not read fails with a [*RecordVersionError] whatever its header holds.
// With handlerOnly it stops after the handler, the one part a run read
// needs, which spares decoding (and decompressing) the payload of every
// task of the run.
func decodeDef(name, s string, handlerOnly bool) (taskDef, error) {
	head, body, ok := strings.Cut(s, "\n")
	if !ok {
		return taskDef{}, corrupt("task %q definition has no header", name)
	}
	r := &reader{b: []byte(body)}
	version, err := r.version("task definition")
	if err != nil {
		return taskDef{}, fmt.Errorf("task %q: %w", name, err)
	}
	var d taskDef
	if err := d.header(name, head); err != nil {
		return taskDef{}, err
	}
	t := &d.spec
	t.Handler = r.str("handler")
	if handlerOnly {
		if r.err != nil {
			return taskDef{}, fmt.Errorf("task %q: %w", name, r.err)
		}
		return d, nil
	}
	if n := r.uvarint("payload"); n > 0 && r.err == nil {
		raw := r.take(n-1, "payload")
		if r.err == nil {
			var err error
			if t.Payload, err = decodeValue(string(raw)); err != nil {
				return taskDef{}, fmt.Errorf("task %q payload: %w", name, err)
			}
		}
	}
	if r.uvarint("retry") == 1 {
		t.Retry.MaxAttempts = int(r.varint("max attempts"))
		t.Retry.Backoff = store.BackoffKind(r.uvarint("backoff"))
		t.Retry.InitialInterval = time.Duration(r.varint("initial interval"))
		t.Retry.MaxInterval = time.Duration(r.varint("max interval"))
		t.Retry.Multiplier = math.Float64frombits(r.uvarint("multiplier"))
		t.Retry.Jitter = math.Float64frombits(r.uvarint("jitter"))
		t.Retry.MaxElapsed = time.Duration(r.varint("max elapsed"))
	}
	t.Timeout = time.Duration(r.varint("timeout"))
	if n := r.count("requires"); n >= 0 {
		t.Requires = make([]string, 0, n)
		for i := 0; i < n && r.err == nil; i++ {
			t.Requires = append(t.Requires, r.str("capability"))
		}
	}
	if r.uvarint("run at") == 1 {
		sec := r.varint("run at seconds")
		nsec := r.varint("run at nanoseconds")
		if r.err == nil {
			if nsec < 0 || nsec >= 1e9 {
				return taskDef{}, corrupt("task %q run at nanoseconds %d", name, nsec)
			}
			t.RunAt = time.Unix(sec, nsec).UTC()
		}
	}
	t.Delay = time.Duration(r.varint("delay"))
	if version >= 3 && len(r.b) > 0 {
		n := int(r.uvarint("limits"))
		for i := 0; i < n && r.err == nil; i++ {
			l := store.TaskLimit{Key: r.str("limit key")}
			l.Concurrency = int(r.uvarint("limit concurrency"))
			l.Rate = int(r.uvarint("limit rate"))
			l.Per = time.Duration(r.varint("limit window"))
			t.Limits = append(t.Limits, l)
		}
	}
	r.end("definition")
	if r.err != nil {
		return taskDef{}, fmt.Errorf("task %q: %w", name, r.err)
	}
	return d, nil
}

// header decodes the header line "queue,prio,runAtMs,delayMs,join,deps,apart"
// into d. The due time and the delay are the scripts' copies in ms; the
// spec's own are in the body.
func (d *taskDef) header(name, head string) error {
	var f [7]string
	n := 0
	for rest, more := head, true; more; n++ {
		if n == len(f) {
			return corrupt("task %q definition header has more than %d fields", name, len(f))
		}
		f[n], rest, more = strings.Cut(rest, ",")
	}
	if n != len(f) {
		return corrupt("task %q definition header has %d fields", name, n)
	}
	queue, _, ok := store.SplitRoutedQueue(f[0])
	if !ok {
		return corrupt("task %q queue %s", name, clip(f[0]))
	}
	d.spec.Name, d.spec.Queue, d.route = name, queue, f[0]
	p, err := strconv.Atoi(f[1])
	if err != nil || p < 0 || p > 3 {
		return corrupt("task %q priority %s", name, clip(f[1]))
	}
	d.spec.Priority = store.Priority(p - 1)
	j, err := strconv.Atoi(f[4])
	if err != nil || j < 0 || j > 1 {
		return corrupt("task %q join %s", name, clip(f[4]))
	}
	d.spec.Join = store.Join(j)
	if d.deps, err = strconv.Atoi(f[5]); err != nil || d.deps < 0 {
		return corrupt("task %q dependency count %s", name, clip(f[5]))
	}
	if f[6] != "0" && f[6] != "1" {
		return corrupt("task %q payload flag %s", name, clip(f[6]))
	}
	d.apart = f[6] == "1"
	return nil
}

// decodeTaskDef decodes field d:<task>, with the task's parents (field
// u:<task>) and its payload key's value (when the header says the payload
// is apart), back into the spec named name that was submitted; with
// depsLeftOut (a claim that left the parents out) its Deps stay empty.
func decodeTaskDef(name, s, parents, payload string, depsLeftOut bool) (store.TaskSpec, error) {
	d, err := decodeDef(name, s, false)
	if err != nil {
		return store.TaskSpec{}, err
	}
	t := d.spec
	if !depsLeftOut {
		if t.Deps, err = decodeEdges(name, parents); err != nil {
			return store.TaskSpec{}, err
		}
		if len(t.Deps) != d.deps {
			return store.TaskSpec{}, corrupt("task %q lists %d dependencies, header %d", name, len(t.Deps), d.deps)
		}
	}
	if d.apart {
		if payload == "" {
			return store.TaskSpec{}, corrupt("task %q payload key missing", name)
		}
		if t.Payload, err = decodeValue(payload); err != nil {
			return store.TaskSpec{}, fmt.Errorf("task %q payload: %w", name, err)
		}
	}
	return t, nil
}
