package storetest

import (
	"log/slog"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testTime pins the contract's "# Time" section: every time a store
// answers is in UTC and a whole millisecond, whatever the nanoseconds of
// its clock and of the times it is given. Each case moves the harness clock
// off the millisecond grid first (the only cases that do).
func testTime(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "WholeMilliseconds",
			rule: "every time a store answers is in UTC and a whole millisecond, whatever the nanoseconds of its clock",
			run:  testWholeMilliseconds,
		},
		{
			name: "DueTimesRoundUp",
			rule: "a due time or deadline finer than a millisecond is kept rounded up to one, never earlier than asked",
			run:  testDueTimesRoundUp,
		},
		{
			name: "DeadLettersOfOneMillisecond",
			rule: "dead letters of one millisecond share their time and are listed by run and task, descending; a bound within that millisecond keeps them all",
			run:  testDeadLettersOfOneMillisecond,
		},
		{
			name: "RunBoundsCutToTheMillisecond",
			rule: "a time bound of a run query is cut to the millisecond: a CreatedFrom within a run's millisecond keeps it, a CreatedTo there leaves it out",
			run:  testRunBoundsCutToTheMillisecond,
		},
	})
}

// offGrid moves the harness clock by d and a fraction of a millisecond.
func offGrid(h *Harness, d time.Duration) {
	h.Advance(d + 234567*time.Nanosecond)
}

// wholeMs requires every non-zero time of ts to be in UTC and a whole
// millisecond; what names them in the failure.
func wholeMs(t *testing.T, rule, what string, ts ...time.Time) {
	t.Helper()
	for _, x := range ts {
		if x.IsZero() {
			continue
		}
		require.Truef(t, x.Location() == time.UTC && x.Nanosecond()%int(time.Millisecond) == 0,
			"%s: %s is %s (%s)", rule, what, x.Format(time.RFC3339Nano), x.Location())
	}
}

// wholeMsRun checks every time of a run, its tasks and their attempts.
func wholeMsRun(t *testing.T, rule, what string, r *store.Run) {
	t.Helper()
	wholeMs(t, rule, what+" run times", r.CreatedAt, r.StartedAt, r.EndedAt)
	for _, ti := range r.Tasks {
		wholeMs(t, rule, what+" task "+ti.Name+" times", ti.StartedAt, ti.EndedAt)
		wholeMsAttempts(t, rule, what+" task "+ti.Name, ti.Attempts)
	}
}

func wholeMsAttempts(t *testing.T, rule, what string, as []store.Attempt) {
	t.Helper()
	for _, a := range as {
		wholeMs(t, rule, what+" attempt "+a.Outcome+" times", a.QueuedAt, a.StartedAt, a.EndedAt)
	}
}

// wholeMsClaim checks the times of a claim's answer.
func wholeMsClaim(t *testing.T, rule string, res *store.TaskClaimResult) {
	t.Helper()
	wholeMs(t, rule, "claim Now and NextDueAt", res.Now, res.NextDueAt)
	for _, ct := range res.Tasks {
		wholeMs(t, rule, "claimed "+ct.Lease.Task+" LeaseUntil and FirstStartedAt", ct.LeaseUntil, ct.FirstStartedAt)
	}
}

// testWholeMilliseconds reads every time of a run through its life, and
// of each capability the store has: created, claimed, extended, retried,
// dead-lettered, finished, logged, evented, listed, replayed; a node's
// heartbeat, a schedule saved and fired, the leader lease, a ping.
func testWholeMilliseconds(t *testing.T, h *Harness, rule string) {
	offGrid(h, time.Millisecond)
	late := task("late")
	late.RunAt = h.Now().Add(time.Minute)
	r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"), late)})
	wholeMsRun(t, rule, "created", r)

	res := claim(t, h, &claimOpts{Lease: defaultLease + 345678*time.Nanosecond})
	wholeMsClaim(t, rule, res)
	require.Len(t, res.Tasks, 1, rule)
	a := res.Tasks[0]
	offGrid(h, 2*time.Millisecond)
	ext, err := h.Store.LeaseExtend(bg, &store.LeaseExtendParams{WorkerID: defaultWorker, Leases: []store.Lease{a.Lease}, Duration: time.Minute + 1})
	require.NoError(t, err, rule)
	require.NoError(t, ext[0].Err, rule)
	wholeMs(t, rule, "LeaseExtend Until", ext[0].Until)
	if ls, ok := h.Store.(store.TaskLogStore); ok {
		appendLines(t, ls, a.Lease, a.Attempt, 1, rule, line(h.Now(), slog.LevelInfo, "x"))
	}
	wholeMsRun(t, rule, "claimed", getRun(t, h, r.ID))

	offGrid(h, 3*time.Millisecond)
	require.NoError(t, finish(t, h, store.TaskOutcome{Lease: a.Lease, Outcome: store.OutcomeRetry, Error: "again", RetryDelay: time.Second + 1}).Err, rule)
	offGrid(h, 2*time.Second)
	res = claim(t, h, nil)
	wholeMsClaim(t, rule, res)
	require.Len(t, res.Tasks, 1, rule)
	offGrid(h, 4*time.Millisecond)
	failTask(t, h, res.Tasks[0].Lease, "boom", rule)
	offGrid(h, time.Minute)
	succeed(t, h, claimOne(t, h, "late", rule).Lease, "ok", rule)
	done := getRun(t, h, r.ID)
	require.True(t, done.Status.Terminal(), rule)
	wholeMsRun(t, rule, "finished", done)

	if hs, ok := h.Store.(store.HistoryStore); ok {
		hist, err := hs.AttemptHistory(bg, &store.AttemptHistoryParams{RunID: r.ID})
		require.NoError(t, err, rule)
		for _, th := range hist.Tasks {
			wholeMsAttempts(t, rule, "history of "+th.Task, th.Attempts)
		}
	}
	if d, ok := h.Store.(store.DeadLetterStore); ok {
		letters := listDead(t, d, store.DeadLetterListParams{Limit: 10}, rule).Letters
		require.Len(t, letters, 1, rule)
		wholeMs(t, rule, "DeadLetter At", letters[0].At)
	}
	if es, ok := h.Store.(store.EventStore); ok {
		evs, err := es.EventRead(bg, &store.EventReadParams{RunID: r.ID, Limit: 1000})
		require.NoError(t, err, rule)
		require.NotEmpty(t, evs.Events, rule)
		for _, ev := range evs.Events {
			wholeMs(t, rule, "event "+string(ev.Type)+" At", ev.At)
		}
	}
	if ls, ok := h.Store.(store.TaskLogStore); ok {
		lines := readLogs(t, ls, r.ID, "a", 0, rule).Lines
		require.Len(t, lines, 1, rule)
		wholeMs(t, rule, "LogLine Time", lines[0].Time)
	}
	if qs, ok := h.Store.(store.QueryStore); ok {
		for _, run := range queryAll(t, h, store.RunFilter{}, 10, rule) {
			wholeMsRun(t, rule, "RunList", run)
		}
		many, err := qs.RunGetMany(bg, &store.RunGetManyParams{IDs: []string{r.ID}})
		require.NoError(t, err, rule)
		wholeMsRun(t, rule, "RunGetMany", many.Runs[0])
		tl, err := qs.TaskList(bg, &store.TaskListParams{RunID: r.ID})
		require.NoError(t, err, rule)
		wholeMsRun(t, rule, "TaskList", &store.Run{Tasks: tl.Tasks})
	}
	if rs, ok := h.Store.(store.ReplayStore); ok {
		offGrid(h, time.Millisecond)
		rep, err := rs.RunReplay(bg, &store.RunReplayParams{RunID: r.ID})
		require.NoError(t, err, rule)
		wholeMsRun(t, rule, "replayed", rep.Run)
	}
	wholeMsCapabilities(t, h, rule)
}

// wholeMsCapabilities reads the times of the node registry, the schedules,
// the leader lease and the ping, those the store has.
func wholeMsCapabilities(t *testing.T, h *Harness, rule string) {
	t.Helper()
	fine := func(d time.Duration) time.Time { return h.Now().Add(d + 987654*time.Nanosecond) }
	if ns, ok := h.Store.(store.NodeStore); ok {
		info := nodeInfo("n1")
		info.Tasks = []store.NodeTask{{RunID: "r", Task: "a", Attempt: 1, StartedAt: fine(-time.Second)}}
		hist := store.NodeTask{Seq: 1, RunID: "r", Task: "b", Attempt: 1, Outcome: store.OutcomeSucceeded, StartedAt: fine(-2 * time.Second), EndedAt: fine(-time.Second)}
		hb, err := ns.NodeHeartbeat(bg, &store.NodeHeartbeatParams{Node: info, TTL: nodeTTL + 1, History: []store.NodeTask{hist}, HistoryLimit: 3})
		require.NoError(t, err, rule)
		wholeMs(t, rule, "NodeHeartbeat Now", hb.Now)
		list, err := ns.NodeList(bg, &store.NodeListParams{})
		require.NoError(t, err, rule)
		require.Len(t, list.Nodes, 1, rule)
		for _, n := range append(list.Nodes, getNode(t, h, "n1", rule)) {
			wholeMs(t, rule, "NodeRecord times", n.StartedAt, n.HeartbeatAt, n.ExpiresAt)
			for _, nt := range append(n.Tasks, n.History...) {
				wholeMs(t, rule, "NodeTask times", nt.StartedAt, nt.EndedAt)
			}
		}
	}
	if ss, ok := h.Store.(store.ScheduleStore); ok {
		rec, err := ss.ScheduleSave(bg, &store.ScheduleSaveParams{Name: "s", Definition: []byte("d"), NextFire: fine(time.Minute)})
		require.NoError(t, err, rule)
		wholeMs(t, rule, "ScheduleSave record times", rec.NextFire, rec.UpdatedAt)
		lead, err := ss.LeaderAcquire(bg, &store.LeaderAcquireParams{Holder: "p1", TTL: time.Minute + 1})
		require.NoError(t, err, rule)
		require.True(t, lead.Acquired, rule)
		wholeMs(t, rule, "LeaderLease Until", lead.Lease.Until)
		rec, err = ss.ScheduleRecordFire(bg, &store.ScheduleRecordFireParams{Name: "s", LeaderEpoch: lead.Lease.Epoch, Version: rec.Version,
			NextFire: fine(2 * time.Minute), LastFire: fine(0), LastRunID: "r1"})
		require.NoError(t, err, rule)
		wholeMs(t, rule, "ScheduleRecordFire record times", rec.NextFire, rec.LastFire, rec.UpdatedAt)
		got, err := ss.ScheduleGet(bg, &store.ScheduleGetParams{Name: "s"})
		require.NoError(t, err, rule)
		wholeMs(t, rule, "ScheduleGet record times", got.NextFire, got.LastFire, got.UpdatedAt)
		due, err := ss.ScheduleList(bg, &store.ScheduleListParams{DueBy: fine(time.Hour), Limit: 10})
		require.NoError(t, err, rule)
		require.Len(t, due.Schedules, 1, rule)
		wholeMs(t, rule, "ScheduleList record times", due.Schedules[0].NextFire, due.Schedules[0].LastFire, due.Schedules[0].UpdatedAt)
	}
	if p, ok := h.Store.(store.Pinger); ok {
		res, err := p.StorePing(bg, &store.StorePingParams{})
		require.NoError(t, err, rule)
		wholeMs(t, rule, "StorePing Now", res.Now)
	}
}
