package redisstore

import (
	"errors"
	"fmt"
)

// Record formats.
//
// A run is one hash (see keys.go). Most of its fields are text that the
// Lua scripts read and write too: the run meta m, the task order o, the key
// k, and per task the state s:, the header line of the definition d:, the
// edge lists u: and c:, the result r:, the error e: and the attempt records
// a: (lua/lib_codec.lua spells them out; codec_run.go and codec_task.go are
// their Go mirror). Two parts only Go reads are a small binary format
// (codec_binary.go): the run info i, and the body of d: after its header
// line. Payloads and results are values with a flag byte (value.go).
//
// # Format version
//
// Field i opens with the format version of the whole hash. It is written
// once, at create, by the same script that writes every other field, and
// it governs them all: m, o, s:, d:, u:, c:, r:, e: and a: are read in the
// layout of that version. The body of d: repeats the version in its first
// byte, because a claim reads a definition without reading i. A reader
// decodes every version from minFormatVersion to formatVersion, upgrading
// an older one in memory, and refuses any other with a
// [*RecordVersionError] before it reads another field, so a run written by
// a newer plait is never decoded as garbage. So that the version can always
// be found, every version keeps two things in place: i starts with the
// version byte, and d: is one header line ending in '\n' followed by the
// version byte.
//
// Versions:
//
//	8  the current format: version 7, with the final attempt of a task
//	   that succeeded (with no error text) or failed (not by its Timeout)
//	   folded into its state rather than a record of its own
//	   (codec_fold.go), and the event of a run's move (events.go) its
//	   status letter and generation rather than its whole meta. A version 7
//	   run is read and worked on as it is, and keeps its layout. A plait of
//	   version 7 cannot work on a version 8 run: during a rolling upgrade
//	   the upgraded processes create version 7 runs (WithFormatVersion)
//	   until no process of version 7 is left.
//	7  version 6, with the run's generation, when
//	   above 0, right after the status letter of m, of the states s: of
//	   the tasks a replay reset, and after the outcome letter of their
//	   attempt records ("U2,..."; lua/lib_codec.lua), so that every event
//	   and record of a replayed run says its generation. A run never
//	   replayed is written as in version 6, and a version 6 run is read as
//	   it is (generation 0 everywhere). A version 6 run this code replays
//	   gets the generation in those fields, which a plait of version 6
//	   reads as corrupt: during a rolling upgrade, upgrade the processes
//	   that read records before replaying runs.
//	6  version 5, with field w:<task>, when the task
//	   last became ready to run or the due time it waits for (an offset,
//	   like every time in the hash), and attempt records whose header may
//	   end in ",delayMs,queuedOff": the queued time of the attempt. A
//	   version 5 run is read as it is (its records have no queued time).
//	   A version 5 run that this code goes on working on gets the new
//	   fields and records too, which a plait of version 5 reads as corrupt:
//	   during a rolling upgrade, upgrade the processes that read records
//	   (RunGet, history) before the last workers of version 5 stop.
//	5  version 4, whose attempt records may carry the
//	   outcome letter t (timed out: the task's Timeout ended the attempt,
//	   then retried or failed). The layout is unchanged, so a version 4
//	   run is read as it is; the new version keeps a plait of version 4,
//	   which knows no t, from reading such a record as corrupt.
//	   A replayed run has field g, its generation (absent: 0), written by
//	   run_replay.lua alone. It is a field of its own and changes no other
//	   field's layout, so it takes no version: a reader that does not know
//	   it reads a replayed run as it is, at generation 0.
//	4  version 3, with each attempt record in a field
//	   of its own, a:<task>:<epoch>, written once when the claim ends and
//	   never rewritten, and the retry delay chosen at the end of a retry
//	   record's header.
//	3  version 2, with the queue in the header of d: the routed queue of
//	   the task's capabilities (store.RoutedQueue), the one its entries go
//	   to; field g:<task> names the handler a task set aside waits for. Its
//	   attempt records, one after another in a:<task>, are read as they
//	   are (a script of version 4 never appends to that field).
//	2  edge lists u: and c: apart from the definition, the retry policy
//	   only when set, payloads and results with a flag byte. Read as
//	   version 3: its header names the task's plain queue, where its
//	   entries already are, so a task of it that requires capabilities is
//	   not routed.
//	1  the first format: children in the definition header, a layout the
//	   scripts of version 2 cannot work on, so it is refused.
//
// A change to any field's layout takes a new version, a decoder for the
// old one kept beside the new, and a golden file (testdata/run_v<N>.txt)
// holding a run hash as the new version writes it.
//
// # Units
//
// All durations and times the scripts read or write are in ms: times are
// Unix ms (the created time in m, runAtMs in the header of d:, the scores
// of the delayed and lease sets), and every other time in m, s: and a: is
// an offset in ms after the run's created time; attempt durations, delays,
// lease durations and retention are ms. The one exception is the Go-only
// body of d:, which keeps the spec's own durations (retry intervals, the
// timeout, the delay) in ns and its run-at time as Unix s and ns, so that a
// claimed task's spec is exactly the one submitted; the scripts never read
// it, and the header carries the delay and the due time in ms for them.

// Format versions of a run hash.
const (
	// formatVersion is the version this code writes, the newest it reads.
	formatVersion = 8
	// minFormatVersion is the oldest version this code reads.
	minFormatVersion = 2
)

// errCorrupt marks a record that cannot be decoded.
var errCorrupt = errors.New("redisstore: corrupt record")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errCorrupt}, args...)...)
}

// ErrRecordVersion is the category of [*RecordVersionError]: a stored
// record has a format version this plait cannot read.
var ErrRecordVersion = errors.New("redisstore: record of an unknown format version")

// RecordVersionError reports a stored record whose format version this
// plait does not read: one written by a newer plait (upgrade to read it),
// or one older than the oldest format still read. It matches
// [ErrRecordVersion] with errors.Is, and is a corrupt record to every path
// that skips those (a claim, a sweep): the record is left as it is, never
// misread or rewritten.
type RecordVersionError struct {
	// Record names the record: "run info" (field i, which governs the
	// whole run hash) or "task definition" (field d:<task>).
	Record string
	// Version is the version found.
	Version int
	// Min and Max are the oldest and the newest versions this plait reads.
	Min, Max int
}

// Error says which way the version is off and what to do about it.
func (e *RecordVersionError) Error() string {
	if e.Version > e.Max {
		return fmt.Sprintf("redisstore: %s record has format version %d, newer than %d, the newest this plait reads: "+
			"it was written by a newer plait; upgrade plait to read it", e.Record, e.Version, e.Max)
	}
	return fmt.Sprintf("redisstore: %s record has format version %d, older than %d, the oldest this plait reads",
		e.Record, e.Version, e.Min)
}

// Is matches [ErrRecordVersion] and the package's corrupt-record category.
func (e *RecordVersionError) Is(target error) bool {
	return target == ErrRecordVersion || target == errCorrupt
}

// checkVersion returns v when this code reads it, else a
// [*RecordVersionError] for record.
func checkVersion(record string, v byte) (int, error) {
	if int(v) < minFormatVersion || int(v) > formatVersion {
		return 0, &RecordVersionError{Record: record, Version: int(v), Min: minFormatVersion, Max: formatVersion}
	}
	return int(v), nil
}
