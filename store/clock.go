package store

import "github.com/plaitdag/plait/internal/clock"

// Clock is the source of time a store reads when it is not the backend's
// own: a memory store's now, and the now a Redis store passes to its
// scripts in tests. [github.com/plaitdag/plait/fakeclock] implements it.
type Clock = clock.Clock

// Timer is a timer made by a [Clock].
type Timer = clock.Timer
