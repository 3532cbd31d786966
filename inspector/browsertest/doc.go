// Package browsertest drives plait's web view (package inspector) in a
// real headless Chromium: the run page of a running workflow draws its DAG
// and follows its task states live, and the other pages render without a
// script error. It is a module of its own so the library does not depend
// on a browser driver.
//
//	go -C inspector/browsertest test ./...                       # skips without chromium
//	PLAIT_REQUIRE_BROWSER=1 go -C inspector/browsertest test ./... # fails without it
//	PLAIT_SCREENSHOT=$PWD/docs/inspector-run.png go -C inspector/browsertest test -run TestRunPageLive ./...
package browsertest
