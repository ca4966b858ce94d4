package draw

import (
	"strings"
	"unicode"

	"github.com/mqlab/mqlab/lessons"
)

// markdown draws lesson narrative, as lessons.ReadMarkdown reads it, in
// the theme's styles at any width down to about 30 cells, which a general
// renderer does not: a table too wide for the pane becomes one small
// record per row instead of a broken grid.

// Run is a stretch of inline text in one style.
type Run struct {
	Text  string
	Style *Style
}

// Markdown renders Markdown to rows of at most w cells.
func Markdown(st *Styles, src string, w int) []string {
	if w <= 0 {
		return nil
	}
	var out []string
	blank := func() {
		if len(out) > 0 && out[len(out)-1] != "" {
			out = append(out, "")
		}
	}
	var prev lessons.MDKind = -1
	for _, b := range lessons.ReadMarkdown(src) {
		if b.Kind != lessons.MDItem || prev != lessons.MDItem || b.Gap {
			blank() // a list's items stand together
		}
		prev = b.Kind
		switch b.Kind {
		case lessons.MDCode:
			for _, l := range b.Rows {
				for _, r := range codeWrap(l, w-2) {
					out = append(out, "  "+st.Accent.Render(r))
				}
			}
		case lessons.MDTable:
			out = append(out, mdTable(st, b.Rows, w)...)
		case lessons.MDHeading:
			out = append(out, WrapRuns([]Run{{lessons.PlainInline(b.Text), &st.Header}}, w, "")...)
		case lessons.MDItem:
			bullet := "• "
			if b.Numbered() {
				bullet = b.Marker + " "
			}
			for j, r := range WrapRuns(Inline(st, b.Text), w-Width(bullet), "") {
				if j == 0 {
					out = append(out, st.Muted.Render(bullet)+r)
				} else {
					out = append(out, Spaces(Width(bullet))+r)
				}
			}
		case lessons.MDQuote:
			for _, r := range WrapRuns(Inline(st, b.Text), w-2, "") {
				out = append(out, st.Faint.Render("│ ")+r)
			}
		default:
			out = append(out, WrapRuns(Inline(st, b.Text), w, "")...)
		}
	}
	return out
}

// Inline styles a paragraph's spans: bold, code in the accent, the rest
// as text. Code is a name the learner types or reads on screen (a client
// called `one`, a file's `.log`): on a terminal without colour it keeps
// its backticks, or it would read as an ordinary word.
func Inline(st *Styles, s string) []Run {
	spans := lessons.Inline(s)
	runs := make([]Run, len(spans))
	for i, sp := range spans {
		sty := &st.Text
		text := sp.Text
		switch sp.Kind {
		case lessons.SpanBold:
			sty = &st.Bold
		case lessons.SpanCode:
			sty = &st.Accent
			if st.NoColor {
				text = "`" + text + "`"
			}
		}
		runs[i] = Run{text, sty}
	}
	return runs
}

// WrapRuns word-wraps styled runs to w cells; a word longer than a row is
// broken. indent starts every row after the first.
func WrapRuns(runs []Run, w int, indent string) []string {
	type word struct {
		parts []Run
		w     int
	}
	var words []word
	var cur word
	for _, r := range runs {
		for i, f := range strings.Split(r.Text, " ") {
			if i > 0 && cur.w > 0 {
				words = append(words, cur)
				cur = word{}
			}
			if f != "" {
				cur.parts = append(cur.parts, Run{f, r.Style})
				cur.w += Width(f)
			}
		}
	}
	if cur.w > 0 {
		words = append(words, cur)
	}
	if Width(indent) >= w {
		indent = ""
	}
	var rows []string
	var l Line
	start := 0 // the row's lead: nothing on the first, the indent after
	newRow := func() {
		rows = append(rows, l.b.String())
		l = Line{}
		l.Add(nil, indent)
		start = l.w
	}
	for _, wd := range words {
		if l.w > start && l.w+1+wd.w > w {
			newRow()
		}
		if l.w > start {
			l.Add(nil, " ")
		}
		for _, p := range wd.parts {
			text := p.Text
			for text != "" && l.w+Width(text) > w {
				head, rest := splitAt(text, w-l.w)
				if head == "" && l.w == start { // a wide rune in a row too narrow for it
					head, rest = splitAt(text, Width(text[:len(string([]rune(text)[0]))]))
				}
				l.Add(p.Style, head)
				text = rest
				newRow()
			}
			l.Add(p.Style, text)
		}
	}
	if l.w > start || len(rows) == 0 {
		rows = append(rows, l.b.String())
	}
	return rows
}

// SplitAt cuts s after n cells.
func SplitAt(s string, n int) (string, string) { return splitAt(s, n) }

// splitAt cuts s after n cells.
func splitAt(s string, n int) (string, string) {
	w := 0
	for i, r := range s {
		rw := Width(string(r))
		if w+rw > n {
			return s[:i], s[i:]
		}
		w += rw
	}
	return s, ""
}

// codeWrap breaks one line of a code block into rows of w cells at its
// spaces, so that no name or option is split (AWS_SECRET_ACCESS_KEY,
// aws_access_key_id=): the rows it goes on to are indented four more
// than the line, and only a word longer than a row is broken.
func codeWrap(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	if Width(s) <= w {
		return []string{s}
	}
	lead := len(s) - len(strings.TrimLeft(s, " "))
	pad := Spaces(min(lead+4, w/2))
	var out []string
	row := s[:lead]
	words := strings.Fields(s)
	for i, word := range words {
		sep := " "
		if i == 0 {
			sep = ""
		}
		start := lead
		if len(out) > 0 {
			start = len(pad)
		}
		switch {
		case Width(row)+len(sep)+Width(word) <= w:
			row += sep + word
			continue
		case Width(row) > start:
			out = append(out, row)
			row = pad
			if Width(row)+Width(word) > w && Width(word) <= w {
				row = Spaces(w - Width(word)) // less indent rather than a split word
			}
		}
		for Width(row)+Width(word) > w {
			head, rest := splitAt(word, w-Width(row))
			if head == "" {
				head, rest = splitAt(word, 1)
			}
			out = append(out, row+head)
			row, word = pad, rest
		}
		row += word
	}
	return append(out, row)
}

// mdTable draws a pipe table: a grid when it fits in w cells, otherwise
// one record per row — the first cell as its title, then "header: cell"
// lines — so a narrow pane still reads every value.
func mdTable(st *Styles, rows []string, w int) []string {
	cells := tableCells(rows)
	if len(cells) == 0 {
		return nil
	}
	t := measureTable(cells)
	total := 3 * (t.cols - 1)
	for _, cw := range t.widths {
		total += cw
	}
	if total <= w {
		return t.grid(st)
	}
	return t.records(st, w)
}

// tableCells reads a Markdown table's rows into cells, leaving out the
// |---|---| line.
func tableCells(rows []string) [][]string {
	var cells [][]string
	for _, r := range rows {
		r = strings.TrimPrefix(strings.TrimSuffix(r, "|"), "|")
		var row []string
		sep := true
		for _, c := range strings.Split(r, "|") {
			c = lessons.PlainInline(strings.TrimSpace(c))
			row = append(row, c)
			if strings.Trim(c, ":- ") != "" {
				sep = false
			}
		}
		if sep {
			continue // the |---|---| line
		}
		cells = append(cells, row)
	}
	return cells
}

// table is a Markdown table's cells with each column's width and whether
// it holds only numbers (which line up on the right).
type table struct {
	cells   [][]string
	cols    int
	widths  []int
	numeric []bool
}

func measureTable(cells [][]string) table {
	t := table{cells: cells}
	for _, r := range cells {
		t.cols = max(t.cols, len(r))
	}
	t.widths = make([]int, t.cols)
	t.numeric = make([]bool, t.cols)
	for c := range t.numeric {
		t.numeric[c] = true
	}
	for ri, r := range cells {
		for c := 0; c < t.cols; c++ {
			v := cellAt(r, c)
			t.widths[c] = max(t.widths[c], Width(v))
			if ri > 0 && v != "" && !isNumberCell(v) {
				t.numeric[c] = false
			}
		}
	}
	return t
}

func cellAt(r []string, c int) string {
	if c < len(r) {
		return r[c]
	}
	return ""
}

// grid draws a table that fits as columns, its header ruled off.
func (t table) grid(st *Styles) []string {
	var out []string
	for ri, r := range t.cells {
		var l Line
		for c := 0; c < t.cols; c++ {
			if c > 0 {
				l.Add(&st.Faint, " │ ")
			}
			v := cellAt(r, c)
			sty := &st.Text
			if ri == 0 {
				sty = &st.Bold
			}
			if t.numeric[c] && ri > 0 {
				l.Add(nil, Spaces(t.widths[c]-Width(v)))
				l.Add(sty, v)
			} else {
				l.Add(sty, v)
				if c < t.cols-1 {
					l.Add(nil, Spaces(t.widths[c]-Width(v)))
				}
			}
		}
		out = append(out, l.b.String())
		if ri == 0 {
			var rule []string
			for _, cw := range t.widths {
				rule = append(rule, strings.Repeat("─", cw))
			}
			out = append(out, st.Faint.Render(strings.Join(rule, "─┼─")))
		}
	}
	return out
}

// records draws a table too wide for its columns as one record a row:
// the first cell as a title, then each other under its header's name.
func (t table) records(st *Styles, w int) []string {
	var out []string
	head := t.cells[0]
	for ri, r := range t.cells[1:] {
		if ri > 0 {
			out = append(out, "")
		}
		title := cellAt(r, 0)
		if h := cellAt(head, 0); h != "" {
			title = h + " " + title
		}
		out = append(out, WrapRuns([]Run{{Text: title, Style: &st.Bold}}, w, "")...)
		for c := 1; c < t.cols; c++ {
			runs := []Run{{Text: cellAt(head, c) + ":", Style: &st.Muted}, {Text: " " + cellAt(r, c), Style: &st.Text}}
			for _, s := range WrapRuns(runs, w-2, "  ") {
				out = append(out, "  "+s)
			}
		}
	}
	return out
}

func isNumberCell(s string) bool {
	has := false
	for _, r := range s {
		switch {
		case unicode.IsDigit(r):
			has = true
		case strings.ContainsRune("+-−.,% ₹$s", r):
		default:
			return false
		}
	}
	return has
}
