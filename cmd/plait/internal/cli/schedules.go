package cli

import (
	"flag"
	"io"
	"sort"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/action"
	"github.com/plaitdag/plait/internal/apijson"
)

func scheduleCommands() []command {
	return []command{
		{path: "schedules ls", short: "list schedules: spec, next and last fire, paused", flags: schedulesList},
		{path: "schedules pause", args: "SCHEDULE...", short: "stop schedules firing", flags: scheduleEdit(action.SchedulePause)},
		{path: "schedules resume", args: "SCHEDULE...", short: "let schedules fire again", flags: scheduleEdit(action.ScheduleResume)},
		{path: "schedules trigger", args: "SCHEDULE...", short: "fire schedules once now", flags: namedAction(action.ScheduleTrigger, "schedule names")},
		{path: "schedules backfill", args: "SCHEDULE...", short: "fire schedules at each instant of -from to -to they missed", flags: schedulesBackfill},
	}
}

func schedulesList(fs *flag.FlagSet) func(*env, []string) error {
	return listed(func(e *env, s *plait.Scheduler) error {
		list, err := s.ScheduleList(e.ctx)
		if err != nil {
			return err
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
		out := make([]apijson.Schedule, 0, len(list))
		for _, sc := range list {
			out = append(out, apijson.ScheduleOf(sc))
		}
		return e.emit(page[apijson.Schedule]{Items: out}, func(w io.Writer) {
			row(w, "SCHEDULE", "SPEC", "PAUSED", "NEXT", "LAST", "LAST RUN", "STATUS")
			for _, sc := range list {
				row(w, sc.Name, sc.Spec, yesNo(sc.Paused), when(sc.NextFire), when(sc.LastFire), sc.LastRunID, sc.LastRunStatus)
			}
		})
	})
}

func schedulesBackfill(fs *flag.FlagSet) func(*env, []string) error {
	from := fs.String("from", "", "the first instant: RFC 3339, a date or an age (24h)")
	to := fs.String("to", "", "the end of the range, included (same forms; default now)")
	opts := actionFlags(fs)
	return func(e *env, args []string) error {
		if len(args) == 0 {
			return usagef("want one or more schedule names")
		}
		now := time.Now()
		t := action.Target{IDs: args}
		var err error
		if t.From, err = parseWhen(*from, now); err != nil || t.From.IsZero() {
			return usagef("-from: want a time (RFC 3339, a date or an age)")
		}
		if t.To, err = parseWhen(*to, now); err != nil {
			return usagef("-to: %v", err)
		}
		if t.To.IsZero() {
			t.To = now
		}
		return e.act(action.ScheduleBackfill, t, opts)
	}
}

// scheduleNote is what a pause or a resume is worth: the code that saves a
// schedule decides its state when it starts.
const scheduleNote = "note: a process that saves a schedule at start-up (ScheduleSave) overwrites a pause or a resume made here when it starts again"

// scheduleEdit is schedules pause or resume: the action, then the note on
// stderr, where a script reading stdout does not meet it.
func scheduleEdit(a action.Action) func(*flag.FlagSet) func(*env, []string) error {
	return func(fs *flag.FlagSet) func(*env, []string) error {
		run := namedAction(a, "schedule names")(fs)
		return func(e *env, args []string) error {
			err := run(e, args)
			if err == nil {
				io.WriteString(e.stderr, scheduleNote+"\n")
			}
			return err
		}
	}
}
