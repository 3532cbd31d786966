package redisstore

import (
	"strconv"
	"strings"
)

// Payload pieces (format version 8). A payload that would make its
// definition d:<task> longer than a listpack value (maxListpackValue) is
// kept in the run hash itself, cut into fields p:<task>:1 .. p:<task>:n of
// at most maxListpackValue bytes each, and the header of d: ends in n, the
// count, where version 7 ends in 1 and keeps the payload in a key of its
// own, p:<run>:<task>. A key costs Redis about 80 B of its own (object,
// dict entry, name) besides the payload, a piece about 9 B (its name and
// two listpack entry headers), and a larger listpack is allocated in
// coarser size classes: measured on a pending one-task run, pieces save
// about 45 B at 100 B of payload and 60 B at 400 B, cost as much at 500 B
// and 260 B more at 1000 B. So a payload of more than maxPieces pieces
// (512 B), or one that would take the run's fields at create past
// pieceFieldsMax, is kept in its own key as in version 7 (runs of at most
// apartMaxTasks tasks) or else in d:, as in version 7. A claim reads the pieces with one HMGET more and
// joins them; task_to deletes them when the task succeeds, as it deletes a
// payload key; every other path finds them in the hash, which they share
// the life of (retention, deletion).

const (
	// maxPieces is the largest count of pieces one payload is cut into:
	// 512 B of payload at 64 B a piece, past which a key of its own costs
	// less (see above).
	maxPieces = 8
	// pieceFieldsMax bounds the fields a run hash holds at create, pieces
	// included: 32 of a listpack's 128 entries are left for the fields the
	// run's life adds (results, errors, attempt records, notes).
	pieceFieldsMax = 96
)

// splitPayload cuts payload into the pieces a version 8 definition keeps it
// in: the fewest pieces of at most maxListpackValue bytes, of about even
// length, and never fewer than 2 (a count of 1 would read as a payload key). It
// answers nil when the version keeps no pieces, or when more than room
// pieces or maxPieces would be needed.
func splitPayload(payload string, room int, version byte) []string {
	if version < 8 {
		return nil
	}
	n := max(2, (len(payload)+maxListpackValue-1)/maxListpackValue)
	if n > maxPieces || n > room {
		return nil
	}
	size := (len(payload) + n - 1) / n
	out := make([]string, 0, n)
	for at := 0; at < len(payload); at += size {
		out = append(out, payload[at:min(at+size, len(payload))])
	}
	if len(out) < 2 {
		out = append(out, "") // a payload of one byte: a second, empty piece
	}
	return out
}

// pieceField names the field of piece i (from 1) of task's payload.
func pieceField(task string, i int) string {
	return "p:" + task + ":" + strconv.Itoa(i)
}

// pieceFields names the fields of the n pieces of task's payload.
func pieceFields(task string, n int) []string {
	fs := make([]string, n)
	for i := range fs {
		fs[i] = pieceField(task, i+1)
	}
	return fs
}

// joinPieces joins the pieces of a payload as an HMGET answers them; ok is
// false when one is missing (the task succeeded, which drops them).
func joinPieces(vs []any) (string, bool) {
	var b strings.Builder
	for _, v := range vs {
		s, ok := v.(string)
		if !ok {
			return "", false
		}
		b.WriteString(s)
	}
	return b.String(), true
}

// piecesOf joins the pieces of task's payload from a run hash read whole;
// ok is false when one is missing.
func piecesOf(h map[string]string, task string, n int) (string, bool) {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		s, ok := h[pieceField(task, i)]
		if !ok {
			return "", false
		}
		b.WriteString(s)
	}
	return b.String(), true
}
