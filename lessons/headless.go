package lessons

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mqlab/mqlab/lab"
)

// Width is the transcript's line width: it reads on an 80-column terminal.
const Width = 80

// PlayHeadless plays a whole lesson unattended and writes a transcript to
// w: the narrative wrapped to Width, each command with what it said and
// what the broker reported, every task done by typing its do commands,
// every prediction with its choices and answer, every expectation with the
// value the lab showed and ✓ or ✗.
//
// It plays every step even when an expectation fails, and then returns
// *FailedError; a command that cannot run stops it with *CommandError.
func PlayHeadless(ctx context.Context, les *Lesson, w io.Writer, opts Options) error {
	opts.Progress = nil // a transcript is not the learner's progress
	r, err := NewRunner(les, opts)
	if err != nil {
		return err
	}
	defer r.Close()
	t := &transcript{w: w, sub: r.Lab().Subscribe(1 << 16)}
	defer t.sub.Close()
	start := time.Now()

	t.header(les)
	var failed []ExpectResult
	expects := 0
	for i, step := range les.Steps {
		t.blank()
		t.rule(fmt.Sprintf("Step %d of %d: %s", i+1, len(les.Steps), step.Title))
		for {
			ev, err := r.Next(ctx)
			if err != nil {
				t.events(false)
				t.line("  ", "    ", "✗ "+err.Error())
				return err
			}
			if ev.Kind == KindStepEnd {
				break
			}
			switch ev.Kind {
			case KindText:
				t.blank()
				t.markdown(ev.Text)
			case KindLab:
				t.blank()
				t.events(false)
				for _, c := range ev.Commands {
					if isExpect(c.Text) {
						expects++
					}
				}
			case KindTask:
				t.blank()
				t.line("  ▶ Task: ", "    ", flatten(ev.Text))
				t.line("    ", "    ", ev.Task.Hint())
				t.line("    ", "    ", "(headless: typing it for you)")
				t.events(false)
				if _, err := r.DoTask(ctx); err != nil {
					t.events(false)
					t.line("  ", "    ", "✗ "+err.Error())
					return err
				}
				t.events(false)
			case KindPredict:
				t.blank()
				t.line("  ? Predict: ", "    ", flatten(ev.Text))
				for j, c := range ev.Choices {
					t.line(fmt.Sprintf("      %c) ", 'a'+j), "         ", flatten(c))
				}
				rv, err := r.Answer(ctx, -1)
				if err != nil {
					return err
				}
				t.line("    Answer: ", "    ", fmt.Sprintf("%c) %s", 'a'+rv.Predict.Answer, flatten(rv.Answer)))
				t.line("    Why: ", "    ", flatten(rv.Why))
			case KindExpect:
				t.blank()
				t.events(true)
				for _, e := range ev.Expects {
					expects++
					mark := "✓ "
					if !e.Held {
						mark = "✗ "
					}
					text := e.Cond + " (" + e.Observed + ")"
					if e.Label != "" {
						text += " — " + e.Label
					}
					t.line("  "+mark, "      ", text)
				}
			}
		}
		failed = append(failed, r.Failed()...)
		if opts.FailFast && len(failed) > 0 {
			break
		}
		if err := r.NextStep(ctx, true); err != nil && !errors.Is(err, ErrEnd) {
			return err
		}
	}
	t.events(false)
	t.blank()
	took := time.Since(start).Round(10 * time.Millisecond)
	if d := t.sub.Dropped(); d > 0 {
		t.line("", "", fmt.Sprintf("(%d lab events were too many to print)", d))
	}
	if len(failed) > 0 {
		t.rule(fmt.Sprintf("✗ %d of %d expectations failed (%v)", len(failed), expects, took))
		return &FailedError{Failed: failed}
	}
	t.rule(fmt.Sprintf("✓ every expectation held: %d of %d (%v)", expects, expects, took))
	return t.err
}

func isExpect(text string) bool {
	return strings.HasPrefix(strings.TrimSpace(text), "expect ")
}

// transcript writes wrapped lines; the first write error sticks.
type transcript struct {
	w   io.Writer
	sub *lab.Subscription
	err error
	gap bool // the last line written was blank
}

func (t *transcript) write(s string) {
	if t.err != nil {
		return
	}
	_, t.err = io.WriteString(t.w, s+"\n")
	t.gap = s == ""
}

func (t *transcript) blank() {
	if !t.gap {
		t.write("")
	}
}

// line writes text wrapped to Width: the first line after first, the rest
// after rest.
func (t *transcript) line(first, rest, text string) {
	for i, l := range wrap(text, Width-utf8.RuneCountInString(first), Width-utf8.RuneCountInString(rest)) {
		if i == 0 {
			t.write(strings.TrimRight(first+l, " "))
		} else {
			t.write(strings.TrimRight(rest+l, " "))
		}
	}
}

func (t *transcript) rule(title string) {
	s := "── " + title + " "
	if n := Width - utf8.RuneCountInString(s); n > 0 {
		s += strings.Repeat("─", n)
	}
	t.write(s)
}

func (t *transcript) header(les *Lesson) {
	title := les.Title
	if les.Minutes > 0 {
		title += fmt.Sprintf(" (%d min)", les.Minutes)
	}
	t.rule("Lesson " + les.ID)
	t.line("", "", title)
	if les.Summary != "" {
		t.line("", "", les.Summary)
	}
	t.line("Concepts: ", "  ", strings.Join(les.Concepts, ", "))
}

// events prints what the lab's timeline said since the last call: each
// command ($), what it said, and what the broker reported (·) about the
// lesson's own topics and the nodes. skipExpects leaves out the expect
// commands an expect block ran, which the block prints itself.
func (t *transcript) events(skipExpects bool) {
	for {
		select {
		case e, ok := <-t.sub.C:
			if !ok {
				return
			}
			t.event(e, skipExpects)
		default:
			return
		}
	}
}

func (t *transcript) event(e lab.Event, skipExpects bool) {
	if e.Detail {
		return
	}
	text := strings.TrimSpace(e.Text)
	switch e.Kind {
	case lab.EventCommand:
		if skipExpects && isExpect(text) {
			return
		}
		t.line("  $ ", "      ", text)
	case lab.EventExpect:
		if skipExpects {
			return
		}
		t.line("    ", "      ", text)
	case lab.EventError:
		t.line("    error: ", "      ", text)
	case lab.EventBroker:
		if e.Broker != nil && (e.Broker.Group == "controller" || strings.HasPrefix(e.Broker.Group, "__")) ||
			strings.Contains(text, "__consumer_offsets") {
			return
		}
		t.line("    · ", "      ", text)
	default:
		t.line("    ", "      ", text)
	}
}

// flatten joins a short Markdown text into one line.
func flatten(s string) string { return strings.Join(strings.Fields(s), " ") }

var (
	listRE  = regexp.MustCompile(`^(\s*)([-*+]|\d+[.)])\s+`)
	fenceLn = regexp.MustCompile("^\\s{0,3}(```|~~~)")
)

// markdown writes narrative for a terminal: paragraphs and list items
// wrapped to Width, tables with their columns lined up, code as written.
func (t *transcript) markdown(md string) {
	lines := strings.Split(md, "\n")
	var para []string
	prefix, rest := "", ""
	flush := func() {
		if len(para) > 0 {
			t.line(prefix, rest, strings.Join(para, " "))
		}
		para, prefix, rest = nil, "", ""
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		trim := strings.TrimSpace(l)
		switch {
		case fenceLn.MatchString(l):
			flush()
			mark := strings.TrimSpace(l)[:3]
			t.write("    " + strings.TrimSpace(l))
			for i++; i < len(lines); i++ {
				t.write(strings.TrimRight("    "+lines[i], " "))
				if strings.HasPrefix(strings.TrimSpace(lines[i]), mark) {
					break
				}
			}
		case strings.HasPrefix(trim, "|"):
			flush()
			var rows []string
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				rows = append(rows, strings.TrimSpace(lines[i]))
			}
			i--
			for _, row := range alignTable(rows) {
				t.write("  " + row)
			}
		case trim == "":
			flush()
			t.blank()
		case strings.HasPrefix(trim, "#"):
			flush()
			t.line("", "", trim)
		case strings.HasPrefix(trim, ">"):
			flush()
			prefix, rest = "  > ", "  > "
			para = append(para, strings.TrimSpace(strings.TrimPrefix(trim, ">")))
		case listRE.MatchString(l) && !(len(para) > 0 && interruptsNot(l)):
			flush()
			m := listRE.FindStringSubmatch(l)
			prefix = m[1] + m[2] + " "
			rest = strings.Repeat(" ", utf8.RuneCountInString(prefix))
			para = append(para, strings.TrimSpace(l[len(m[0]):]))
		default:
			para = append(para, trim)
		}
	}
	flush()
}

// interruptsNot reports whether a list-like line continues a paragraph
// instead: as in CommonMark, only a bullet or "1." starts a list there.
func interruptsNot(l string) bool {
	m := listRE.FindStringSubmatch(l)
	marker := m[2]
	return marker[0] >= '0' && marker[0] <= '9' && strings.TrimRight(marker, ".)") != "1"
}

// alignTable pads a Markdown table's cells so its columns line up.
func alignTable(rows []string) []string {
	cells := make([][]string, len(rows))
	var widths []int
	for i, r := range rows {
		r = strings.TrimSuffix(strings.TrimPrefix(r, "|"), "|")
		for j, c := range strings.Split(r, "|") {
			c = strings.TrimSpace(c)
			cells[i] = append(cells[i], c)
			if j >= len(widths) {
				widths = append(widths, 0)
			}
			if n := utf8.RuneCountInString(c); n > widths[j] && !isRuleCell(c) {
				widths[j] = n
			}
		}
	}
	out := make([]string, len(rows))
	for i, row := range cells {
		var b strings.Builder
		b.WriteString("|")
		for j, w := range widths {
			c := ""
			if j < len(row) {
				c = row[j]
			}
			if isRuleCell(c) {
				b.WriteString(strings.Repeat("-", w+2) + "|")
				continue
			}
			b.WriteString(" " + c + strings.Repeat(" ", w-utf8.RuneCountInString(c)) + " |")
		}
		out[i] = b.String()
	}
	return out
}

func isRuleCell(c string) bool {
	c = strings.Trim(c, ":")
	return c != "" && strings.Trim(c, "-") == ""
}

// wrap breaks text into lines of at most width characters (the first line
// firstWidth). A line of text that fits is kept as it is, spaces and all,
// so the columns of a table stay aligned; a longer one breaks at spaces,
// and a word longer than a whole line is cut.
func wrap(text string, firstWidth, width int) []string {
	firstWidth, width = max(firstWidth, 10), max(width, 10)
	var lines []string
	limit := firstWidth
	for _, para := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		para = strings.TrimRight(para, " ")
		if utf8.RuneCountInString(para) <= limit {
			lines = append(lines, para)
			limit = width
			continue
		}
		cur, curLen := "", 0
		for _, w := range strings.Fields(para) {
			for utf8.RuneCountInString(w) > limit && curLen == 0 {
				r := []rune(w)
				lines = append(lines, string(r[:limit]))
				w, limit = string(r[limit:]), width
			}
			n := utf8.RuneCountInString(w)
			switch {
			case n == 0:
			case curLen == 0:
				cur, curLen = w, n
			case curLen+1+n <= limit:
				cur += " " + w
				curLen += 1 + n
			default:
				lines = append(lines, cur)
				cur, curLen, limit = "", 0, width
				for n > limit {
					r := []rune(w)
					lines = append(lines, string(r[:limit]))
					w = string(r[limit:])
					n = len(r) - limit
				}
				cur, curLen = w, n
			}
		}
		if curLen > 0 {
			lines = append(lines, cur)
		}
		limit = width
	}
	if len(lines) == 0 {
		return []string{""}
	}
	return lines
}
