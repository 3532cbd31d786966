package redisstore

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// The run's own fields: the info i (binary, Go only), the meta m (text,
// shared with Lua), and decodeRun, the one function that builds a run from
// its hash, which RunGet, RunCancel and RunWait all go through.

// runStatusOf decodes a run status letter (meta field st, the status a
// finish reports).
func runStatusOf(letter string) (store.RunStatus, bool) {
	if len(letter) != 1 {
		return "", false
	}
	switch letter[0] {
	case 'P':
		return store.RunPending, true
	case 'U':
		return store.RunRunning, true
	case 'S':
		return store.RunCompleted, true
	case 'F':
		return store.RunFailed, true
	case 'C':
		return store.RunCancelled, true
	}
	return "", false
}

// strategyLetter encodes an error strategy for the meta field.
func strategyLetter(s store.ErrorStrategy) (string, error) {
	switch s {
	case store.StrategyContinue, "":
		return "c", nil
	case store.StrategyStop:
		return "s", nil
	case store.StrategySkip:
		return "k", nil
	}
	return "", fmt.Errorf("redisstore: unknown error strategy %s: %w", clip(string(s)), store.ErrInvalidArgument)
}

func strategyOf(l string) (store.ErrorStrategy, bool) {
	switch l {
	case "c":
		return store.StrategyContinue, true
	case "s":
		return store.StrategyStop, true
	case "k":
		return store.StrategySkip, true
	}
	return "", false
}

// runInfo is the immutable part of a run that only Go reads (field i).
type runInfo struct {
	Workflow string
	Tenant   string
	Service  string
	Metadata map[string]string
}

// encodeRunInfo encodes field i: the format version of the whole hash
// (the version the store writes), then the info. Metadata is written in key order, so equal runs store
// equal bytes.
func encodeRunInfo(in runInfo, version byte) string {
	w := &writer{b: []byte{version}}
	w.str(in.Workflow)
	w.str(in.Tenant)
	w.str(in.Service)
	if in.Metadata == nil {
		w.uvarint(0)
	} else {
		keys := make([]string, 0, len(in.Metadata))
		for k := range in.Metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.uvarint(uint64(len(keys)) + 1)
		for _, k := range keys {
			w.str(k)
			w.str(in.Metadata[k])
		}
	}
	return string(w.b)
}

// decodeRunInfo decodes field i. Its version is checked first, so a hash of
// a version this code does not read fails here, before any field in a
// layout it does not know is read.
func decodeRunInfo(s string) (runInfo, error) {
	r := &reader{b: []byte(s)}
	if _, err := r.version("run info"); err != nil {
		return runInfo{}, err
	}
	var in runInfo
	in.Workflow = r.str("workflow")
	in.Tenant = r.str("tenant")
	in.Service = r.str("service")
	if n := r.count("metadata"); n >= 0 {
		in.Metadata = make(map[string]string, n)
		for i := 0; i < n && r.err == nil; i++ {
			k := r.str("metadata key")
			in.Metadata[k] = r.str("metadata value")
		}
	}
	r.end("run info")
	return in, r.err
}

// runMeta is the decoded field m.
type runMeta struct {
	status                                  store.RunStatus
	total, succ, failed, skipped, cancelled int
	created                                 int64
	started, ended                          int64 // offsets from created, -1 when unset
	strategy                                store.ErrorStrategy
	gen                                     int64 // the generation after the status letter, 0 when none
}

// decodeMeta decodes field m:
// "st[gen],total,succ,failed,skipped,cancelled,createdMs,startedOff,endedOff,strategy".
func decodeMeta(s string) (runMeta, error) {
	f := strings.Split(s, ",")
	if len(f) != 10 {
		return runMeta{}, corrupt("run meta %s", clip(s))
	}
	var m runMeta
	var ok bool
	letter, gen, err := splitGen(f[0])
	if err != nil {
		return runMeta{}, err
	}
	if m.status, ok = runStatusOf(letter); !ok {
		return runMeta{}, corrupt("run status %s", clip(f[0]))
	}
	m.gen = gen
	ints := []*int{&m.total, &m.succ, &m.failed, &m.skipped, &m.cancelled}
	for i, p := range ints {
		if *p, err = strconv.Atoi(f[1+i]); err != nil || *p < 0 {
			return runMeta{}, corrupt("run counter %s", clip(f[1+i]))
		}
	}
	if m.created, err = strconv.ParseInt(f[6], 10, 64); err != nil {
		return runMeta{}, corrupt("run created %s", clip(f[6]))
	}
	if m.started, err = optInt(f[7]); err != nil {
		return runMeta{}, err
	}
	if m.ended, err = optInt(f[8]); err != nil {
		return runMeta{}, err
	}
	if m.strategy, ok = strategyOf(f[9]); !ok {
		return runMeta{}, corrupt("run strategy %s", clip(f[9]))
	}
	return m, nil
}

// splitGen splits a status or outcome letter from the generation that
// follows it in a generation above 0 (format version 7; lua/lib_codec.lua):
// "U" is generation 0, "U2" generation 2.
func splitGen(f string) (letter string, gen int64, err error) {
	if len(f) < 1 {
		return "", 0, corrupt("status letter %s", clip(f))
	}
	if len(f) == 1 {
		return f, 0, nil
	}
	gen, err = strconv.ParseInt(f[1:], 10, 64)
	if err != nil || gen < 1 {
		return "", 0, corrupt("generation %s", clip(f))
	}
	return f[:1], gen, nil
}

// optInt decodes an optional offset in ms: "" is -1 (unset).
func optInt(s string) (int64, error) {
	if s == "" {
		return -1, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, corrupt("time offset %s", clip(s))
	}
	return v, nil
}

// msTime is a stored Unix ms time.
func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// offTime is a stored offset in ms after created, the zero time when unset.
func offTime(created, off int64) time.Time {
	if off < 0 {
		return time.Time{}
	}
	return msTime(created + off)
}

// decodeRun builds a run from its hash fields (HGETALL, or the fields
// run_cancel.lua answers with). Field i comes first: its version governs
// every other field.
func decodeRun(id string, h map[string]string) (*store.Run, error) {
	ms, ok := h["m"]
	if !ok {
		// A large run's parts are written before the commit adds m.
		return nil, fmt.Errorf("redisstore: run %s: %w", ids.Quote(id), store.ErrNotFound)
	}
	info, err := decodeRunInfo(h["i"])
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	m, err := decodeMeta(ms)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	run := &store.Run{
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
	if g, ok := h["g"]; ok {
		n, err := strconv.ParseInt(g, 10, 64)
		if err != nil || n < 0 {
			return nil, corrupt("run %s has generation %s", id, clip(g))
		}
		run.Generation = n
	}
	var names []string
	if o := h["o"]; o != "" {
		names = strings.Split(o, " ")
	}
	if len(names) != m.total {
		return nil, corrupt("run %s lists %d tasks, total %d", id, len(names), m.total)
	}
	run.Tasks = make([]store.TaskInstance, len(names))
	for i, name := range names {
		in, err := decodeInstance(name, h, hashVersion(h), m.created)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		run.Tasks[i] = in
	}
	return run, nil
}

// decodeInstance builds one task of a run from the run's hash fields, of
// format version version.
func decodeInstance(name string, h map[string]string, version int, created int64) (store.TaskInstance, error) {
	ss, ok := h["s:"+name]
	if !ok {
		return store.TaskInstance{}, corrupt("task %q has no state", name)
	}
	st, err := decodeState(ss)
	if err != nil {
		return store.TaskInstance{}, fmt.Errorf("task %q: %w", name, err)
	}
	def, err := decodeDef(name, h["d:"+name], true)
	if err != nil {
		return store.TaskInstance{}, err
	}
	in := store.TaskInstance{
		Name:      name,
		Handler:   def.spec.Handler,
		Queue:     def.spec.Queue,
		Status:    st.status,
		Attempt:   st.attempt,
		Epoch:     st.epoch,
		Crashes:   st.crashes,
		Error:     h["e:"+name],
		StartedAt: offTime(created, st.first),
		EndedAt:   offTime(created, st.ended),
	}
	in.Worker, in.Node = store.SplitWorker(st.worker)
	if in.Status == store.TaskReady {
		if reason, ok := h["g:"+name]; ok {
			in.WaitingFor = reason
		} else {
			in.WaitingFor = store.WaitingForCapability(def.route)
		}
	}
	if r, ok := h["r:"+name]; ok {
		if in.Result, err = decodeValue(r); err != nil {
			return store.TaskInstance{}, fmt.Errorf("task %q result: %w", name, err)
		}
	}
	if in.Attempts, err = decodeTaskAttempts(name, h, st, version, created); err != nil {
		return store.TaskInstance{}, fmt.Errorf("task %q: %w", name, err)
	}
	if in.Progress, err = taskProgress(name, h); err != nil {
		return store.TaskInstance{}, err
	}
	if err := attemptProgress(name, h, in.Progress, in.Attempts); err != nil {
		return store.TaskInstance{}, err
	}
	return in, nil
}
