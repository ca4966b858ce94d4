package lessons

import (
	"strings"
)

// Lesson narrative is Markdown written for a terminal: paragraphs hard-
// wrapped in the file, **bold**, `code`, lists, pipe tables the lab fills,
// block quotes and an occasional fenced block (SQL). ReadMarkdown reads
// that subset into blocks once, for every place that draws it: the screen
// styles them, the transcript prints them plain.

// MDKind says what a Markdown block is.
type MDKind int

const (
	MDParagraph MDKind = iota
	MDHeading
	MDItem  // one list item
	MDQuote // a block quote
	MDTable
	MDCode // a fenced block, or lines indented four spaces
)

// MDBlock is one block of narrative.
type MDBlock struct {
	Kind MDKind
	// Gap: a blank line stood before the block in the source.
	Gap bool
	// Text is a paragraph's, heading's, item's or quote's text, its lines
	// joined by spaces, without its marks (#, the item's marker, >).
	Text string
	// Level is a heading's number of #.
	Level int
	// Marker is an item's marker ("-", "*", "1."), Indent the spaces
	// before it.
	Marker, Indent string
	// Rows are a table's rows, trimmed, or a fenced block's lines as
	// written.
	Rows []string
	// Fence is a fenced block's opening line ("```sql") and Close its
	// closing one ("" when the block runs to the end); both are "" for
	// an indented block.
	Fence, Close string
}

// Numbered reports whether an item's marker is a number ("1.", "2)").
func (b MDBlock) Numbered() bool { return b.Marker != "" && b.Marker[0] >= '0' && b.Marker[0] <= '9' }

// ReadMarkdown splits narrative into blocks. A list item, a paragraph and
// a quote go on over following lines (CommonMark's lazy continuation)
// until a blank line or a line that starts another block; inside a
// paragraph only a bullet or an item numbered 1 starts a list, so that a
// wrapped line beginning "881. The checkout" stays in its paragraph.
func ReadMarkdown(md string) []MDBlock {
	lines := strings.Split(strings.ReplaceAll(strings.TrimRight(md, "\n"), "\t", "    "), "\n")
	var out []MDBlock
	gap := false
	for i := 0; i < len(lines); {
		l := lines[i]
		t := strings.TrimSpace(l)
		b := MDBlock{Gap: gap && len(out) > 0}
		gap = false
		switch {
		case t == "":
			gap = true
			i++
			continue
		case strings.HasPrefix(l, "    ") && (len(out) == 0 || b.Gap) && (len(out) == 0 || out[len(out)-1].Kind != MDItem):
			// An indented code block: after a blank line, every line
			// indented four spaces or more (and blank lines between them)
			// is code, kept as written, so that a command can be copied.
			b.Kind = MDCode
			for ; i < len(lines); i++ {
				r := lines[i]
				if strings.TrimSpace(r) != "" && !strings.HasPrefix(r, "    ") {
					break
				}
				b.Rows = append(b.Rows, strings.TrimRight(strings.TrimPrefix(r, "    "), " "))
			}
			for len(b.Rows) > 0 && b.Rows[len(b.Rows)-1] == "" {
				b.Rows = b.Rows[:len(b.Rows)-1]
				gap = true // it ended on a blank line
			}
		case isFence(t):
			b.Kind, b.Fence = MDCode, t
			mark := t[:3]
			for i++; i < len(lines); i++ {
				if strings.HasPrefix(strings.TrimSpace(lines[i]), mark) {
					b.Close = strings.TrimSpace(lines[i])
					i++
					break
				}
				b.Rows = append(b.Rows, strings.TrimRight(lines[i], " "))
			}
		case strings.HasPrefix(t, "|"):
			b.Kind = MDTable
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				b.Rows = append(b.Rows, strings.TrimSpace(lines[i]))
			}
		case strings.HasPrefix(t, "#"):
			b.Kind = MDHeading
			b.Level = len(t) - len(strings.TrimLeft(t, "#"))
			b.Text = strings.TrimSpace(t[b.Level:])
			i++
		default:
			var text []string
			switch m := listMarker(t); {
			case m != "":
				b.Kind, b.Marker = MDItem, strings.TrimSpace(m)
				b.Indent = l[:len(l)-len(strings.TrimLeft(l, " "))]
				text = append(text, strings.TrimSpace(t[len(m):]))
			case strings.HasPrefix(t, ">"):
				b.Kind = MDQuote
				text = append(text, strings.TrimSpace(t[1:]))
			default:
				b.Kind = MDParagraph
				text = append(text, t)
			}
			for i++; i < len(lines); i++ {
				nt := strings.TrimSpace(lines[i])
				if nt == "" || startsBlock(nt, b.Kind) {
					break
				}
				if b.Kind == MDQuote {
					nt = strings.TrimSpace(strings.TrimPrefix(nt, ">"))
				}
				text = append(text, nt)
			}
			b.Text = strings.Join(text, " ")
		}
		out = append(out, b)
	}
	return out
}

// startsBlock says whether a line ends the paragraph, item or quote
// before it by starting a block of its own.
func startsBlock(t string, in MDKind) bool {
	switch {
	case isFence(t), strings.HasPrefix(t, "|"), strings.HasPrefix(t, "#"):
		return true
	case strings.HasPrefix(t, ">"):
		return in != MDQuote
	}
	m := listMarker(t)
	if m == "" {
		return false
	}
	if in == MDItem {
		return true // the next item
	}
	return m[0] < '0' || m[0] > '9' || m == "1. " || m == "1) "
}

func isFence(t string) bool { return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") }

// listMarker returns a list item's marker with its space ("- ", "12. "),
// or "".
func listMarker(t string) string {
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ' {
		return t[:2]
	}
	i := 0
	for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' ' {
		return t[:i+2]
	}
	return ""
}

// SpanKind is how a stretch of inline text is marked.
type SpanKind int

const (
	SpanPlain SpanKind = iota // plain text, and *emphasis* (terminals render italics unevenly)
	SpanBold
	SpanCode
)

// Span is a stretch of inline text in one kind.
type Span struct {
	Text string
	Kind SpanKind
}

// Inline splits a paragraph into spans: **bold**, `code`, *emphasis* as
// plain text and [links](url) as their text.
func Inline(s string) []Span {
	var spans []Span
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			spans = append(spans, Span{Text: cur.String()})
			cur.Reset()
		}
	}
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "**") || strings.HasPrefix(s[i:], "__"):
			mark := s[i : i+2]
			if j := strings.Index(s[i+2:], mark); j > 0 {
				flush()
				spans = append(spans, Span{PlainInline(s[i+2 : i+2+j]), SpanBold})
				i += 4 + j
				continue
			}
		case s[i] == '`':
			if j := strings.IndexByte(s[i+1:], '`'); j > 0 {
				flush()
				spans = append(spans, Span{s[i+1 : i+1+j], SpanCode})
				i += 2 + j
				continue
			}
		case (s[i] == '*' || s[i] == '_') && i+1 < len(s) && s[i+1] != ' ' && (i == 0 || !isWordByte(s[i-1])):
			if j := strings.IndexByte(s[i+1:], s[i]); j > 0 && (i+2+j >= len(s) || !isWordByte(s[i+2+j])) {
				flush()
				spans = append(spans, Span{Text: s[i+1 : i+1+j]})
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
	flush()
	return spans
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// PlainInline drops the inline marks of s.
func PlainInline(s string) string {
	var b strings.Builder
	for _, sp := range Inline(s) {
		b.WriteString(sp.Text)
	}
	return b.String()
}
