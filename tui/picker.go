package tui

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/lessons/challenge"
	"github.com/mqlab/mqlab/tui/draw"
)

// PickerKeyMap is every key of the lesson picker, declared once.
type PickerKeyMap struct {
	Up, Down, Top, Bottom key.Binding
	Open, StartOver       key.Binding
	Help, Quit            key.Binding
}

// DefaultPickerKeyMap returns the picker's keys.
func DefaultPickerKeyMap() *PickerKeyMap {
	return &PickerKeyMap{
		Up:        key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/↓", "choose")),
		Down:      key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓", "next")),
		Top:       key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home/end", "first/last")),
		Bottom:    key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end", "last")),
		Open:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		StartOver: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "start over at step 1")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:      key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// ShortHelp is the help bar.
func (k *PickerKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Up, k.Open, k.StartOver, k.Help, k.Quit}
}

// FullHelp is the '?' screen.
func (k *PickerKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Top, k.Open}, {k.StartOver, k.Help, k.Quit}}
}

// pickerEntry is one row of the picker: a lesson, a challenge, or the
// sandbox (neither).
type pickerEntry struct {
	les *lessons.Lesson
	ch  *challenge.Challenge
	num string
}

// sandbox says whether the entry is the sandbox.
func (e pickerEntry) sandbox() bool { return e.les == nil && e.ch == nil }

// picker is the opening screen: the curriculum, with each lesson's
// progress, and the sandbox.
type picker struct {
	st       *draw.Styles
	keys     *PickerKeyMap
	help     help.Model
	showHelp bool

	entries  []pickerEntry
	progress lessons.Progress
	store    string // where progress is kept, for the help; "" when it is not
	sel, off int
	w, h     int
	status   string
	statusOK bool
	asking   bool // the status is a question for y or n
	// rowEntry is, for each row of the list as last drawn, the entry it
	// shows, or -1: a click reads it.
	rowEntry []int
}

// pickerAction is what a key asks of the app.
type pickerAction int

const (
	pickNothing pickerAction = iota
	pickOpen
	pickStartOver
	pickQuit
)

func newPicker(st *draw.Styles, les []*lessons.Lesson, progress lessons.Progress, store string) *picker {
	p := &picker{st: st, keys: DefaultPickerKeyMap(), store: store, progress: progress}
	p.help = help.New()
	p.help.Styles = st.Help
	for i, l := range les {
		num := strconv.Itoa(i + 1)
		stem := strings.TrimSuffix(path.Base(l.File), ".md")
		if n, _, ok := strings.Cut(stem, "-"); ok {
			if _, err := strconv.Atoi(n); err == nil {
				num = strings.TrimLeft(n, "0")
			}
		}
		p.entries = append(p.entries, pickerEntry{les: l, num: num})
	}
	for _, c := range challenge.All() {
		p.entries = append(p.entries, pickerEntry{ch: c, num: "c" + strconv.Itoa(c.Level)})
	}
	p.entries = append(p.entries, pickerEntry{}) // the sandbox
	p.sel = p.resumeAt()
	p.sync()
	return p
}

// dropChallenges takes the challenges out of the list: they run a
// program of the learner's own, which a session with only ssh cannot.
func (p *picker) dropChallenges() {
	p.entries = slices.DeleteFunc(p.entries, func(e pickerEntry) bool { return e.ch != nil })
	p.sel = p.resumeAt()
	p.sync()
}

// resumeAt is the entry to select on opening: the lesson worked on last
// and not finished, else the first one not finished.
func (p *picker) resumeAt() int {
	best, at := -1, time.Time{}
	for i, e := range p.entries {
		if e.les == nil {
			continue
		}
		if lp := p.progress.Lessons[e.les.ID]; lp != nil && !lp.Finished && lp.Updated.After(at) {
			best, at = i, lp.Updated
		}
	}
	if best >= 0 {
		return best
	}
	for i, e := range p.entries {
		if e.les != nil && !p.finished(e.les) {
			return i
		}
	}
	return 0
}

// nextName names the lesson after l in the list, as its finish offers
// it: "5 · Idempotency keys"; "" after the last.
func (p *picker) nextName(l *lessons.Lesson) string {
	for i, e := range p.entries {
		if e.les == l {
			for _, n := range p.entries[i+1:] {
				if n.les != nil {
					return n.num + " · " + n.les.Title
				}
			}
		}
	}
	return ""
}

// moveOnFrom moves the cursor past l once it is finished: to the next
// lesson not finished after it, else the first not finished at all.
func (p *picker) moveOnFrom(l *lessons.Lesson) {
	if l == nil || !p.finished(l) {
		return
	}
	at := -1
	for i, e := range p.entries {
		if e.les == l {
			at = i
		}
	}
	for k := 1; k <= len(p.entries); k++ {
		i := (at + k) % len(p.entries)
		if e := p.entries[i]; e.les != nil && !p.finished(e.les) {
			p.sel = i
			p.sync()
			return
		}
	}
}

func (p *picker) finished(l *lessons.Lesson) bool {
	lp := p.progress.Lessons[l.ID]
	return lp != nil && lp.Finished
}

// stepOf is the step (from 1) the learner left a lesson at, or 0 when
// they have not started it or finished it.
func (p *picker) stepOf(l *lessons.Lesson) int {
	lp := p.progress.Lessons[l.ID]
	if lp == nil || lp.Finished && lp.Step == 0 || len(l.Steps) == 0 {
		return 0
	}
	return min(lp.Step, len(l.Steps)-1) + 1
}

// setProgress shows progress read again (after a lesson).
func (p *picker) setProgress(pr lessons.Progress) {
	p.progress = pr
	p.sync()
}

func (p *picker) setStatus(s string, ok bool) { p.status, p.statusOK, p.asking = s, ok, false }

// ask shows a question for y or n where the status goes.
func (p *picker) ask(q string) { p.status, p.statusOK, p.asking = q, true, true }

// sync enables the keys that mean something for the selected entry.
func (p *picker) sync() {
	e := p.selected()
	p.keys.StartOver.SetEnabled(e.les != nil && p.stepOf(e.les) > 1)
}

func (p *picker) selected() pickerEntry { return p.entries[p.sel] }

func (p *picker) setSize(w, h int) {
	p.w, p.h = w, h
	p.help.Width = w
}

// update handles a key and says what the app should do.
func (p *picker) update(msg tea.KeyMsg) pickerAction {
	k := p.keys
	if p.showHelp && !key.Matches(msg, k.Quit) {
		p.showHelp = false
		return pickNothing
	}
	switch {
	case key.Matches(msg, k.Quit):
		return pickQuit
	case key.Matches(msg, k.Help):
		p.showHelp = true
	case key.Matches(msg, k.Up):
		p.sel = max(0, p.sel-1)
	case key.Matches(msg, k.Down):
		p.sel = min(len(p.entries)-1, p.sel+1)
	case key.Matches(msg, k.Top):
		p.sel = 0
	case key.Matches(msg, k.Bottom):
		p.sel = len(p.entries) - 1
	case key.Matches(msg, k.Open):
		return p.open()
	case key.Matches(msg, k.StartOver):
		return pickStartOver
	}
	p.sync()
	return pickNothing
}

// View draws the picker at its size.
func (p *picker) View() string {
	st := p.st
	w, h := p.w, p.h
	if w < MinWidth || h < MinHeight {
		return tooSmall(w, h)
	}
	// The status wraps, up to three rows: a notice such as how students
	// join a served lab is read in full.
	var status []string
	switch {
	case p.status == "" && p.selected().ch != nil:
		status = []string{st.Faint.Render(draw.Fit("enter says how to run the challenge", w))}
	case p.status == "":
		status = []string{st.Faint.Render(draw.Fit("enter opens the lesson on a live three-node cluster", w))}
	case p.asking:
		for _, s := range draw.Wrap("? "+p.status, w) {
			status = append(status, st.Warn.Render(draw.Fit(s, w)))
		}
	case p.statusOK:
		for _, s := range draw.Wrap(p.status, w) {
			status = append(status, st.Muted.Render(draw.Fit(s, w)))
		}
	default:
		for _, s := range draw.Wrap(draw.SymFail+" "+p.status, w) {
			status = append(status, st.Fail.Render(draw.Fit(s, w)))
		}
	}
	status = status[:min(len(status), 3)]
	rows := []string{p.header(w)}
	body := h - 1 - len(status) // the header, the status, the help row
	if p.showHelp {
		rows = append(rows, strings.Split(draw.Frame(st, []string{"Help"}, 0, true, p.helpView(w-2, body-3), w, body-1), "\n")...)
	} else {
		// The details take what they need, up to a third of the screen;
		// the list the rest.
		title, detail := p.detail(w-2, max(3, h/3-2))
		detailH := len(detail) + 2
		listH := body - detailH - 1
		rows = append(rows, strings.Split(draw.Frame(st, []string{"Lessons"}, 0, true, p.list(w-2, listH-2), w, listH), "\n")...)
		rows = append(rows, strings.Split(draw.Frame(st, []string{title}, 0, false, draw.Block(detail, w-2, detailH-2), w, detailH), "\n")...)
	}
	rows = append(rows, status...)
	rows = append(rows, draw.Fit(p.help.ShortHelpView(p.keys.ShortHelp()), w))
	return strings.Join(rows, "\n")
}

func (p *picker) header(w int) string {
	st := p.st
	var l draw.Line
	l.Add(&st.Accent, "mqlab")
	l.Add(&st.Faint, " │ ")
	l.Add(&st.Header, "Lessons")
	done, all := 0, 0
	for _, e := range p.entries {
		if e.les != nil {
			all++
			if p.finished(e.les) {
				done++
			}
		}
	}
	right := fmt.Sprintf("%d of %d done", done, all)
	l.Pad(w - draw.Width(right))
	l.Add(&st.Muted, right)
	return l.Fit(w)
}

// list draws the entries, scrolled so the selected one shows: number,
// title, concepts (when there is room), minutes, and done or the step
// the learner is at.
func (p *picker) list(w, h int) string {
	st := p.st
	cw := p.listColumns(w)
	var rows []string
	var entryOf []int
	selRow := 0
	for i, e := range p.entries {
		first := e.ch != nil && (i == 0 || p.entries[i-1].ch == nil)
		if e.sandbox() || first {
			rows = append(rows, "")
			entryOf = append(entryOf, -1)
		}
		if first {
			rows = append(rows, draw.Fit("  "+st.Muted.Render("Challenges")+st.Faint.Render(" — your own consumer, in any language, under real crashes"), w))
			entryOf = append(entryOf, -1)
		}
		entryOf = append(entryOf, i)
		if i == p.sel {
			selRow = len(rows)
		}
		rows = append(rows, p.entryRow(i, cw, w))
	}
	// Keep the selected row in view, with a row of context when there is one.
	if selRow-1 < p.off {
		p.off = max(0, selRow-1)
	}
	if selRow+1 >= p.off+h {
		p.off = min(selRow+2-h, max(0, len(rows)-h))
	}
	out, off := draw.WindowNote(rows, p.off, h, st, "(↑/↓)")
	p.off = off
	p.rowEntry = append(p.rowEntry[:0], entryOf[off:off+len(out)]...)
	if off > 0 && len(out) > 1 { // the rows WindowNote wrote its notes on
		p.rowEntry[0] = -1
	}
	if off+len(out) < len(rows) && len(out) > 0 {
		p.rowEntry[len(out)-1] = -1
	}
	return draw.Block(out, w, h)
}

// listColumns are the widths of the list's columns at width w: the
// number, the title, the concepts (0 when they do not fit), the minutes
// and the state.
type listColumns struct{ num, title, concepts, min, state int }

func (p *picker) listColumns(w int) listColumns {
	cw := listColumns{num: 2, min: 6 /* "15 min" */, state: 6 /* "✓ done" */}
	for _, e := range p.entries {
		cw.num = max(cw.num, draw.Width(e.num))
		if e.les != nil {
			cw.title = max(cw.title, draw.Width(e.les.Title))
			if p.stepOf(e.les) > 0 {
				cw.state = max(cw.state, draw.Width(fmt.Sprintf("▸ step %d/%d", p.stepOf(e.les), len(e.les.Steps))))
			}
		}
	}
	rest := w - 2 - cw.num - 2 - 2 - cw.min - 2 - cw.state - 1
	if rest-cw.title >= 24 {
		cw.concepts = rest - cw.title - 2
	} else {
		cw.title = min(cw.title, rest)
	}
	return cw
}

// entryRow draws entry i of the list: a lesson, a challenge or the
// sandbox.
func (p *picker) entryRow(i int, cw listColumns, w int) string {
	st := p.st
	e := p.entries[i]
	var l draw.Line
	mark, ms := "  ", &st.Text
	if i == p.sel {
		mark, ms = draw.SymSelected+" ", &st.Accent
	}
	l.Add(ms, mark)
	if e.ch != nil {
		p.challengeRow(&l, e, i == p.sel, cw.num, cw.title, cw.concepts)
		return l.Fit(w)
	}
	if e.les == nil {
		l.Add(nil, draw.Spaces(cw.num+2))
		l.Add(&st.Bold, "Sandbox")
		l.Add(&st.Muted, " — a free lab with no lesson")
		return l.Fit(w)
	}
	p.numberAndTitle(&l, e.num, e.les.Title, i == p.sel, cw.num, cw.title)
	if cw.concepts > 0 {
		l.Add(&st.Faint, draw.Cut(strings.Join(e.les.Concepts, " · "), cw.concepts))
		l.Pad(2 + cw.num + 2 + cw.title + 2 + cw.concepts + 2)
	}
	if e.les.Minutes > 0 {
		m := fmt.Sprintf("%d min", e.les.Minutes)
		l.Add(&st.Muted, draw.Spaces(cw.min-draw.Width(m))+m)
	} else {
		l.Add(nil, draw.Spaces(cw.min))
	}
	l.Add(nil, "  ")
	switch n := p.stepOf(e.les); {
	case p.finished(e.les) && n <= 1:
		l.Add(&st.OK, draw.SymOK+" done")
	case n > 0:
		l.Add(&st.Warn, fmt.Sprintf("▸ step %d/%d", n, len(e.les.Steps)))
	}
	return l.Fit(w)
}

// numberAndTitle draws an entry's number and title after its mark, the
// title bold when selected, and pads to the column after them.
func (p *picker) numberAndTitle(l *draw.Line, num, title string, selected bool, numW, titleW int) {
	st := p.st
	l.Add(&st.Muted, draw.Spaces(numW-draw.Width(num))+num+"  ")
	ts := &st.Text
	if selected {
		ts = &st.Bold
	}
	l.Add(ts, draw.Cut(title, titleW))
	l.Pad(2 + numW + 2 + titleW + 2)
}

// pickerListTop is the screen row of the list's first entry: below the
// header and the frame's top border.
const pickerListTop = 2

// mouse handles a click or the wheel: a click selects a lesson, a click on
// the selected one opens it; the wheel moves the selection.
func (p *picker) mouse(msg tea.MouseMsg) pickerAction {
	if p.showHelp || p.w < MinWidth || p.h < MinHeight {
		return pickNothing
	}
	switch {
	case msg.Button == tea.MouseButtonWheelUp:
		p.sel = max(0, p.sel-1)
	case msg.Button == tea.MouseButtonWheelDown:
		p.sel = min(len(p.entries)-1, p.sel+1)
	case msg.Button == tea.MouseButtonLeft && msg.Action == tea.MouseActionPress:
		row := msg.Y - pickerListTop
		if row < 0 || row >= len(p.rowEntry) || msg.X < 1 || msg.X >= p.w-1 || p.rowEntry[row] < 0 {
			return pickNothing
		}
		if p.rowEntry[row] == p.sel {
			return p.open()
		}
		p.sel = p.rowEntry[row]
	default:
		return pickNothing
	}
	p.sync()
	return pickNothing
}

// detail is the selected entry's box: its title, then its summary, its
// concepts and where the learner stands, in at most room rows; the
// summary gives way first.
func (p *picker) detail(w, room int) (string, []string) {
	st := p.st
	e := p.selected()
	k := p.keys
	if e.ch != nil {
		return p.challengeDetail(e.ch, w)
	}
	if e.les == nil {
		text := "Three nodes and a topic orders of three partitions, nothing scripted: kill, isolate and heal with single keys, or type any command of the lab at the : prompt. Progress is not kept."
		var rows []string
		for _, s := range draw.Wrap(text, w) {
			rows = append(rows, st.Text.Render(s))
		}
		return "Sandbox", rows
	}
	l := e.les
	var summary []string
	if s := draw.OneLine(l.Summary); s != "" {
		summary = draw.WrapRuns(draw.Inline(st, s), w, "")
	}
	var c draw.Line
	c.Add(&st.Muted, "Concepts: ")
	c.Add(&st.Text, strings.Join(l.Concepts, " · "))
	var pr draw.Line
	n := p.stepOf(l)
	switch {
	case n > 1:
		pr.Add(&st.Warn, fmt.Sprintf("▸ You are at step %d of %d: ", n, len(l.Steps)))
		pr.Add(&st.Text, fmt.Sprintf("%s goes on from there, %s starts over.", k.Open.Help().Key, k.StartOver.Help().Key))
	case p.finished(l):
		pr.Add(&st.OK, draw.SymOK+" Done. ")
		pr.Add(&st.Text, fmt.Sprintf("%s plays it again from step 1.", k.Open.Help().Key))
	default:
		pr.Add(&st.Text, fmt.Sprintf("%d steps", len(l.Steps)))
		if l.Minutes > 0 {
			pr.Add(&st.Text, fmt.Sprintf(", about %d minutes", l.Minutes))
		}
		pr.Add(&st.Text, fmt.Sprintf(". %s opens it.", k.Open.Help().Key))
	}
	if keep := max(0, room-2); len(summary) > keep {
		summary = summary[:keep]
		if keep > 0 {
			summary[keep-1] = draw.Cut(summary[keep-1], w-1) + st.Text.Render("…")
		}
	}
	rows := append(summary, c.Fit(w))
	// The steps, when there is room for all of them: ✓ those done, ▸ the
	// one the learner is at.
	runs := []draw.Run{{Text: "Steps:", Style: &st.Muted}}
	for i, stp := range l.Steps {
		mark, ms := "", &st.Text
		switch {
		case p.finished(l) && n <= 1 || i+1 < n:
			mark, ms = draw.SymOK+" ", &st.OK
		case i+1 == n:
			mark, ms = "▸ ", &st.Warn
		}
		sep := " · "
		if i == 0 {
			sep = " "
		}
		runs = append(runs, draw.Run{Text: sep, Style: &st.Faint}, draw.Run{Text: mark + strconv.Itoa(i+1) + " " + stp.Title, Style: ms})
	}
	if steps := draw.WrapRuns(runs, w, "       "); len(l.Steps) > 0 && len(rows)+len(steps)+1 <= room {
		rows = append(rows, steps...)
	}
	return l.Title, append(rows, pr.Fit(w))
}

func (p *picker) helpView(w, h int) string {
	st := p.st
	hm := p.help
	hm.Width = w
	rows := strings.Split(hm.FullHelpView(p.keys.FullHelp()), "\n")
	rows = append(rows, "")
	text := []string{
		"Each lesson runs on a real three-node cluster inside mqlab, at classroom speed, so that you can watch an election happen.",
		"On the lab screen, backspace comes back here; n and p move between steps; ? lists every key. q quits from anywhere.",
		"With a mouse, a click selects a lesson and a second click opens it.",
	}
	if p.store != "" {
		text = append(text, "Your progress — the step you are at, your answers, the lessons you finished — is kept in "+p.store+".")
	}
	text = append(text, "? or esc closes this.")
	for _, t := range text {
		for _, s := range draw.Wrap(t, w) {
			rows = append(rows, st.Text.Render(s))
		}
		rows = append(rows, "")
	}
	return draw.Block(rows, w, h)
}

// tooSmall is the notice drawn instead of a screen below 80×24.
func tooSmall(w, h int) string {
	msg := []string{
		"mqlab needs a terminal of at least 80×24.",
		fmt.Sprintf("This one is %d×%d: make the window larger", w, h),
		"or the font smaller. q quits.",
	}
	if w <= 0 || h <= 0 {
		return strings.Join(msg, "\n")
	}
	out := make([]string, h)
	top := max(0, (h-len(msg))/2)
	for i := range out {
		j := i - top
		if j >= 0 && j < len(msg) {
			s := draw.Cut(msg[j], w)
			out[i] = draw.Spaces(max(0, (w-draw.Width(s))/2)) + s
		}
	}
	return strings.Join(out, "\n")
}
