// Package storetest is the conformance suite of [store.Store]: the
// executable form of the contract in docs/store-contract.md. plait's own
// stores (memstore, redisstore) run it, and so should any third-party Store.
//
// # Using it for your own Store
//
// In a _test.go file of your store package, call [Run] with a function that
// builds a fresh, isolated [Harness] for each case:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) *storetest.Harness {
//			clk := fakeclock.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
//			s := mystore.New(mystore.WithClock(clk))
//			t.Cleanup(func() { s.Close() })
//			return &storetest.Harness{Store: s, Now: clk.Now, Advance: clk.Advance}
//		})
//	}
//
// Every case runs in parallel with its own harness, so the factory must not
// share state between harnesses (use a fresh server, or a unique key prefix
// on a shared one). The store must read its time from the harness clock:
// Now returns exactly the time the store believes, and Advance moves it
// (and, for a store with native expiry, its TTLs too). A store keeps whole
// milliseconds only, as the contract says: the cases of the Time group move
// the clock off the millisecond grid and require every time answered to be
// a whole millisecond in UTC; the other cases advance it in whole
// milliseconds and compare times at millisecond precision.
//
// Build the store with a clock you drive: the public package
// github.com/plaitdag/plait/fakeclock is one, and the snippet above uses it.
//
// Each case carries one rule, worded like "a stale epoch must not complete a
// task"; a failing case reports its rule.
//
// # Capabilities
//
// [store.Store] is the core every store implements, and [Run] always runs
// its suite. Each optional capability of plait (such as [store.Pinger]) has
// a suite of its own, which Run adds when the store under test implements
// that capability, so a store is tested on exactly what it claims. Run asks
// one extra harness which capabilities the store has.
package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
)

// Harness is one store under test with its clock.
type Harness struct {
	// Store is the store under test, empty and used by one case only.
	Store store.Store
	// Now returns the store's current time.
	Now func() time.Time
	// Advance moves the store's clock, and any native expiry, forward by d.
	Advance func(d time.Duration)
	// Caps lists optional capabilities of the store.
	Caps Caps
	// Leftovers, when set, lists what the store still holds of run runID,
	// one short description per item: every record of the run and every
	// entry of a structure shared with other runs (an index, a queue, the
	// lease table, a dead-letter list, an expiry list) that names it; nil
	// or empty when nothing is left. Shared structures a store keeps by
	// other bounds than the run's retention are left out: the store's
	// event stream (its cap), the memory of a claim sent with a RequestID
	// (the claim's lease), and an index entry the store shares between the
	// runs of one call (kept while one of them is). The cases of the
	// Leftovers group skip without it. It is a test hook: it may scan
	// the whole store.
	Leftovers func(runID string) []string
}

// Caps are capability facts about a store. A case that needs a capability
// the harness lacks is skipped with the capability's name.
type Caps struct {
	// ExpiresKeys reports that the store drops records by itself after
	// their retention (native TTLs that Advance moves).
	ExpiresKeys bool
	// Retention is the retention the store was built with: how long a
	// finished run stays readable. Cases about retention need ExpiresKeys
	// and a positive Retention.
	Retention time.Duration
	// HistoryRetention is how long the store keeps a finished run's
	// attempt records, as it was built, when longer than Retention; the
	// case about history outliving its run needs ExpiresKeys and a
	// HistoryRetention above Retention.
	HistoryRetention time.Duration
	// MaxResultBytes is the largest result the store keeps, as it was
	// built; the case about larger results needs it.
	MaxResultBytes int
	// EventCap is the event cap the store was built with, as a count of
	// events a run's stream is sure to drop past (a store that caps in
	// entries of several events gives the entries); the case about a
	// reader behind the cap needs it, and works best with a small one (at
	// most a few hundred).
	EventCap int
	// TaskLogLines and TaskLogBytes are the store's cap on one task's log
	// lines, as it was built (see [store.TaskLogStore]); the case about
	// the cap needs both.
	TaskLogLines int
	TaskLogBytes int
}

// Run runs every conformance case as a parallel subtest of t. newHarness is
// called once per case and must return a fresh, isolated harness.
func Run(t *testing.T, newHarness func(t *testing.T) *Harness) {
	t.Helper()
	core := []group{
		{"Runs", testRuns},
		{"CreateMany", testCreateMany},
		{"Claim", testClaim},
		{"ClaimInfo", testClaimInfo},
		{"Complete", testComplete},
		{"FinishClaim", testFinishClaim},
		{"Conditions", testConditions},
		{"Sweep", testSweep},
		{"Cancel", testCancel},
		{"Wait", testWait},
		{"Statuses", testStatuses},
		{"Requests", testRequests},
		{"ResultLimit", testResultLimit},
		{"Retention", testRetention},
		{"Leftovers", testLeftovers},
		{"Concurrency", testConcurrency},
		{"Context", testContext},
		{"Time", testTime},
	}
	for _, g := range core {
		t.Run(g.name, func(t *testing.T) { g.fn(t, newHarness) })
	}
	probe := newHarness(t).Store
	for _, c := range capabilities() {
		if !c.has(probe) {
			continue
		}
		t.Run(c.name, func(t *testing.T) { c.fn(t, newHarness) })
	}
}

// group is one area of the contract.
type group struct {
	name string
	fn   func(t *testing.T, newHarness func(t *testing.T) *Harness)
}

// suite is the conformance suite of one optional capability; has reports
// whether a store implements it.
type suite struct {
	group
	has func(store.Store) bool
}

// Capabilities returns the names of the optional capabilities store
// implements, each with a suite of its own in [Run].
func Capabilities(store store.Store) []string {
	var names []string
	for _, c := range capabilities() {
		if c.has(store) {
			names = append(names, c.name)
		}
	}
	return names
}

// capabilities lists every capability suite, one per optional interface
// of plait.
func capabilities() []suite {
	return []suite{
		{group{"ClaimRouter", testClaimRouter}, func(s store.Store) bool { _, ok := s.(store.ClaimRouter); return ok }},
		{group{"FairClaimer", testFairClaimer}, func(s store.Store) bool { _, ok := s.(store.FairClaimer); return ok }},
		{group{"Limiter", testLimiter}, func(s store.Store) bool { _, ok := s.(store.Limiter); return ok }},
		{group{"Pinger", testPinger}, func(s store.Store) bool { _, ok := s.(store.Pinger); return ok }},
		{group{"QueueDepther", testQueueDepther}, func(s store.Store) bool { _, ok := s.(store.QueueDepther); return ok }},
		{group{"QueueLister", testQueueLister}, func(s store.Store) bool { _, ok := s.(store.QueueLister); return ok }},
		{group{"TaskSearchStore", testTaskSearch}, func(s store.Store) bool { _, ok := s.(store.TaskSearchStore); return ok }},
		{group{"EventStore", testEvents}, func(s store.Store) bool { _, ok := s.(store.EventStore); return ok }},
		{group{"StatsStore", testStats}, func(s store.Store) bool { _, ok := s.(store.StatsStore); return ok }},
		{group{"StatsSeriesStore", testStatsSeries}, func(s store.Store) bool { _, ok := s.(store.StatsSeriesStore); return ok }},
		{group{"ScheduleStore", testSchedules}, func(s store.Store) bool { _, ok := s.(store.ScheduleStore); return ok }},
		{group{"NodeStore", testNodes}, func(s store.Store) bool { _, ok := s.(store.NodeStore); return ok }},
		{group{"QueryStore", testQueries}, func(s store.Store) bool { _, ok := s.(store.QueryStore); return ok }},
		{group{"HistoryStore", testHistory}, func(s store.Store) bool { _, ok := s.(store.HistoryStore); return ok }},
		{group{"TaskLogStore", testTaskLogs}, func(s store.Store) bool { _, ok := s.(store.TaskLogStore); return ok }},
		{group{"ProgressStore", testProgress}, func(s store.Store) bool { _, ok := s.(store.ProgressStore); return ok }},
		{group{"DeadLetterStore", testDeadLetters}, func(s store.Store) bool { _, ok := s.(store.DeadLetterStore); return ok }},
		{group{"DeadLetterGroupStore", testDeadLetterGroups}, func(s store.Store) bool { _, ok := s.(store.DeadLetterGroupStore); return ok }},
		{group{"ReplayStore", testReplays}, func(s store.Store) bool { _, ok := s.(store.ReplayStore); return ok }},
		{group{"ResultStore", testResults}, func(s store.Store) bool { _, ok := s.(store.ResultStore); return ok }},
		{group{"PayloadStore", testPayloads}, func(s store.Store) bool { _, ok := s.(store.PayloadStore); return ok }},
		{group{"RunSpecStore", testRunSpecs}, func(s store.Store) bool { _, ok := s.(store.RunSpecStore); return ok }},
		{group{"TaskControlStore", testTaskControls}, func(s store.Store) bool { _, ok := s.(store.TaskControlStore); return ok }},
		{group{"RunNoteStore", testRunNotes}, func(s store.Store) bool { _, ok := s.(store.RunNoteStore); return ok }},
		{group{"RunDeleteManyStore", testRunDeleteMany}, func(s store.Store) bool { _, ok := s.(store.RunDeleteManyStore); return ok }},
		{group{"AdmissionStore", testAdmission}, func(s store.Store) bool { _, ok := s.(store.AdmissionStore); return ok }},
	}
}

// testCase is one rule of the contract and the check that pins it.
type testCase struct {
	name string
	// rule is the sentence the case pins; it is the failure message.
	rule string
	run  func(t *testing.T, h *Harness, rule string)
}

// runCases runs each case in parallel on its own harness.
func runCases(t *testing.T, newHarness func(t *testing.T) *Harness, cases []testCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			c.run(t, h, c.rule)
		})
	}
}
