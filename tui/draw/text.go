package draw

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Width is the number of terminal cells s takes, escape codes excluded.
func Width(s string) int {
	if isPlainASCII(s) {
		return len(s)
	}
	return ansi.StringWidth(s)
}

func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c < 0x20 {
			return false
		}
	}
	return true
}

// Fit pads or cuts s to exactly w cells; a cut ends in "…".
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := Width(s)
	switch {
	case sw == w:
		return s
	case sw < w:
		return s + Spaces(w-sw)
	default:
		return ansi.Truncate(s, w, "…")
	}
}

// Cut shortens s to at most w cells, ending in "…" when it had to.
func Cut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if Width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

const blanks = "                                                                                                                                                                                                                                                                "

func Spaces(n int) string {
	if n <= 0 {
		return ""
	}
	if n <= len(blanks) {
		return blanks[:n]
	}
	return strings.Repeat(" ", n)
}

// Line builds one row of styled text and keeps its width as it goes, so
// a panel never measures a styled string twice.
type Line struct {
	b strings.Builder
	w int
}

// Add appends s drawn with st (nil: plain).
func (l *Line) Add(st *Style, s string) *Line {
	if s == "" {
		return l
	}
	l.w += Width(s)
	if st == nil {
		l.b.WriteString(s)
	} else {
		l.b.WriteString(st.Render(s))
	}
	return l
}

// Pad appends spaces up to column w.
func (l *Line) Pad(w int) *Line {
	if l.w < w {
		l.b.WriteString(Spaces(w - l.w))
		l.w = w
	}
	return l
}

// Fit returns the row fitted to exactly w cells.
func (l *Line) Fit(w int) string {
	if l.w == w {
		return l.b.String()
	}
	if l.w < w {
		return l.b.String() + Spaces(w-l.w)
	}
	return ansi.Truncate(l.b.String(), w, "…")
}

// Block is a panel's content: exactly h rows of exactly w cells.
func Block(rows []string, w, h int) string {
	var b strings.Builder
	for i := 0; i < h; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i < len(rows) {
			b.WriteString(Fit(rows[i], w))
		} else {
			b.WriteString(Spaces(w))
		}
	}
	return b.String()
}

// nbHyphen is a non-breaking hyphen, one cell wide like "-".
const nbHyphen = "\u2011"

// wordWrap breaks one line into rows of w cells at spaces only: a word
// such as msg-881 or at-least-once is one word, where the wrapper would
// break after its hyphen (and at a row's edge leave the hyphen on a row
// of its own). A non-breaking hyphen stands in for it while wrapping. A
// word longer than a row is broken.
func wordWrap(s string, w int) []string {
	s = strings.ReplaceAll(s, "-", nbHyphen)
	rows := strings.Split(ansi.Hardwrap(ansi.Wordwrap(s, w, ""), w, true), "\n")
	for i, r := range rows {
		rows[i] = strings.ReplaceAll(r, nbHyphen, "-")
	}
	return rows
}

// Wrap word-wraps plain text to w cells, keeping blank lines between
// paragraphs.
func Wrap(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	var out []string
	for _, para := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		para = strings.TrimRight(para, " ")
		if para == "" {
			out = append(out, "")
			continue
		}
		out = append(out, wordWrap(para, w)...)
	}
	return out
}

// Bar draws a progress bar of w cells, with the fraction also as text by
// its side (so the bar is never the only carrier).
func Bar(st *Styles, frac float64, w int) string {
	if w <= 0 {
		return ""
	}
	if frac < 0 {
		frac = 0
	}
	if frac > 1 {
		frac = 1
	}
	full := int(frac*float64(w) + 0.5)
	return st.Bar.Render(strings.Repeat("▰", full)) + st.BarEmpty.Render(strings.Repeat("▱", w-full))
}

// WrapHanging word-wraps one line of a command's output to w cells. The
// lines it continues on are indented to where its text starts — past the
// leading spaces, and past an option's name in a table like help's
// ("  key=TEXT     the key; …") — so a wrapped entry still reads as one.
func WrapHanging(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	if Width(s) <= w {
		return []string{s}
	}
	hang := len(s) - len(strings.TrimLeft(s, " "))
	if i := strings.Index(s[hang:], "  "); i > 0 {
		j := hang + i
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if j < len(s) && Width(s[:j]) < w/2 {
			hang = Width(s[:j])
		}
	}
	if hang >= w/2 {
		hang = 2
	}
	lines := wordWrap(s, w)
	out := []string{lines[0]}
	rest := strings.TrimSpace(strings.Join(lines[1:], " "))
	pad := strings.Repeat(" ", hang)
	for _, l := range Wrap(rest, w-hang) {
		out = append(out, pad+l)
	}
	return out
}

// OneLine joins a text's lines.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Width is how many cells the line takes so far.
func (l *Line) Width() int { return l.w }

// String is the line as drawn so far.
func (l *Line) String() string { return l.b.String() }

// AddStyled adds text that is styled already and takes w cells.
func (l *Line) AddStyled(s string, w int) *Line {
	l.b.WriteString(s)
	l.w += w
	return l
}

// Append adds another line's text.
func (l *Line) Append(o *Line) *Line { return l.AddStyled(o.String(), o.w) }

// GroupNumbers writes the whole numbers of four digits or more in s with
// their thousands grouped, as lessons write numbers ("36,042"), where
// they stand as numbers of their own: after a space or "(" and before a
// space, a decimal point, ",", ";", ")" or the end. Names holding digits
// (n1, orders/1000, e1234) and dates stay as they are.
func GroupNumbers(s string) string {
	starts := func(i int) bool { // a number may begin at i
		switch {
		case i == 0:
			return true
		case s[i-1] == ' ' || s[i-1] == '(':
			return true
		case s[i-1] == '-': // a minus sign of its own
			return i == 1 || s[i-2] == ' ' || s[i-2] == '('
		}
		return false
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if c := s[i]; c < '0' || c > '9' || !starts(i) {
			b.WriteByte(c)
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		digits := s[i:j]
		i = j
		ends := j == len(s) || strings.IndexByte(" ,;)", s[j]) >= 0 ||
			s[j] == '.' && (j+1 == len(s) || s[j+1] == ' ' || s[j+1] >= '0' && s[j+1] <= '9')
		if !ends || len(digits) < 4 {
			b.WriteString(digits)
			continue
		}
		for k := range len(digits) {
			if k > 0 && (len(digits)-k)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteByte(digits[k])
		}
	}
	return b.String()
}
