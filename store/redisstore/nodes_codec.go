package redisstore

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/plaitdag/plait/store"
)

// Node hash fields. Lists of names are joined by spaces (names follow the id
// rules, so they hold none); a held task is "<run> <task> <attempt>
// <started ms>" and tasks are joined by commas; a history entry is "<seq>
// <run> <task> <attempt> <outcome> <started ms> <ended ms>".
const (
	nodeFieldName     = "name"
	nodeFieldHost     = "host"
	nodeFieldPID      = "pid"
	nodeFieldVersion  = "ver"
	nodeFieldCaps     = "caps"
	nodeFieldQueues   = "queues"
	nodeFieldHandlers = "handlers"
	nodeFieldCapacity = "capacity"
	nodeFieldLoad     = "load"
	nodeFieldDone     = "done"
	nodeFieldFailed   = "failed"
	nodeFieldTasks    = "tasks"
	nodeFieldDraining = "draining"
)

func msOrZero(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return strconv.FormatInt(t.UnixMilli(), 10)
}

func historyEntry(t store.NodeTask) string {
	return strconv.FormatInt(t.Seq, 10) + " " + t.RunID + " " + t.Task + " " + strconv.Itoa(t.Attempt) + " " +
		strconv.Itoa(int(t.Outcome)) + " " + msOrZero(t.StartedAt) + " " + msOrZero(t.EndedAt)
}

// msField parses a time in ms, "0" or "" being the zero time.
func msField(v string) (time.Time, error) {
	if v == "" || v == "0" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, errCorrupt
	}
	return msTime(n), nil
}

// parseNodeTask reads a held task (without seq and outcome) or a history
// entry (with them).
func parseNodeTask(s string, history bool) (store.NodeTask, error) {
	f := strings.Split(s, " ")
	var t store.NodeTask
	want := 4
	if history {
		want = 7
	}
	if len(f) != want {
		return t, errCorrupt
	}
	if history {
		seq, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return t, errCorrupt
		}
		t.Seq = seq
		f = f[1:]
	}
	t.RunID, t.Task = f[0], f[1]
	var err error
	if t.Attempt, err = strconv.Atoi(f[2]); err != nil {
		return t, errCorrupt
	}
	if history {
		o, err := strconv.Atoi(f[3])
		if err != nil {
			return t, errCorrupt
		}
		t.Outcome = store.Outcome(o)
		f = f[1:]
	}
	if t.StartedAt, err = msField(f[3]); err != nil {
		return t, err
	}
	if history {
		if t.EndedAt, err = msField(f[4]); err != nil {
			return t, err
		}
	}
	return t, nil
}

func names(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, " ")
}

// nodeRecord decodes a node hash and its history; it answers nil for a
// record that expired by now or does not exist.
func nodeRecord(id string, m map[string]string, hist []string, now time.Time) (*store.NodeRecord, error) {
	if len(m) == 0 {
		return nil, nil
	}
	bad := func(field string) error {
		return fmt.Errorf("redisstore: node %q field %s: %w", id, field, errCorrupt)
	}
	r := &store.NodeRecord{}
	var err error
	if r.ExpiresAt, err = msField(m["exp"]); err != nil {
		return nil, bad("exp")
	}
	if !now.Before(r.ExpiresAt) {
		return nil, nil
	}
	r.ID, r.Name, r.Host, r.Version = id, m[nodeFieldName], m[nodeFieldHost], m[nodeFieldVersion]
	r.Capabilities, r.Queues, r.Handlers = names(m[nodeFieldCaps]), names(m[nodeFieldQueues]), names(m[nodeFieldHandlers])
	r.Draining, r.DrainRequested = m[nodeFieldDraining] == "1", m["drain"] == "1"
	for field, dst := range map[string]*int{nodeFieldPID: &r.PID, nodeFieldCapacity: &r.Capacity, nodeFieldLoad: &r.Load} {
		if *dst, err = strconv.Atoi(m[field]); err != nil {
			return nil, bad(field)
		}
	}
	for field, dst := range map[string]*int64{nodeFieldDone: &r.Completed, nodeFieldFailed: &r.Failed} {
		if *dst, err = strconv.ParseInt(m[field], 10, 64); err != nil {
			return nil, bad(field)
		}
	}
	for field, dst := range map[string]*time.Time{"start": &r.StartedAt, "beat": &r.HeartbeatAt} {
		if *dst, err = msField(m[field]); err != nil {
			return nil, bad(field)
		}
	}
	if v := m[nodeFieldTasks]; v != "" {
		for _, e := range strings.Split(v, ",") {
			t, err := parseNodeTask(e, false)
			if err != nil {
				return nil, bad(nodeFieldTasks)
			}
			r.Tasks = append(r.Tasks, t)
		}
	}
	for _, e := range hist {
		t, err := parseNodeTask(e, true)
		if err != nil {
			return nil, fmt.Errorf("redisstore: node %q history: %w", id, errCorrupt)
		}
		r.History = append(r.History, t)
	}
	return r, nil
}
