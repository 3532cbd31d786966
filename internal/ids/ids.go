// Package ids holds the one rule for names that end up inside storage keys:
// workflow, task, handler, queue, run key, tenant and service names.
package ids

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// MaxLen is the longest name accepted, in bytes.
const MaxLen = 128

// Reasons returned by Check. They are plain errors; callers wrap them.
var (
	ErrEmpty   = errors.New("is empty")
	ErrTooLong = errors.New("is longer than 128 bytes")
	ErrChar    = errors.New("has a character outside [A-Za-z0-9._-]")
)

// Check reports why s is not a valid name, or nil. Names are limited to ASCII
// letters, digits, '.', '_' and '-' so that no name can contain a key
// separator (':'), a hash-tag brace, a glob character, NUL or invalid UTF-8,
// and so that key building stays injective without any escaping.
func Check(s string) error {
	if s == "" {
		return ErrEmpty
	}
	if len(s) > MaxLen {
		return ErrTooLong
	}
	for i := 0; i < len(s); i++ {
		if !allowed(s[i]) {
			return ErrChar
		}
	}
	return nil
}

func allowed(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	case c == '.', c == '_', c == '-':
		return true
	}
	return false
}

// quoteMax is the longest part of a caller's string an error message
// quotes. It is the longest valid name, so any name that passes validation
// shows whole, while a hostile value of megabytes cannot flood logs through
// the error that rejects it.
const quoteMax = MaxLen

// Quote renders a caller's string for an error message: Go-quoted, and cut
// after quoteMax bytes (at a rune boundary) with its full length noted.
func Quote(s string) string {
	if len(s) <= quoteMax {
		return strconv.Quote(s)
	}
	cut := quoteMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
