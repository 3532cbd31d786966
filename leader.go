package plait

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/plaitdag/plait/internal/maintenance"
	"github.com/plaitdag/plait/internal/worker"
	"github.com/plaitdag/plait/store"
)

// The schedule leader. Every process running Run competes for the store's
// one leader lease; the holder fires due schedules. Exactly-once does not
// rest on the lease: each instant's run is created under a key of its own,
// so two leaders at once (a paused process that has not noticed its lease
// expired) create one run between them. The lease keeps the work in one
// process, and its epoch fences ScheduleRecordFire, so a deposed leader
// cannot move a schedule's next instant backwards.

// ScheduleFireReport is the answer of [Scheduler.ScheduleFireDue].
type ScheduleFireReport struct {
	// Leader reports that this process held the leader lease for the pass.
	Leader bool
	// Fired counts the instants fired, Skipped those skipped by policy.
	Fired   int
	Skipped int
	// NextDue is the earliest next instant the pass knows of, zero when it
	// knows none within a tick.
	NextDue time.Time
}

// leaderFor answers this process's side of the schedule leader lease,
// made at the first need.
func (s *Scheduler) leaderFor(ss store.ScheduleStore) *maintenance.Leader {
	s.sched.mu.Lock()
	defer s.sched.mu.Unlock()
	if s.sched.lead == nil {
		var b [4]byte
		_, _ = rand.Read(b[:])
		holder := s.cfg.workerID + "." + hex.EncodeToString(b[:])
		s.sched.lead = maintenance.NewLeader(maintenance.Config{
			Store: ss, Holder: holder, Clock: s.cfg.clock, Logger: s.cfg.logger,
			TTL: s.cfg.sched.leaseOrDefault(), Tick: s.cfg.sched.tickOrDefault(),
			Changed: func(acquired bool, epoch int64) {
				e := Event{Type: EventLeaderLost, Epoch: epoch, Node: holder}
				if acquired {
					e.Type = EventLeaderAcquired
				} else {
					s.queueDepthStop()
				}
				s.emit(e)
			},
		})
	}
	return s.sched.lead
}

// ScheduleFireDue makes one pass of the schedule leader: it takes or
// renews the leader lease and, holding it, fires every schedule due now
// under its policies. Run does this by itself; a host that runs no Run
// loop (a cron job, a test on a fake clock) calls it instead. A process
// that does not get the lease fires nothing and reports Leader false.
func (s *Scheduler) ScheduleFireDue(ctx context.Context) (*ScheduleFireReport, error) {
	ss, err := s.scheduleStore()
	if err != nil {
		return nil, err
	}
	return s.schedulePass(ctx, s.leaderFor(ss))
}

// scheduleLeaderRelease gives the leader lease up when this process holds
// it, so another process takes over at once instead of after the lease.
// Run does this when it stops.
func (s *Scheduler) scheduleLeaderRelease(ctx context.Context) error {
	ss, err := s.scheduleStore()
	if err != nil {
		return err
	}
	return s.leaderFor(ss).Release(ctx)
}

// startScheduleLeader runs the leader loop beside Run's workers until ctx
// is done, when the store keeps schedules and leading is not switched off.
func (s *Scheduler) startScheduleLeader(ctx context.Context) *maintenance.Running {
	ss, err := s.scheduleStore()
	if err != nil || s.cfg.sched.off {
		return nil
	}
	lead := s.leaderFor(ss)
	return lead.Start(ctx, worker.ShutdownWriteWindow, func(ctx context.Context) (time.Time, error) {
		rep, err := s.schedulePass(ctx, lead)
		if rep == nil {
			s.leading.Store(false)
			return time.Time{}, err
		}
		s.leading.Store(rep.Leader)
		if rep.Leader {
			s.queueDepthPass(ctx, lead)
		}
		return rep.NextDue, err
	})
}

// passLimit bounds the schedules one pass fires; the rest wait for the
// next pass, which comes at once.
const passLimit = 256

// schedulePass is one pass of the schedule leader: holding the lease, it
// fires every schedule due now under its policies.
func (s *Scheduler) schedulePass(ctx context.Context, lead *maintenance.Leader) (*ScheduleFireReport, error) {
	rep := &ScheduleFireReport{}
	leading, err := lead.Act(ctx, func(ctx context.Context, term maintenance.Term) error {
		return s.fireDue(ctx, term, rep)
	})
	rep.Leader = leading
	return rep, err
}

// fireDue fires the due schedules under the lease term holds.
func (s *Scheduler) fireDue(ctx context.Context, term maintenance.Term, rep *ScheduleFireReport) error {
	now := s.cfg.clock.Now()
	res, err := s.leaderStore().ScheduleList(ctx, &store.ScheduleListParams{DueBy: now, Limit: passLimit})
	if err != nil {
		return err
	}
	// Each due schedule is planned (its policies applied, previous runs
	// cancelled where the overlap policy says so), then every instant of
	// the pass is created in one batch, so a second's worth of schedules
	// becomes claimable in as few store calls as the store allows, and
	// only then is each schedule's state recorded.
	var errs []error
	var plans []*firePlan
	var params []*store.RunCreateParams
	for _, rec := range res.Schedules {
		if !term.Valid() {
			break
		}
		p, err := s.planFire(ctx, rec, now, rep)
		if err != nil {
			errs = append(errs, err)
		}
		if p == nil {
			continue
		}
		p.first = len(params)
		params = append(params, p.params...)
		plans = append(plans, p)
	}
	var out []store.RunCreateOutcome
	if len(params) > 0 && term.Valid() {
		out, err = s.createRuns(ctx, params)
		if err != nil {
			// Nothing is recorded: every instant stays due and the next
			// pass tries again, where the run keys answer any run this
			// call created.
			return errors.Join(append(errs, err)...)
		}
	}
	for _, p := range plans {
		if err := s.recordFire(ctx, term, p, out, rep); err != nil {
			if errors.Is(err, ErrStaleEpoch) {
				term.Lost()
				return errors.Join(errs...)
			}
			errs = append(errs, err)
		}
	}
	if res.More {
		rep.NextDue = now
		return errors.Join(errs...)
	}
	ahead, err := s.leaderStore().ScheduleList(ctx, &store.ScheduleListParams{DueBy: now.Add(s.cfg.sched.tickOrDefault()), Limit: 1})
	if err == nil && len(ahead.Schedules) > 0 {
		rep.NextDue = ahead.Schedules[0].NextFire
		if !rep.NextDue.After(now) {
			// Still due: held by jitter, overlap or a missing workflow;
			// the tick comes back to it.
			rep.NextDue = time.Time{}
		}
	}
	return errors.Join(errs...)
}

// jitterOf is the delay of one instant: drawn from the name and the
// instant, so every leader computes the same.
func jitterOf(name string, instant time.Time, jitter time.Duration) time.Duration {
	if jitter <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(name + "@" + strconv.FormatInt(instant.UnixMilli(), 10)))
	return time.Duration(h.Sum64() % uint64(jitter))
}

// firePlan is what one pass does with one due schedule.
type firePlan struct {
	rec *store.ScheduleRecord
	// due are the instants due, instants those of them to fire, and
	// params their creates, which start at first in the pass's batch.
	due      []time.Time
	instants []time.Time
	params   []*store.RunCreateParams
	first    int
	// next is the schedule's next instant once the pass is done.
	next time.Time
	// held reports that an instant could not be built and stays due, so
	// the instants not fired are not skipped.
	held bool
}

// planFire applies a due schedule's policies at now. It answers nil when the
// schedule is to be left as it is (paused, held by jitter or by the buffer
// policy, or without a workflow in this process).
func (s *Scheduler) planFire(ctx context.Context, rec *store.ScheduleRecord, now time.Time, rep *ScheduleFireReport) (*firePlan, error) {
	var d scheduleDef
	if err := json.Unmarshal(rec.Definition, &d); err != nil {
		s.cfg.logger.Error("plait: schedule has an unreadable definition", "schedule", rec.Name, "err", err)
		return nil, nil
	}
	if d.Paused || rec.NextFire.IsZero() {
		return nil, nil
	}
	spec, err := s.parseDef(rec.Name, &d, now)
	if err != nil {
		// Valid when saved and refused now: a cron spec with no instant
		// left. It has nothing more to fire.
		return &firePlan{rec: rec}, nil
	}
	at := func(t time.Time) time.Time { return t.Add(jitterOf(rec.Name, t, d.Jitter)) }
	p := &firePlan{rec: rec, next: rec.NextFire}
	for len(p.due) < catchUpScanMax && !p.next.IsZero() && !at(p.next).After(now) {
		p.due = append(p.due, p.next)
		p.next = spec.Next(p.next)
	}
	if len(p.due) == 0 {
		return nil, nil
	}
	if len(p.due) == catchUpScanMax {
		p.next = spec.Next(now)
	}
	window := d.Window
	if window == 0 {
		window = CatchUpWindowDefault
	}
	late := func(t time.Time) bool { return now.Sub(at(t)) > window }
	last := p.due[len(p.due)-1]
	switch d.CatchUp {
	case CatchUpEach:
		for _, t := range p.due {
			if !late(t) {
				p.instants = append(p.instants, t)
			}
		}
	case CatchUpOnce:
		p.instants = []time.Time{last}
	default:
		if !late(last) {
			p.instants = []time.Time{last}
		}
	}
	if d.Overlap != OverlapAllow && rec.LastRunID != "" {
		prev, err := s.store.RunGet(ctx, &store.RunGetParams{ID: rec.LastRunID})
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		busy := err == nil && !prev.Status.Terminal()
		switch {
		case busy && d.Overlap == OverlapSkip:
			p.instants = nil
		case busy && d.Overlap == OverlapBuffer:
			// Held: the schedule stays due, and the pass after the
			// previous run ends fires it.
			return nil, nil
		case busy && d.Overlap == OverlapCancel && len(p.instants) > 0:
			if _, err := s.RunCancel(ctx, rec.LastRunID); err != nil && !errors.Is(err, ErrNotFound) {
				return nil, err
			}
		case !busy && d.Overlap == OverlapBuffer && len(p.instants) == 0 && err == nil && prev.EndedAt.After(p.due[0]):
			// The instant was held for the previous run: it fires now
			// however late, standing for those passed while waiting.
			p.instants = []time.Time{last}
		}
	}
	for i, t := range p.instants {
		params, err := s.runParams(rec.Name, &d, t, "")
		if err != nil {
			if errors.Is(err, ErrNoWorkflow) {
				s.cfg.logger.Warn("plait: schedule not fired here: this process has no Build for it", "schedule", rec.Name)
				return nil, nil
			}
			// The instant stays due, and the next pass tries it again.
			p.instants, p.next, p.held = p.instants[:i], t, true
			return p, err
		}
		p.params = append(p.params, params)
	}
	return p, nil
}

// recordFire writes what the pass did with one schedule, given the outcomes of
// the pass's batch.
func (s *Scheduler) recordFire(ctx context.Context, term maintenance.Term, p *firePlan, out []store.RunCreateOutcome, rep *ScheduleFireReport) error {
	rec := p.rec
	params := &store.ScheduleRecordFireParams{Name: rec.Name, LeaderEpoch: term.Epoch(), Version: rec.Version, NextFire: p.next}
	var failed error
	fired := 0
	for i, t := range p.instants {
		o := out[p.first+i]
		if o.Err != nil {
			// This instant and those after it stay due.
			params.NextFire = t
			failed = fmt.Errorf("plait: schedule %s: firing %v: %w", quote(rec.Name), t, o.Err)
			break
		}
		fired++
		params.LastFire, params.LastRunID = t, o.Result.Run.ID
		rep.Fired++
		s.emit(Event{Type: EventScheduleFired, Schedule: rec.Name, Instant: t, RunID: o.Result.Run.ID, RunStatus: o.Result.Run.Status})
	}
	if skipped := len(p.due) - len(p.instants); skipped > 0 && failed == nil && !p.held {
		rep.Skipped += skipped
		s.emit(Event{Type: EventScheduleSkipped, Schedule: rec.Name, Instant: p.due[len(p.due)-1], Count: skipped})
	}
	if _, err := s.leaderStore().ScheduleRecordFire(ctx, params); err != nil {
		return err
	}
	return failed
}

// leaderStore is the store's ScheduleStore, which a pass runs only with.
func (s *Scheduler) leaderStore() store.ScheduleStore {
	ss, _ := s.scheduleStore()
	return ss
}
