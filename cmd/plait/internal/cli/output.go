package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// emit writes v as indented JSON under -o json, or calls table with a
// tab-aligned writer under -o table.
func (e *env) emit(v any, table func(w io.Writer)) error {
	if e.output == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	table(tw)
	return tw.Flush()
}

// row writes one tab-separated line; empty cells show as "-".
func row(w io.Writer, cells ...any) {
	parts := make([]string, len(cells))
	for i, c := range cells {
		s := fmt.Sprint(c)
		if s == "" {
			s = "-"
		}
		parts[i] = strings.ReplaceAll(s, "\t", " ")
	}
	fmt.Fprintln(w, strings.Join(parts, "\t"))
}

// when is a time as the tables show it: UTC to the second, "-" when zero.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// took is the time from a to b, rounded, "-" when either is unknown.
func took(a, b time.Time) string {
	if a.IsZero() || b.IsZero() || b.Before(a) {
		return "-"
	}
	return dur(b.Sub(a))
}

// dur is a duration the stores kept to the ms: "<1ms" below it.
func dur(d time.Duration) string {
	if d < time.Millisecond {
		return "<1ms"
	}
	return round(d).String()
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}

// clip cuts s to n runes for a table cell, on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// isTerminal reports whether w is a character device: progress lines are
// drawn only there, never into a pipe or a file.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progress draws "label done/total" on stderr when it is a terminal.
func (e *env) progress(label string, done, total int) {
	if !e.tty {
		return
	}
	fmt.Fprintf(e.stderr, "\r%s %d/%d", label, done, total)
	if done >= total {
		fmt.Fprintln(e.stderr)
	}
}

// jsonLine writes v as one line of JSON.
func jsonLine(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}
