package tui

import (
	"strings"
	"unicode"
)

// Lesson narrative is Markdown written for a terminal: paragraphs hard-
// wrapped in the file, **bold**, `code`, lists, pipe tables whose cells the
// lab filled, and an occasional fenced block (SQL). markdown draws that
// subset in the theme's styles at any width down to about 30 cells, which a
// general renderer does not: a table too wide for the pane becomes one
// small record per row instead of a broken grid.

// mdRun is a stretch of inline text in one style.
type mdRun struct {
	text string
	st   *style
}

// markdown renders Markdown to rows of at most w cells.
func markdown(st *Styles, src string, w int) []string {
	if w <= 0 {
		return nil
	}
	lines := strings.Split(strings.ReplaceAll(strings.TrimRight(src, "\n"), "\t", "    "), "\n")
	var out []string
	blank := func() {
		if len(out) > 0 && out[len(out)-1] != "" {
			out = append(out, "")
		}
	}
	for i := 0; i < len(lines); {
		ln := lines[i]
		t := strings.TrimSpace(ln)
		switch {
		case t == "":
			i++
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence := t[:3]
			i++
			blank()
			for ; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
				for _, r := range hardWrap(strings.TrimRight(lines[i], " "), w-2) {
					out = append(out, "  "+st.Accent.Render(r))
				}
			}
			i++ // the closing fence
			out = append(out, "")
		case strings.HasPrefix(t, "|"):
			var rows []string
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				rows = append(rows, strings.TrimSpace(lines[i]))
			}
			blank()
			out = append(out, mdTable(st, rows, w)...)
			out = append(out, "")
		case strings.HasPrefix(t, "#"):
			i++
			blank()
			head := strings.TrimSpace(strings.TrimLeft(t, "#"))
			out = append(out, wrapRuns([]mdRun{{plainInline(head), &st.Header}}, w, "")...)
		case listMarker(t) != "":
			blank()
			for i < len(lines) {
				t = strings.TrimSpace(lines[i])
				m := listMarker(t)
				if m == "" {
					break
				}
				item := strings.TrimSpace(t[len(m):])
				i++
				// Continuation lines: indented, not a new item, not blank.
				for i < len(lines) {
					nt := strings.TrimSpace(lines[i])
					if nt == "" || listMarker(nt) != "" || !strings.HasPrefix(lines[i], " ") {
						break
					}
					item += " " + nt
					i++
				}
				bullet := "• "
				if m[0] >= '0' && m[0] <= '9' {
					bullet = strings.TrimSpace(m) + " "
				}
				rows := wrapRuns(inline(st, item), w-textWidth(bullet), "")
				for j, r := range rows {
					if j == 0 {
						out = append(out, st.Muted.Render(bullet)+r)
					} else {
						out = append(out, spaces(textWidth(bullet))+r)
					}
				}
			}
			out = append(out, "")
		case strings.HasPrefix(t, ">"):
			var para []string
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), ">"); i++ {
				para = append(para, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i]), ">")))
			}
			blank()
			for _, r := range wrapRuns(inline(st, strings.Join(para, " ")), w-2, "") {
				out = append(out, st.Faint.Render("│ ")+r)
			}
			out = append(out, "")
		default:
			var para []string
			for ; i < len(lines); i++ {
				t := strings.TrimSpace(lines[i])
				if t == "" || strings.HasPrefix(t, "```") || strings.HasPrefix(t, "|") || strings.HasPrefix(t, "#") ||
					strings.HasPrefix(t, ">") || (len(para) > 0 && interruptsParagraph(t)) {
					break
				}
				para = append(para, t)
			}
			if len(para) == 0 { // a line no rule took: keep it as a paragraph
				para = append(para, t)
				i++
			}
			blank()
			out = append(out, wrapRuns(inline(st, strings.Join(para, " ")), w, "")...)
			out = append(out, "")
		}
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// interruptsParagraph says whether a line inside a paragraph starts a
// list: a bullet, or a numbered item from 1 as CommonMark has it, so that a
// wrapped line beginning "881. The checkout" stays in its paragraph.
func interruptsParagraph(t string) bool {
	m := listMarker(t)
	return m != "" && (m[0] < '0' || m[0] > '9' || m == "1. " || m == "1) ")
}

// listMarker returns a list item's marker with its space ("- ", "12. "),
// or "".
func listMarker(t string) string {
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ' {
		if t[0] == '*' && strings.HasPrefix(t, "**") {
			return ""
		}
		return t[:2]
	}
	i := 0
	for i < len(t) && i < 3 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' ' {
		return t[:i+2]
	}
	return ""
}

// inline splits a paragraph into runs: **bold**, `code`, *emphasis* (drawn
// plain: terminals render italics unevenly) and [links](url) as their text.
func inline(st *Styles, s string) []mdRun {
	var runs []mdRun
	var cur strings.Builder
	flush := func(sty *style) {
		if cur.Len() > 0 {
			runs = append(runs, mdRun{cur.String(), sty})
			cur.Reset()
		}
	}
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "**") || strings.HasPrefix(s[i:], "__"):
			mark := s[i : i+2]
			if j := strings.Index(s[i+2:], mark); j > 0 {
				flush(&st.Text)
				runs = append(runs, mdRun{plainInline(s[i+2 : i+2+j]), &st.Bold})
				i += 4 + j
				continue
			}
		case s[i] == '`':
			if j := strings.IndexByte(s[i+1:], '`'); j > 0 {
				flush(&st.Text)
				runs = append(runs, mdRun{s[i+1 : i+1+j], &st.Accent})
				i += 2 + j
				continue
			}
		case (s[i] == '*' || s[i] == '_') && i+1 < len(s) && s[i+1] != ' ' && (i == 0 || !isWordByte(s[i-1])):
			if j := strings.IndexByte(s[i+1:], s[i]); j > 0 && (i+2+j >= len(s) || !isWordByte(s[i+2+j])) {
				flush(&st.Text)
				runs = append(runs, mdRun{s[i+1 : i+1+j], &st.Text})
				i += 2 + j
				continue
			}
		case s[i] == '[':
			if j := strings.Index(s[i:], "]("); j > 0 {
				if k := strings.IndexByte(s[i+j:], ')'); k > 0 {
					cur.WriteString(s[i+1 : i+j])
					i += j + k + 1
					continue
				}
			}
		}
		cur.WriteByte(s[i])
		i++
	}
	flush(&st.Text)
	return runs
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// plainInline drops the inline marks of s.
func plainInline(s string) string {
	var b strings.Builder
	for _, r := range inline(&Styles{}, s) {
		b.WriteString(r.text)
	}
	return b.String()
}

// wrapRuns word-wraps styled runs to w cells; a word longer than a row is
// broken. indent starts every row after the first.
func wrapRuns(runs []mdRun, w int, indent string) []string {
	type word struct {
		parts []mdRun
		w     int
	}
	var words []word
	var cur word
	for _, r := range runs {
		for i, f := range strings.Split(r.text, " ") {
			if i > 0 && cur.w > 0 {
				words = append(words, cur)
				cur = word{}
			}
			if f != "" {
				cur.parts = append(cur.parts, mdRun{f, r.st})
				cur.w += textWidth(f)
			}
		}
	}
	if cur.w > 0 {
		words = append(words, cur)
	}
	if textWidth(indent) >= w {
		indent = ""
	}
	var rows []string
	var l line
	start := 0 // the row's lead: nothing on the first, the indent after
	newRow := func() {
		rows = append(rows, l.b.String())
		l = line{}
		l.add(nil, indent)
		start = l.w
	}
	for _, wd := range words {
		if l.w > start && l.w+1+wd.w > w {
			newRow()
		}
		if l.w > start {
			l.add(nil, " ")
		}
		for _, p := range wd.parts {
			text := p.text
			for text != "" && l.w+textWidth(text) > w {
				head, rest := splitAt(text, w-l.w)
				if head == "" && l.w == start { // a wide rune in a row too narrow for it
					head, rest = splitAt(text, textWidth(text[:len(string([]rune(text)[0]))]))
				}
				l.add(p.st, head)
				text = rest
				newRow()
			}
			l.add(p.st, text)
		}
	}
	if l.w > start || len(rows) == 0 {
		rows = append(rows, l.b.String())
	}
	return rows
}

// splitAt cuts s after n cells.
func splitAt(s string, n int) (string, string) {
	w := 0
	for i, r := range s {
		rw := textWidth(string(r))
		if w+rw > n {
			return s[:i], s[i:]
		}
		w += rw
	}
	return s, ""
}

// hardWrap breaks one line of a code block into rows of w cells.
func hardWrap(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	var out []string
	for textWidth(s) > w {
		head, rest := splitAt(s, w)
		out = append(out, head)
		s = rest
	}
	return append(out, s)
}

// mdTable draws a pipe table: a grid when it fits in w cells, otherwise
// one record per row — the first cell as its title, then "header: cell"
// lines — so a narrow pane still reads every value.
func mdTable(st *Styles, rows []string, w int) []string {
	var cells [][]string
	for _, r := range rows {
		r = strings.TrimPrefix(strings.TrimSuffix(r, "|"), "|")
		var row []string
		sep := true
		for _, c := range strings.Split(r, "|") {
			c = plainInline(strings.TrimSpace(c))
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
	if len(cells) == 0 {
		return nil
	}
	cols := 0
	for _, r := range cells {
		cols = max(cols, len(r))
	}
	widths := make([]int, cols)
	numeric := make([]bool, cols)
	for c := range numeric {
		numeric[c] = true
	}
	for ri, r := range cells {
		for c := 0; c < cols; c++ {
			v := ""
			if c < len(r) {
				v = r[c]
			}
			widths[c] = max(widths[c], textWidth(v))
			if ri > 0 && v != "" && !isNumberCell(v) {
				numeric[c] = false
			}
		}
	}
	total := 3 * (cols - 1)
	for _, cw := range widths {
		total += cw
	}
	cell := func(r []string, c int) string {
		if c < len(r) {
			return r[c]
		}
		return ""
	}
	var out []string
	if total <= w {
		for ri, r := range cells {
			var l line
			for c := 0; c < cols; c++ {
				if c > 0 {
					l.add(&st.Faint, " │ ")
				}
				v := cell(r, c)
				sty := &st.Text
				if ri == 0 {
					sty = &st.Bold
				}
				if numeric[c] && ri > 0 {
					l.add(nil, spaces(widths[c]-textWidth(v)))
					l.add(sty, v)
				} else {
					l.add(sty, v)
					if c < cols-1 {
						l.add(nil, spaces(widths[c]-textWidth(v)))
					}
				}
			}
			out = append(out, l.b.String())
			if ri == 0 {
				var rule []string
				for _, cw := range widths {
					rule = append(rule, strings.Repeat("─", cw))
				}
				out = append(out, st.Faint.Render(strings.Join(rule, "─┼─")))
			}
		}
		return out
	}
	head := cells[0]
	for ri, r := range cells[1:] {
		if ri > 0 {
			out = append(out, "")
		}
		title := cell(r, 0)
		if h := cell(head, 0); h != "" {
			title = h + " " + title
		}
		out = append(out, wrapRuns([]mdRun{{title, &st.Bold}}, w, "")...)
		for c := 1; c < cols; c++ {
			runs := []mdRun{{cell(head, c) + ":", &st.Muted}, {" " + cell(r, c), &st.Text}}
			for _, s := range wrapRuns(runs, w-2, "  ") {
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
