package lessons

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mqlab/mqlab/lab"
)

// Width is the transcript's line width: it reads on an 80-column terminal.
const Width = 80

// PlayHeadless plays a whole lesson unattended and writes a transcript to
// w: the narrative wrapped to Width, each command with what it said and
// what the broker reported, every task done by typing its do commands,
// every prediction with its choices and answer, every expectation with the
// value the lab showed and ✓ or ✗. It drives the same Player as the
// screen, with Auto on.
//
// It plays every step even when an expectation fails, and then returns
// *FailedError; a command that cannot run stops it with *CommandError.
func PlayHeadless(ctx context.Context, les *Lesson, w io.Writer, opts Options) error {
	t := &transcript{w: w, les: les}
	p, err := NewPlayer(les, PlayerOptions{Lab: opts.Lab, Timing: opts.Timing, Nodes: opts.Nodes,
		Sandbox: true, Auto: true, Observe: t.note})
	if err != nil {
		return err
	}
	defer p.Close()
	t.sub = p.Lab().Subscribe(1 << 16)
	defer t.sub.Close()
	start := time.Now()

	t.header(les)
	var failed []ExpectResult
	_, err = p.Goto(ctx, 0)
	for {
		st := p.State()
		if st.Status == StatusBroken {
			if err == nil {
				err = st.Err
			}
			return err
		}
		if err != nil {
			return err
		}
		failed = append(failed, st.Failed...)
		if st.Status == StatusFinished || opts.FailFast && len(failed) > 0 {
			break
		}
		_, err = p.Next(ctx)
	}
	t.events(false)
	t.blank()
	took := time.Since(start).Round(10 * time.Millisecond)
	if d := t.sub.Dropped(); d > 0 {
		t.line("", "", fmt.Sprintf("(%d lab events were too many to print)", d))
	}
	if len(failed) > 0 {
		t.rule(fmt.Sprintf("✗ %d of %d expectations failed (%v)", len(failed), t.expects, took))
		return &FailedError{Failed: failed}
	}
	t.rule(fmt.Sprintf("✓ every expectation held: %d of %d (%v)", t.expects, t.expects, took))
	return t.err
}

// transcribing is observe, and a transcript to w of what the player
// reports beside it when w is set: start it once the player is made, and
// call what start returns when the play ends. With w nil the transcript
// is nil, and starting it does nothing.
func transcribing(les *Lesson, w io.Writer, observe func(Note)) (func(Note), *transcript) {
	if w == nil {
		return observe, nil
	}
	t := &transcript{w: w, les: les}
	return func(n Note) { t.note(n); observe(n) }, t
}

// start writes the header and follows p's lab; what it returns writes the
// events not yet written and lets the lab go.
func (t *transcript) start(p *Player) (end func()) {
	if t == nil {
		return func() {}
	}
	t.sub = p.Lab().Subscribe(1 << 16)
	t.header(t.les)
	return func() {
		t.events(false)
		t.sub.Close()
	}
}

// note writes what the player reports, as it plays.
func (t *transcript) note(n Note) {
	ev := n.Event
	switch n.Kind {
	case NoteStep:
		t.blank()
		t.rule(fmt.Sprintf("Step %d of %d: %s", n.Step+1, len(t.les.Steps), t.les.Steps[n.Step].Title))
	case NoteBroken:
		t.events(false)
		t.line("  ", "    ", "✗ "+n.Err.Error())
	case NoteTaskDone:
		t.events(false)
	case NoteReveal:
		rv := n.Reveal
		if rv.Predict.Number != nil {
			t.line("    Answer: ", "    ", rv.Answer)
		} else {
			t.line("    Answer: ", "    ", fmt.Sprintf("%c) %s", 'a'+rv.Predict.Answer, flatten(rv.Answer)))
		}
		t.line("    Why: ", "    ", flatten(rv.Why))
	case NoteBlock:
		switch ev.Kind {
		case KindText:
			t.blank()
			t.markdown(ev.Text)
		case KindLab:
			t.blank()
			t.events(false)
			for _, c := range ev.Commands {
				if isExpect(c.Text) {
					t.expects++
				}
			}
		case KindTask:
			t.blank()
			t.line("  ▶ Task: ", "    ", flatten(ev.Text))
			t.line("    ", "    ", ev.Task.Hint())
			t.line("    ", "    ", "(headless: typing it for you)")
			t.events(false)
		case KindPredict:
			t.blank()
			t.line("  ? Predict: ", "    ", flatten(ev.Text))
			for j, c := range ev.Choices {
				t.line(fmt.Sprintf("      %c) ", 'a'+j), "         ", flatten(c))
			}
			if ev.Predict != nil && ev.Predict.Number != nil {
				t.line("      ", "      ", "(a number)")
			}
		case KindExpect:
			t.blank()
			t.events(true)
			for _, e := range ev.Expects {
				t.expects++
				t.line("  ", "      ", e.String())
			}
		}
	}
}

func isExpect(text string) bool {
	return strings.HasPrefix(strings.TrimSpace(text), "expect ")
}

// transcript writes wrapped lines; the first write error sticks.
type transcript struct {
	w       io.Writer
	les     *Lesson
	sub     *lab.Subscription
	err     error
	gap     bool // the last line written was blank
	expects int  // expectations written so far

	run       messageRun      // per-message broker events not written yet
	tables    map[string]bool // CREATE TABLE statements written already
	epochSaid bool            // the epoch has been glossed
}

func (t *transcript) write(s string) {
	t.flushRun()
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
		if e.Internal() {
			return
		}
		if e.Broker != nil && e.Broker.MsgID != "" {
			if t.run.add(text) {
				return
			}
			t.flushRun()
			t.run.add(text)
			return
		}
		t.line("    · ", "      ", text)
		if !t.epochSaid && epochEventRE.MatchString(text) {
			t.epochSaid = true
			t.line("      ", "      ", "(a partition's epoch numbers its leaders: each new leader takes the next one)")
		}
	default:
		if e.Service != nil && strings.Contains(text, "CREATE TABLE") {
			// A service's schema is the same each time it starts: once a
			// lesson is enough.
			if t.tables == nil {
				t.tables = map[string]bool{}
			}
			if t.tables[text] {
				return
			}
			t.tables[text] = true
		}
		t.line("    ", "      ", text)
	}
}

// epochEventRE finds a broker event that names a leader's epoch.
var epochEventRE = regexp.MustCompile(`\bleads \S+ at epoch \d+`)

// flushRun writes the per-message events held back, as one line.
func (t *transcript) flushRun() {
	if t.run.n == 0 {
		return
	}
	text := t.run.String()
	t.run = messageRun{}
	t.line("    · ", "      ", text)
}

// messageRun is a run of per-message events that read alike but for
// their numbers ("receipts: m1 (shop-1) sent", "receipts: m2 (shop-2)
// sent"); a transcript writes it as one line with ranges: "receipts:
// m1–m2 (shop-1–2) sent (2 events)". The screen's timeline keeps each.
type messageRun struct {
	shape string   // the text with each number as #
	parts []string // the text around the numbers
	first []string // the numbers of the first event
	last  []string // and of the last
	n     int
}

var numberRE = regexp.MustCompile(`\d+`)

// add takes text into the run if it reads like the run's events, or
// starts the run if it is empty; false when it belongs to a new run.
func (r *messageRun) add(text string) bool {
	shape := numberRE.ReplaceAllString(text, "#")
	nums := numberRE.FindAllString(text, -1)
	switch {
	case r.n == 0:
		*r = messageRun{shape: shape, parts: numberRE.Split(text, -1), first: nums, last: nums, n: 1}
		return true
	case shape == r.shape:
		r.last, r.n = nums, r.n+1
		return true
	}
	return false
}

func (r messageRun) String() string {
	if r.n == 1 {
		var b strings.Builder
		for i, p := range r.parts {
			b.WriteString(p)
			if i < len(r.first) {
				b.WriteString(r.first[i])
			}
		}
		return b.String()
	}
	var b strings.Builder
	for i, p := range r.parts {
		b.WriteString(p)
		if i >= len(r.first) {
			continue
		}
		b.WriteString(r.first[i])
		if r.last[i] != r.first[i] {
			// "m1–m5": the letters right before the number name it again.
			lead := p[len(strings.TrimRightFunc(p, unicode.IsLetter)):]
			b.WriteString("–" + lead + r.last[i])
		}
	}
	fmt.Fprintf(&b, " (%d events)", r.n)
	return b.String()
}

// flatten joins a short Markdown text into one line.
func flatten(s string) string { return strings.Join(strings.Fields(s), " ") }

// markdown writes narrative for a terminal: paragraphs and list items
// wrapped to Width, tables with their columns lined up, code as written.
func (t *transcript) markdown(md string) {
	for _, b := range ReadMarkdown(md) {
		if b.Gap {
			t.blank()
		}
		switch b.Kind {
		case MDCode:
			if b.Fence != "" {
				t.write("    " + b.Fence)
			}
			for _, r := range b.Rows {
				if utf8.RuneCountInString("    "+r) <= Width {
					t.write(strings.TrimRight("    "+r, " "))
					continue
				}
				// Too long for the transcript: break at spaces, the rest
				// indented under the line.
				lead := "    " + r[:len(r)-len(strings.TrimLeft(r, " "))]
				t.line(lead, lead+"    ", strings.TrimLeft(r, " "))
			}
			if b.Close != "" {
				t.write("    " + b.Close)
			}
		case MDTable:
			for _, row := range alignTable(b.Rows) {
				t.write("  " + row)
			}
		case MDHeading:
			t.line("", "", strings.Repeat("#", b.Level)+" "+b.Text)
		case MDQuote:
			t.line("  > ", "  > ", b.Text)
		case MDItem:
			prefix := b.Indent + b.Marker + " "
			t.line(prefix, strings.Repeat(" ", utf8.RuneCountInString(prefix)), b.Text)
		default:
			t.line("", "", b.Text)
		}
	}
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
