// Package store is the contract between plait's Scheduler and a storage
// backend, as database/sql/driver is to database/sql: the [Store]
// interface, the optional capabilities a backend may add beside it, their
// parameter and result types, the records they answer ([Run],
// [TaskInstance], [Attempt]…), the workflow as data ([WorkflowSpec]), the
// status transition table ([TaskStatus.Next], [RunStatus.Next]) and the
// sentinels every backend returns ([ErrNotFound], [ErrStaleEpoch]…).
//
// plait ships two backends, store/memstore and store/redisstore, and one
// conformance suite, store/storetest, that a third backend should pass too.
// Package store imports no other plait package; the root package plait
// re-exports the records and sentinels its users handle.
//
// # Capabilities
//
// [Store] holds the execution core: create, get, cancel and wait for runs;
// claim, finish and extend tasks; sweep lost leases; wait for ready work.
// Everything else is an optional interface, one file each, that the
// Scheduler discovers by type assertion and answers [ErrUnsupported] for
// when a backend lacks it:
//
//   - [Pinger] (pinger.go): a health check with the server's round trip.
//   - [QueryStore] (query_store.go): runs listed by filter, got by id,
//     counted and deleted; the tasks of a run.
//   - [ResultStore] (result_store.go): the results of named tasks of a run.
//   - [PayloadStore] (payload_store.go): the payloads of named tasks of a run.
//   - [RunSpecStore] (run_spec_store.go): a run's definition as submitted,
//     with its payloads and results on request.
//   - [HistoryStore] (history_store.go): the attempt records of a run.
//   - [TaskLogStore] (task_log_store.go): the lines a handler logged.
//   - [ProgressStore] (progress_store.go): the progress a running attempt
//     reports, kept with the task and its attempt.
//   - [DeadLetterStore] (dead_letter_store.go): dead tasks listed and purged.
//   - [DeadLetterGroupStore] (dead_letter_group_store.go): dead tasks
//     grouped by error.
//   - [ReplayStore] (replay_store.go): a finished run's tasks run again as a
//     new generation.
//   - [TaskControlStore] (task_control_store.go): one task run now,
//     skipped or cancelled by an operator.
//   - [RunNoteStore] (run_note_store.go): a note in a run's history.
//   - [RunDeleteManyStore] (run_delete_many_store.go): finished runs
//     deleted in bulk, one answer per id.
//   - [EventStore] (event_store.go): the capped event streams, read from a
//     cursor, from the end or from a time, each event with its run's
//     generation.
//   - [StatsStore] (stats_store.go): counters per queue and workflow, and
//     recent durations.
//   - [StatsSeriesStore] (stats_series_store.go): tasks and runs that ended,
//     per minute.
//   - [ScheduleStore] (schedule_store.go): schedules and the one leader
//     lease that fires them.
//   - [NodeStore] (node_store.go): processes, their heartbeats and drains,
//     and paused queues.
//   - [QueueDepther] (queue_depther.go): ready and delayed tasks per queue.
//   - [QueueLister] (queue_lister.go): every queue that had tasks, with its
//     depth per priority, delayed, set-aside and running tasks, the age of
//     its oldest ready task and whether it is paused.
//   - [TaskSearchStore] (task_search_store.go): tasks across runs by
//     status, queue, handler, node, tenant and service; running ones with
//     their lease deadline.
//   - [ClaimRouter] (claim_router.go): tasks routed to the processes with
//     the capabilities they require.
//   - [FairClaimer] (fair_claimer.go): claims that share out priorities by
//     weight.
//   - [Limiter] (limiter.go): concurrency and rate limits per key, kept
//     across every process.
//   - [AdmissionStore] (admission_store.go): caps on the pending tasks of
//     a queue or a tenant, checked by every create.
package store
