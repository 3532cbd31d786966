package plait_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/fakeclock"
)

// Every public entry point that takes a caller's string is fed three
// hostile values, and each error it answers must quote at most 128 bytes of
// the value (no run of more than hostileRunMax consecutive bytes of it in
// the message), stay under hostileMsgMax bytes, be valid UTF-8 without a
// NUL (the value is quoted, not pasted), and nothing may panic. A row is one
// entry point (one argument of it): adding an entry point is adding a row.

const (
	hostileRunMax = 128
	hostileMsgMax = 600
)

// hostileValues are the three values every row is fed. The long one does
// not repeat itself, so any 129 bytes of it found in a message were copied
// from it.
var hostileValues = []struct{ name, v string }{
	{"10KB", longHostile()},
	{"invalid UTF-8", "bad\xff\xfename"},
	{"NUL", "bad\x00name"},
}

func longHostile() string {
	var b strings.Builder
	for i := 0; b.Len() < 10<<10; i++ {
		b.WriteString(strconv.FormatInt(int64(i)*7919, 36))
		b.WriteByte('-')
	}
	return b.String()
}

// hostileRow is one entry point fed a hostile value v.
type hostileRow struct {
	name string
	// accept says the entry point takes some such values by design
	// (metadata, a lookup that finds nothing, a directory): no error is
	// fine, an error must still be short.
	accept bool
	// skip, when set, says which file must change before the row passes;
	// skipOn, when set, limits it to the store of that name.
	skip, skipOn string
	call         func(e *hostileEnv, v string) error
}

// hostileEnv is what a row calls: a scheduler on the store named store,
// with a handler "h" and one run of a workflow "wf" whose task is "a".
type hostileEnv struct {
	ctx   context.Context
	store string
	s     *plait.Scheduler
	run   string
}

var hostileSeq atomic.Int64

// schedule answers a valid schedule of a name of its own.
func (e *hostileEnv) schedule() *plait.Schedule {
	return &plait.Schedule{
		Name:     "hostile-" + strconv.FormatInt(hostileSeq.Add(1), 10),
		Spec:     "@every 1h",
		Workflow: plait.NewWorkflow("wf").Task("a", "h", nil),
	}
}

func (e *hostileEnv) save(edit func(sc *plait.Schedule)) error {
	sc := e.schedule()
	edit(sc)
	_, err := e.s.ScheduleSave(e.ctx, sc)
	return err
}

func (e *hostileEnv) submit(opts ...plait.SubmitOption) error {
	_, err := e.s.Submit(e.ctx, plait.NewWorkflow("wf").Task("a", "h", nil), opts...)
	return err
}

func e2(_ any, err error) error { return err }

// schedulerRows are the entry points of a Scheduler, run on every store.
func schedulerRows() []hostileRow {
	return []hostileRow{
		{name: "Handle", call: func(e *hostileEnv, v string) error { return e.s.Handle(v, noop) }},
		{name: "Submit/WithRunKey", call: func(e *hostileEnv, v string) error { return e.submit(plait.WithRunKey(v)) }},
		{name: "Submit/ForTenant", call: func(e *hostileEnv, v string) error {
			return e.submit(plait.ForService("svc"), plait.ForTenant(v))
		}},
		{name: "Submit/ForService", call: func(e *hostileEnv, v string) error { return e.submit(plait.ForService(v)) }},
		{name: "Submit/WithMetadata key", accept: true, call: func(e *hostileEnv, v string) error {
			return e.submit(plait.WithMetadata(map[string]string{v: "x"}))
		}},
		{name: "Submit/WithMetadata value", accept: true, call: func(e *hostileEnv, v string) error {
			return e.submit(plait.WithMetadata(map[string]string{"k": v}))
		}},
		{name: "Submit/WithTraceContext", accept: true, call: func(e *hostileEnv, v string) error {
			return e.submit(plait.WithTraceContext(v, v))
		}},
		{name: "Submit/task handler", call: func(e *hostileEnv, v string) error {
			return e2(e.s.Submit(e.ctx, plait.NewWorkflow("wf").Task("a", v, nil)))
		}},
		{name: "ScheduleSave/Name", call: func(e *hostileEnv, v string) error { return e.save(func(sc *plait.Schedule) { sc.Name = v }) }},
		{name: "ScheduleSave/Spec", call: func(e *hostileEnv, v string) error { return e.save(func(sc *plait.Schedule) { sc.Spec = v }) }},
		{name: "ScheduleSave/cron field", call: func(e *hostileEnv, v string) error {
			return e.save(func(sc *plait.Schedule) { sc.Spec = "0 " + v[:min(len(v), 200)] + " * * *" })
		}},
		{name: "ScheduleSave/TimeZone", call: func(e *hostileEnv, v string) error {
			return e.save(func(sc *plait.Schedule) { sc.TimeZone = v })
		}},
		{name: "ScheduleSave/Tenant", call: func(e *hostileEnv, v string) error {
			return e.save(func(sc *plait.Schedule) { sc.Service, sc.Tenant = "svc", v })
		}},
		{name: "ScheduleSave/Service", call: func(e *hostileEnv, v string) error {
			return e.save(func(sc *plait.Schedule) { sc.Service = v })
		}},
		{name: "ScheduleSave/CatchUp", call: func(e *hostileEnv, v string) error {
			return e.save(func(sc *plait.Schedule) { sc.CatchUp = plait.CatchUpPolicy(v) })
		}},
		{name: "ScheduleSave/Overlap", call: func(e *hostileEnv, v string) error {
			return e.save(func(sc *plait.Schedule) { sc.Overlap = plait.OverlapPolicy(v) })
		}},
		{name: "ScheduleSave/Metadata key", accept: true, call: func(e *hostileEnv, v string) error {
			return e.save(func(sc *plait.Schedule) { sc.Metadata = map[string]string{v: "x"} })
		}},
		{name: "ScheduleSave/Metadata value", accept: true, call: func(e *hostileEnv, v string) error {
			return e.save(func(sc *plait.Schedule) { sc.Metadata = map[string]string{"k": v} })
		}},
		{name: "ScheduleSave/Workflow name", call: func(e *hostileEnv, v string) error {
			return e.save(func(sc *plait.Schedule) { sc.Workflow = plait.NewWorkflow(v).Task("a", "h", nil) })
		}},
		{name: "ScheduleGet", call: func(e *hostileEnv, v string) error { return e2(e.s.ScheduleGet(e.ctx, v)) }},
		{name: "ScheduleDelete", call: func(e *hostileEnv, v string) error { return e.s.ScheduleDelete(e.ctx, v) }},
		{name: "SchedulePause", call: func(e *hostileEnv, v string) error { return e2(e.s.SchedulePause(e.ctx, v)) }},
		{name: "ScheduleResume", call: func(e *hostileEnv, v string) error { return e2(e.s.ScheduleResume(e.ctx, v)) }},
		{name: "ScheduleTrigger", call: func(e *hostileEnv, v string) error { return e2(e.s.ScheduleTrigger(e.ctx, v)) }},
		{name: "ScheduleBackfill", call: func(e *hostileEnv, v string) error {
			return e2(e.s.ScheduleBackfill(e.ctx, v, epoch, epoch.Add(time.Hour)))
		}},
		{name: "RunGet", call: func(e *hostileEnv, v string) error { return e2(e.s.RunGet(e.ctx, v)) }},
		{name: "RunGetMany", accept: true, call: func(e *hostileEnv, v string) error { return e2(e.s.RunGetMany(e.ctx, v)) }},
		{name: "RunWait", call: func(e *hostileEnv, v string) error { return e2(e.s.RunWait(e.ctx, v)) }},
		{name: "RunCancel", call: func(e *hostileEnv, v string) error { return e2(e.s.RunCancel(e.ctx, v)) }},
		{name: "RunDelete", call: func(e *hostileEnv, v string) error { return e.s.RunDelete(e.ctx, v) }},
		{name: "RunHistory", call: func(e *hostileEnv, v string) error { return e2(e.s.RunHistory(e.ctx, v)) }},
		{name: "RunReplay/run", call: func(e *hostileEnv, v string) error { return e2(e.s.RunReplay(e.ctx, v, 0)) }},
		{name: "RunReplay/task", call: func(e *hostileEnv, v string) error { return e2(e.s.RunReplay(e.ctx, e.run, 0, v)) }},
		{name: "TaskRunNow/run", call: func(e *hostileEnv, v string) error { return e2(e.s.TaskRunNow(e.ctx, v, "a", "")) }},
		{name: "TaskSkip/task", call: func(e *hostileEnv, v string) error { return e2(e.s.TaskSkip(e.ctx, e.run, v, "")) }},
		{name: "TaskCancel/task", call: func(e *hostileEnv, v string) error { return e2(e.s.TaskCancel(e.ctx, e.run, v, "")) }},
		{name: "RunNote/run", call: func(e *hostileEnv, v string) error { return e.s.RunNote(e.ctx, v, "note") }},
		{name: "RunNote/text", accept: true, call: func(e *hostileEnv, v string) error { return e.s.RunNote(e.ctx, e.run, v) }},
		{name: "RunDeleteMany", call: func(e *hostileEnv, v string) error {
			errs, err := e.s.RunDeleteMany(e.ctx, v)
			if err != nil {
				return err
			}
			return errs[0]
		}},
		{name: "RunList/Workflow", call: func(e *hostileEnv, v string) error {
			return e2(e.s.RunList(e.ctx, plait.RunListParams{Filter: plait.RunFilter{Workflow: v}}))
		}},
		{name: "RunList/Service", call: func(e *hostileEnv, v string) error {
			return e2(e.s.RunList(e.ctx, plait.RunListParams{Filter: plait.RunFilter{Service: v}}))
		}},
		{name: "RunList/Status", call: func(e *hostileEnv, v string) error {
			return e2(e.s.RunList(e.ctx, plait.RunListParams{Filter: plait.RunFilter{Statuses: []plait.RunStatus{plait.RunStatus(v)}}}))
		}},
		{name: "RunList/Cursor", call: func(e *hostileEnv, v string) error {
			return e2(e.s.RunList(e.ctx, plait.RunListParams{Cursor: v}))
		}},
		{name: "TaskList", call: func(e *hostileEnv, v string) error { return e2(e.s.TaskList(e.ctx, v)) }},
		{name: "TaskHistory/run", call: func(e *hostileEnv, v string) error { return e2(e.s.TaskHistory(e.ctx, v, "a")) }},
		{name: "TaskHistory/task", call: func(e *hostileEnv, v string) error { return e2(e.s.TaskHistory(e.ctx, e.run, v)) }},
		{name: "TaskLogRead/run", call: func(e *hostileEnv, v string) error { return e2(e.s.TaskLogRead(e.ctx, v, "a", 0)) }},
		{name: "TaskLogRead/task", call: func(e *hostileEnv, v string) error { return e2(e.s.TaskLogRead(e.ctx, e.run, v, 0)) }},
		{name: "DeadLetterGet/run", call: func(e *hostileEnv, v string) error { return e2(e.s.DeadLetterGet(e.ctx, v, "a")) }},
		{name: "DeadLetterGet/task", call: func(e *hostileEnv, v string) error { return e2(e.s.DeadLetterGet(e.ctx, e.run, v)) }},
		{name: "DeadLetterRequeue/run", call: func(e *hostileEnv, v string) error { return e2(e.s.DeadLetterRequeue(e.ctx, v)) }},
		{name: "DeadLetterRequeue/task", call: func(e *hostileEnv, v string) error { return e2(e.s.DeadLetterRequeue(e.ctx, e.run, v)) }},
		{name: "DeadLetterList/Cursor", call: func(e *hostileEnv, v string) error {
			return e2(e.s.DeadLetterList(e.ctx, plait.DeadLetterListParams{Cursor: v}))
		}},
		{name: "DeadLetterPurge", accept: true, call: func(e *hostileEnv, v string) error {
			return e2(e.s.DeadLetterPurge(e.ctx, plait.DeadLetterRef{RunID: v, Task: v}))
		}},
		{name: "QueuePause", call: func(e *hostileEnv, v string) error { return e.s.QueuePause(e.ctx, v) }},
		{name: "QueueResume", call: func(e *hostileEnv, v string) error { return e.s.QueueResume(e.ctx, v) }},
		{name: "NodeGet", call: func(e *hostileEnv, v string) error { return e2(e.s.NodeGet(e.ctx, v)) }},
		{name: "NodeDrain", call: func(e *hostileEnv, v string) error { return e.s.NodeDrain(e.ctx, v) }},
		{name: "NodeListByCapability", accept: true, call: func(e *hostileEnv, v string) error {
			return e2(e.s.NodeListByCapability(e.ctx, v))
		}},
	}
}

// TestHostileInputScheduler runs the Scheduler's rows on every store.
func TestHostileInputScheduler(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f storeFactory) {
		clk := fakeclock.New(epoch)
		s, err := plait.New(f.new(t, clk), plait.WithClock(clk), plait.WithWorkerID("w1"))
		require.NoError(t, err)
		require.NoError(t, s.Handle("h", noop))
		ctx, cancel := context.WithTimeout(context.Background(), failAfter)
		defer cancel()
		run, err := s.Submit(ctx, plait.NewWorkflow("wf").Task("a", "h", nil))
		require.NoError(t, err)
		runHostile(t, schedulerRows(), &hostileEnv{ctx: ctx, store: f.name, s: s, run: run.ID})
	})
}

// TestHostileInputPackages runs the rows that need no store.
func TestHostileInputPackages(t *testing.T) {
	t.Parallel()
	runHostile(t, packageRows(), nil)
}

func runHostile(t *testing.T, rows []hostileRow, e *hostileEnv) {
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			if row.skip != "" && (row.skipOn == "" || e != nil && e.store == row.skipOn) {
				t.Skip(row.skip)
			}
			for _, hv := range hostileValues {
				var err error
				require.NotPanics(t, func() { err = row.call(e, hv.v) }, hv.name)
				if err == nil {
					require.True(t, row.accept, "%s: accepted", hv.name)
					continue
				}
				requireShortMessage(t, hv.name, hv.v, err.Error())
			}
		})
	}
}

// requireShortMessage holds msg to the quoting rule for the value v.
func requireShortMessage(t *testing.T, what, v, msg string) {
	t.Helper()
	head := msg
	if len(head) > 2*hostileMsgMax {
		head = head[:2*hostileMsgMax] + "…"
	}
	require.Less(t, len(msg), hostileMsgMax, "%s: a %d-byte message: %q", what, len(msg), head)
	require.LessOrEqual(t, longestRun(msg, v), hostileRunMax, "%s: message %q", what, head)
	require.True(t, utf8.ValidString(msg), "%s: message not valid UTF-8: %q", what, head)
	require.NotContains(t, msg, "\x00", "%s: message holds a NUL: %q", what, head)
}

// longestRun answers hostileRunMax+1 when some hostileRunMax+1
// consecutive bytes of v appear in msg, else at most hostileRunMax.
func longestRun(msg, v string) int {
	const w = hostileRunMax + 1
	if len(v) < w || len(msg) < w {
		return min(len(v), len(msg))
	}
	windows := make(map[string]bool, len(msg))
	for i := 0; i+w <= len(msg); i++ {
		windows[msg[i:i+w]] = true
	}
	for i := 0; i+w <= len(v); i++ {
		if windows[v[i:i+w]] {
			return w
		}
	}
	return hostileRunMax
}

// A schedule name over ScheduleNameMax is told that limit, not the id
// rules' longer one, however long it is.
func TestScheduleNameStatesItsLimit(t *testing.T) {
	t.Parallel()
	s, err := plait.New(newMemStore(t), plait.WithWorkerID("w1"))
	require.NoError(t, err)
	want := "is longer than " + strconv.Itoa(plait.ScheduleNameMax) + " bytes"
	for _, n := range []int{plait.ScheduleNameMax + 1, 129, 10 << 10} {
		name := strings.Repeat("n", n)
		_, err := s.ScheduleSave(context.Background(), &plait.Schedule{Name: name, Spec: "@daily", Workflow: plait.NewWorkflow("wf").Task("a", "h", nil)})
		require.ErrorIs(t, err, plait.ErrInvalidID, "%d bytes", n)
		require.Contains(t, err.Error(), want, "%d bytes", n)
		_, err = s.ScheduleGet(context.Background(), name)
		require.Contains(t, err.Error(), want, "%d bytes", n)
	}
}
