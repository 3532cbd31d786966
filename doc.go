// Package plait runs DAG workflows of Go handler functions, embedded in a
// service on an in-memory store or across many worker processes that share
// Redis.
//
// This documentation reads as a user's manual first: the sections below
// walk from concepts to testing. The index further down is alphabetical, so
// it mixes the few names a service uses with the many that only someone
// writing a [Store] needs; the last section, "For store authors", lists the
// latter so the rest of the index can be read as the user's API.
//
// # Concepts
//
// A [Workflow] is a named DAG of tasks. Each task names a handler
// registered with [Scheduler.Handle], carries a payload, and may depend on
// other tasks with a condition ([After], [AfterCompletion],
// [AfterFailure]) and a join ([AnyOf]). Task options set retries ([Retry]:
// n retries, n+1 attempts in all), backoff, a timeout, a priority, a queue,
// and a delay or run-at time. A workflow's [ErrorStrategy] says what a
// failure does to the rest of the run: [StrategyContinue] (the default),
// [StrategyStop] (fail fast) or [StrategySkip] (a failed task counts as
// skipped for its dependents, so even an AfterFailure dependent does not
// run, and the run completes).
//
// Submitting a workflow validates it and creates a [Run]; the scheduler's
// workers claim ready tasks, run their handlers and release children as
// parents finish. Definitions are data stored with the run, so any worker
// process can run any run. A handler sees its task as a [*Task] and reads
// its payload and its parents' results as Go values ([Typed],
// [ParentValue]); a finished run's results are read with [ResultValue].
// Handlers can be wrapped in [Middleware]; [Task.Run] tells a handler about
// its run.
//
// A schedule ([Scheduler.ScheduleSave]) submits a workflow at the instants
// of a cron spec, an interval or a one-time instant, in a time zone. Every
// process that calls [Scheduler.Run] can lead the schedules, one at a time,
// and each instant fires exactly once across processes.
//
// # Quickstart
//
//	st, err := memstore.New()
//	if err != nil {
//		return err
//	}
//	s, err := plait.New(st)
//	if err != nil {
//		return err
//	}
//	err = s.Handle("hello", func(ctx context.Context, t *plait.Task) (any, error) {
//		return "hi", nil
//	})
//	if err != nil {
//		return err
//	}
//	run, err := s.Submit(ctx, plait.NewWorkflow("greet").Task("a", "hello", nil))
//	if err != nil {
//		return err
//	}
//	go s.Run(ctx) // until ctx is done
//	final, err := s.RunWait(ctx, run.ID)
//	if err != nil {
//		return err
//	}
//	fmt.Println(final.Status) // completed
//
// [New] checks every [Option] it is given and reports each value out of
// range as an [*OptionError]; an option not given takes its default.
//
// # Stores
//
// store/memstore keeps everything in process; store/redisstore shares state
// through Redis or Redis Cluster. Both pass the conformance suite in
// store/storetest, so a workflow tested in memory runs the same on Redis.
// Both keep a finished run readable for 24 hours by default, then free it.
// A store may offer optional capabilities beyond [Store], such as [Pinger]
// behind [Scheduler.Ping]; a Scheduler method that needs one the store
// lacks answers [ErrUnsupported].
//
// # Guarantees
//
// Handlers run at least once; state transitions happen exactly once: each
// attempt finishes once, each child is released once, each run completes
// once. Every claim carries a lease with a fencing epoch; a worker whose
// lease was lost cannot change anything, and its handler's context is
// cancelled with [ErrLeaseLost]. A crashed worker's tasks run again within
// the lease duration plus the sweep interval, without using up retries.
// When [Scheduler.Run] stops, handlers get the shutdown timeout to finish;
// those still running are cancelled with [ErrShutdown], and their tasks go
// back to ready with an attempt record that says so.
//
// # Testing your handlers
//
// Run the workflow under test on store/memstore and drive time by hand with
// package github.com/plaitdag/plait/fakeclock: pass the same clock to
// [WithClock] and to memstore.WithClock, then move it with Advance or Set,
// so retries, delays, timeouts and leases need no sleeping. [WithObserver]
// reports every event in order, so a test waits for the event it expects
// instead of polling. A handler that reads only its payload can also be
// called directly with a [Task] built by hand.
//
// # For store authors
//
// A service never needs it: the contract between the [Scheduler] and a
// storage backend is package github.com/plaitdag/plait/store (the Store
// interface, its optional capabilities, their parameters and results, the
// transition table and the sentinels), and store/storetest is its
// executable form. This package re-exports from it only the records and
// sentinels a user handles, such as [Run], [TaskInstance] and
// [ErrNotFound].
package plait
