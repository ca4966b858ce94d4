package tui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// textWidth is the number of terminal cells s takes, escape codes excluded.
func textWidth(s string) int {
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

// fit pads or cuts s to exactly w cells; a cut ends in "…".
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := textWidth(s)
	switch {
	case sw == w:
		return s
	case sw < w:
		return s + spaces(w-sw)
	default:
		return ansi.Truncate(s, w, "…")
	}
}

// cut shortens s to at most w cells, ending in "…" when it had to.
func cut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if textWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

const blanks = "                                                                                                                                                                                                                                                                "

func spaces(n int) string {
	if n <= 0 {
		return ""
	}
	if n <= len(blanks) {
		return blanks[:n]
	}
	return strings.Repeat(" ", n)
}

// line builds one row of styled text and keeps its width as it goes, so
// a panel never measures a styled string twice.
type line struct {
	b strings.Builder
	w int
}

// add appends s drawn with st (nil: plain).
func (l *line) add(st *style, s string) *line {
	if s == "" {
		return l
	}
	l.w += textWidth(s)
	if st == nil {
		l.b.WriteString(s)
	} else {
		l.b.WriteString(st.Render(s))
	}
	return l
}

// pad appends spaces up to column w.
func (l *line) pad(w int) *line {
	if l.w < w {
		l.b.WriteString(spaces(w - l.w))
		l.w = w
	}
	return l
}

// String returns the row fitted to exactly w cells.
func (l *line) fit(w int) string {
	if l.w == w {
		return l.b.String()
	}
	if l.w < w {
		return l.b.String() + spaces(w-l.w)
	}
	return ansi.Truncate(l.b.String(), w, "…")
}

// block is a panel's content: exactly h rows of exactly w cells.
func block(rows []string, w, h int) string {
	var b strings.Builder
	for i := 0; i < h; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i < len(rows) {
			b.WriteString(fit(rows[i], w))
		} else {
			b.WriteString(spaces(w))
		}
	}
	return b.String()
}

// wrapText word-wraps plain text to w cells, keeping blank lines between
// paragraphs.
func wrapText(s string, w int) []string {
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
		wrapped := ansi.Hardwrap(ansi.Wordwrap(para, w, ""), w, true)
		out = append(out, strings.Split(wrapped, "\n")...)
	}
	return out
}

// bar draws a progress bar of w cells, with the fraction also as text by
// its side (so the bar is never the only carrier).
func bar(st *Styles, frac float64, w int) string {
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

// lipglossStyle keeps signatures short where a style pointer is returned.
type lipglossStyle = style

// wrapHanging word-wraps one line of a command's output to w cells. The
// lines it continues on are indented to where its text starts — past the
// leading spaces, and past an option's name in a table like help's
// ("  key=TEXT     the key; …") — so a wrapped entry still reads as one.
func wrapHanging(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	if textWidth(s) <= w {
		return []string{s}
	}
	hang := len(s) - len(strings.TrimLeft(s, " "))
	if i := strings.Index(s[hang:], "  "); i > 0 {
		j := hang + i
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if j < len(s) && textWidth(s[:j]) < w/2 {
			hang = textWidth(s[:j])
		}
	}
	if hang >= w/2 {
		hang = 2
	}
	first := ansi.Hardwrap(ansi.Wordwrap(s, w, ""), w, true)
	lines := strings.Split(first, "\n")
	out := []string{lines[0]}
	rest := strings.TrimSpace(strings.Join(lines[1:], " "))
	pad := strings.Repeat(" ", hang)
	for _, l := range wrapText(rest, w-hang) {
		out = append(out, pad+l)
	}
	return out
}

// oneLine joins a text's lines.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
