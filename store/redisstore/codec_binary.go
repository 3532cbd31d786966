package redisstore

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"
)

// The binary parts of a run hash (field i, the body of d:) are a version
// byte (see codec.go), then uvarint-length-prefixed strings and varints
// (encoding/binary). An optional part (a map, a slice, a payload) is a
// uvarint count plus one, so that 0 stands for nil and 1 for empty.

// writer appends the binary encoding.
type writer struct{ b []byte }

func (w *writer) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) varint(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *writer) str(s string)     { w.uvarint(uint64(len(s))); w.b = append(w.b, s...) }

// reader consumes the binary encoding; the first problem sticks in err.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = corrupt("truncated or malformed %s", what)
	}
}

func (r *reader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint(what string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) take(n uint64, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.fail(what)
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) str(what string) string { return string(r.take(r.uvarint(what), what)) }

// count reads an optional part's count: -1 for nil, else the count, which
// cannot exceed the bytes left (every element takes at least one).
func (r *reader) count(what string) int {
	n := r.uvarint(what)
	if n == 0 || r.err != nil {
		return -1
	}
	if n-1 > uint64(len(r.b)) {
		r.fail(what)
		return -1
	}
	return int(n - 1)
}

// version reads the version byte that opens a binary part.
func (r *reader) version(record string) (int, error) {
	b := r.take(1, "format version")
	if r.err != nil {
		return 0, r.err
	}
	return checkVersion(record, b[0])
}

// end reports bytes left after the last field as corruption.
func (r *reader) end(what string) {
	if r.err == nil && len(r.b) != 0 {
		r.fail(what + " trailer")
	}
}

// clipMax is the most of a stored or given string an error message quotes,
// so a corrupt record or a hostile option value cannot flood a log.
const clipMax = 32

// clip quotes s for an error message: at most its first clipMax bytes,
// cut at a rune boundary, then its full length.
func clip(s string) string {
	if len(s) <= clipMax {
		return strconv.Quote(s)
	}
	cut := clipMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
