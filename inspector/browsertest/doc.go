// Package browsertest drives plait's web view (package inspector) in a
// real headless Chromium: the run page of a running workflow draws its DAG
// and follows its task states live, the other pages render without a
// script error, and the pages' actions act (a dead letter replayed, a
// queue paused and resumed, runs and tasks cancelled). It is a module of its own so the library does not depend
// on a browser driver.
//
//	go -C inspector/browsertest test ./...                       # skips without chromium
//	PLAIT_REQUIRE_BROWSER=1 go -C inspector/browsertest test ./... # fails without it
//	PLAIT_SCREENSHOT=$PWD/docs/inspector-run.png go -C inspector/browsertest test -run TestRunPageLive ./...
//	PLAIT_SCREENSHOT_DEAD_LETTERS=$PWD/docs/inspector-dead-letters.png go -C inspector/browsertest test -run TestDeadLetterReplay ./...
//
// The fleet pages' tests save theirs where PLAIT_SCREENSHOT_QUEUES,
// PLAIT_SCREENSHOT_NODES, PLAIT_SCREENSHOT_SCHEDULES,
// PLAIT_SCREENSHOT_EVENTS, PLAIT_SCREENSHOT_RUNS_DIALOG and
// PLAIT_SCREENSHOT_TASK_CONTROLS name a file.
package browsertest
