package dag

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Fallback colours, used as presentation attributes so the SVG alone is
// readable; a page's stylesheet overrides them through the state-* and
// cond-* classes (CSS rules beat presentation attributes).
var stateColours = map[string][2]string{ // fill, stroke
	"pending":   {"#eeeeee", "#9e9e9e"},
	"ready":     {"#e3f2fd", "#1e88e5"},
	"running":   {"#bbdefb", "#1565c0"},
	"retrying":  {"#fff3e0", "#fb8c00"},
	"succeeded": {"#c8e6c9", "#2e7d32"},
	"failed":    {"#ffcdd2", "#c62828"},
	"dead":      {"#d7ccc8", "#4e342e"},
	"skipped":   {"#f5f5f5", "#bdbdbd"},
	"cancelled": {"#fff9c4", "#f9a825"},
}

var unknownColours = [2]string{"#ffffff", "#9e9e9e"}

// condStyles: stroke colour and dash pattern per edge condition.
var condStyles = [len(condNames)][2]string{
	{"#78909c", ""},    // success
	{"#1e88e5", "6 3"}, // completion
	{"#c62828", "2 3"}, // failure
}

// labelRunes and detailRunes are about what fits in a box at 12px and
// 10px; longer text is cut, and the full text is in the box's title.
const (
	labelRunes  = 22
	detailRunes = 26
)

// WriteSVG writes d as one <svg class="dag"> element with a viewBox:
// links first, then a <g class="task state-S" data-task="ID"> per task
// and a <g class="group state-S" data-group="ID" data-count="N"> per
// group, each with a rect, text and a title. Every name is escaped; a
// state that is not a plain lower-case word is written as "unknown" in
// class names.
func (d *Diagram) WriteSVG(w io.Writer) error {
	s := svgWriter{bufio.NewWriterSize(w, 32<<10), new([]byte)}
	wd, ht := num(d.Width), num(d.Height)
	s.str(`<svg class="dag" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ` + wd + " " + ht +
		`" width="` + wd + `" height="` + ht + `" font-family="sans-serif" font-size="12">` + "\n")
	s.str("<defs>")
	for i, c := range condNames {
		s.str(`<marker id="dag-arrow-` + c + `" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="8" markerHeight="8" orient="auto"><path d="M0 0L8 4L0 8z" fill="` + condStyles[i][0] + `"/></marker>`)
	}
	s.str("</defs>\n")
	for i := range d.Links {
		s.link(&d.Links[i])
	}
	for i := range d.Boxes {
		b := &d.Boxes[i]
		s.str(`<g class="task state-`)
		s.str(stateClass(b.State))
		s.str(`" data-task="`)
		s.esc(b.ID)
		s.str(`"><title>`)
		// No state in the title: a page changes the box's class live,
		// and a title saying the old state would contradict it.
		s.esc(b.ID)
		if b.Detail != "" {
			s.str("\n")
			s.esc(b.Detail)
		}
		s.str("</title>")
		s.rect(b.X, b.Y, b.State)
		s.text(b.X, b.Y, b.Label, b.Detail)
		s.str("</g>\n")
	}
	for i := range d.Groups {
		gr := &d.Groups[i]
		s.str(`<g class="group state-` + stateClass(gr.State) + `" data-group="`)
		s.esc(gr.ID)
		s.str(`" data-count="` + strconv.Itoa(len(gr.Members)) + `"><title>`)
		s.esc(gr.Label)
		s.str("\n")
		s.esc(gr.Members[0])
		s.str(" … ")
		s.esc(gr.Members[len(gr.Members)-1])
		s.str("\n" + countsText(gr.Counts, len(gr.Counts)) + "</title>")
		// A second box behind, a few units off, says "more than one"
		// like a stack of cards; it takes the state colours too.
		s.rect(gr.X+4, gr.Y+4, gr.State)
		s.rect(gr.X, gr.Y, gr.State)
		s.text(gr.X, gr.Y, gr.Label, countsText(gr.Counts, 2))
		s.str("</g>\n")
	}
	s.str("</svg>\n")
	return s.Flush()
}

type svgWriter struct {
	*bufio.Writer
	scratch *[]byte // for numbers, so writing them allocates nothing
}

// str writes trusted text; a write error sticks in the bufio.Writer and
// comes back from Flush.
func (s svgWriter) str(t string) { _, _ = s.WriteString(t) }

func (s svgWriter) link(l *Link) {
	c, _ := condCode(l.Condition)
	st := condStyles[c]
	s.str(`<path class="edge cond-`)
	s.str(condNames[c])
	s.str(`" data-from="`)
	s.esc(l.From)
	s.str(`" data-to="`)
	s.esc(l.To)
	s.str(`" fill="none" stroke="`)
	s.str(st[0])
	s.str(`"`)
	if st[1] != "" {
		s.str(` stroke-dasharray="`)
		s.str(st[1])
		s.str(`"`)
	}
	s.str(` marker-end="url(#dag-arrow-`)
	s.str(condNames[c])
	s.str(`)" d="`)
	pts := l.Points
	if len(pts) > 0 {
		s.str("M")
		s.num(pts[0].X)
		s.str(" ")
		s.num(pts[0].Y)
	}
	for i := 1; i+2 < len(pts); i += 3 {
		if x := pts[i-1].X; pts[i].X == x && pts[i+1].X == x && pts[i+2].X == x {
			// A straight run down (through a long link's slot) is
			// shorter written as a vertical line.
			s.str("V")
			s.num(pts[i+2].Y)
			continue
		}
		s.str("C")
		for j, p := range pts[i : i+3] {
			if j > 0 {
				s.str(" ")
			}
			s.num(p.X)
			s.str(" ")
			s.num(p.Y)
		}
	}
	s.str(`"/>` + "\n")
}

func (s svgWriter) rect(x, y float64, state string) {
	c, ok := stateColours[state]
	if !ok {
		c = unknownColours
	}
	s.str(`<rect x="`)
	s.num(x)
	s.str(`" y="`)
	s.num(y)
	s.str(`" width="` + boxSize + `" rx="6" fill="`)
	s.str(c[0])
	s.str(`" stroke="`)
	s.str(c[1])
	s.str(`"/>`)
}

// boxSize is every box's width and height attributes.
var boxSize = num(BoxWidth) + `" height="` + num(BoxHeight)

// num writes v in the shortest form that reads back the same.
func (s svgWriter) num(v float64) {
	if i := int64(v); float64(i) == v {
		// Grid coordinates are whole: the integer form is much faster.
		*s.scratch = strconv.AppendInt((*s.scratch)[:0], i, 10)
	} else {
		*s.scratch = strconv.AppendFloat((*s.scratch)[:0], v, 'f', -1, 64)
	}
	_, _ = s.Write(*s.scratch)
}

// text writes a box's label and, when there is one, a smaller second line.
func (s svgWriter) text(x, y float64, label, detail string) {
	ly := y + BoxHeight/2 + 4
	if detail != "" {
		ly = y + 20
	}
	s.str(`<text class="label" x="`)
	s.num(x + 8)
	s.str(`" y="`)
	s.num(ly)
	s.str(`" fill="#212121">`)
	s.esc(cut(label, labelRunes))
	s.str("</text>")
	if detail != "" {
		s.str(`<text class="detail" x="`)
		s.num(x + 8)
		s.str(`" y="`)
		s.num(y + 37)
		s.str(`" font-size="10" fill="#555555">`)
		s.esc(cut(detail, detailRunes))
		s.str("</text>")
	}
}

// esc writes t escaped for XML text and attributes; bytes that are not
// valid UTF-8 and characters XML forbids become U+FFFD.
func (s svgWriter) esc(t string) {
	last := 0
	for i, r := range t {
		var rep string
		switch {
		case r == '&':
			rep = "&amp;"
		case r == '<':
			rep = "&lt;"
		case r == '>':
			rep = "&gt;"
		case r == '"':
			rep = "&quot;"
		case r == '\'':
			rep = "&#39;"
		case r == '\n':
			rep = "&#10;"
		case r == '\t', r == '\r':
			rep = " "
		case r < 0x20, r == utf8.RuneError, r >= 0xFFFE && r <= 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			rep = "\uFFFD"
		default:
			continue
		}
		s.str(t[last:i])
		s.str(rep)
		last = i + utf8.RuneLen(r)
		if r == utf8.RuneError {
			_, size := utf8.DecodeRuneInString(t[i:])
			last = i + size
		}
	}
	s.str(t[last:])
}

// cut shortens t to max runes, marking the cut with an ellipsis.
func cut(t string, max int) string {
	if utf8.RuneCountInString(t) <= max {
		return t
	}
	n := 0
	for i := range t {
		if n == max-1 {
			return t[:i] + "…"
		}
		n++
	}
	return t
}

// stateClass is s as a class-name suffix: a plain lower-case word, else
// "unknown".
func stateClass(s string) string {
	if s == "" {
		return "unknown"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return "unknown"
		}
	}
	return s
}

// countsText lists up to max state counts, worst first, as "2 running,
// 9,998 succeeded".
func countsText(counts []StateCount, max int) string {
	var b strings.Builder
	for i, c := range counts {
		if i == max {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		// The class word: a state that is not a plain word reads "unknown".
		b.WriteString(thousands(c.Count) + " " + stateClass(c.State))
	}
	return b.String()
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
