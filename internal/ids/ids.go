// Package ids holds the one rule for names that end up inside storage keys:
// workflow, task, handler, queue, run key, tenant and service names.
package ids

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxLen is the longest name accepted, in bytes.
const MaxLen = 128

// Reasons returned by Check. They are plain errors; callers wrap them.
var (
	ErrEmpty   = errors.New("is empty")
	ErrTooLong = errors.New("is longer than " + strconv.Itoa(MaxLen) + " bytes")
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
// Every error message that shows a value a caller gave shows it through
// Quote.
func Quote(s string) string {
	if len(s) <= quoteMax {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:cutAt(s)]) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// Cut renders the message of an error from another library that may echo
// a caller's string (a parser's, say) for inclusion in one of ours: at
// most quoteMax bytes of it, cut at a rune boundary with its full length
// noted, with invalid UTF-8 and control characters replaced by U+FFFD.
// Prefer a message of our own when the library's reasons are known.
func Cut(msg string) string {
	tail := ""
	if len(msg) > quoteMax {
		msg, tail = msg[:cutAt(msg)], "…("+strconv.Itoa(len(msg))+" bytes)"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(msg, string(utf8.RuneError))) + tail
}

// cutAt answers where to cut s, longer than quoteMax: at quoteMax, or up
// to utf8.UTFMax-1 bytes before it so a valid rune is not split.
func cutAt(s string) int {
	cut := quoteMax
	for i := 0; i < utf8.UTFMax-1 && !utf8.RuneStart(s[cut]); i++ {
		cut--
	}
	return cut
}
