package panel

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/view"
)

// Lesson draws the open lesson's step: where it stands, then the
// step as it has played — narrative, the lab's commands, tasks, the
// prediction, the expectations with ✓/✗ — in the lesson's order, and at
// the bottom, always in view, what the step waits for and any notice.
//
// New content is brought into view without skipping what the learner has
// not read: the view scrolls down to show what just played, but never past
// its first row; the learner's own scrolling holds until more plays.
type Lesson struct {
	ctx  *Context
	w, h int
	scrolled
	// Markdown rendering is the costly part: keep it per block text.
	mdW     int
	mdCache map[string][]string
	// What was on screen at the last draw, to tell what is new, and the
	// block from which the step has played since the learner last acted.
	seenStep   int
	seenBlocks int
	seenStatus lessons.Status
	seenH      int
	seenActs   int
	anchor     int
	// openBelow: the open task, or the end of the open question, is
	// below the rows in view, so the last row points down to it rather
	// than up.
	openBelow bool
}

func NewLesson(ctx *Context) *Lesson { return &Lesson{ctx: ctx, scrolled: scrolled{keys: ctx.Scroll}} }

func (p *Lesson) Title() string    { return "Lesson" }
func (p *Lesson) SetSize(w, h int) { p.w, p.h = w, h }

func (p *Lesson) View() string {
	st := p.ctx.Styles
	ls := p.ctx.State.Lesson
	if ls == nil {
		rows := []string{st.Header.Render(draw.Cut(p.ctx.Title, p.w))}
		rows = append(rows, "")
		text := "No lesson is open: the lab is yours. Select a node with ←/→ or 1–9 and press k to kill it, r to restart it. Type : for a command (try :help)."
		if p.ctx.About != "" {
			text = p.ctx.About
		}
		if p.ctx.Follow {
			text = "You follow the teacher's lab: it changes as the teacher works, and only the teacher changes it. [ and ] step back and forward through what happened; when the teacher asks a question, answer it with its letter."
		}
		if p.ctx.ReadOnly {
			text = "A recording plays here as it happened; nothing in it can be changed. It opens paused at its start: space plays and pauses it, + and - change its speed, ] and [ step one event forward and back."
		}
		if p.ctx.Keys.Lessons.Enabled() {
			text += " " + p.ctx.Keys.Lessons.Help().Key + " goes back to the lessons."
		}
		for _, s := range draw.Wrap(text, p.w) {
			rows = append(rows, st.Text.Render(s))
		}
		return draw.Block(rows, p.w, p.h)
	}
	head := p.head(ls)
	foot := p.foot(ls, false)
	// A short pane keeps at least a few rows of the step.
	for len(head)+len(foot)+3 > p.h && len(foot) > 1 {
		foot = foot[1:]
	}
	body, starts, tops := p.body(ls)
	if len(foot) > 0 && foot[0] == "" && len(head)+len(body)+len(foot) > p.h {
		foot = foot[1:] // a full pane spends no row on the spacer
	}
	bodyH := max(0, p.h-len(head)-len(foot))
	p.follow(ls, tops, len(body), bodyH)
	how := "(tab to the lesson, then ↑/↓)"
	if p.ctx.Focus == LessonID {
		how = "(↑/↓ scroll)"
	}
	rows, off := draw.WindowNote(body, p.off, bodyH, st, how)
	p.off = off
	if p.openIsBelow(ls, starts, len(body), off+bodyH) {
		p.openBelow = true
		below := p.foot(ls, false)
		if len(below) > 0 && below[0] == "" && (len(foot) == 0 || foot[0] != "") {
			below = below[1:] // as foot, no spacer in a full pane
		}
		if extra := len(below) - len(foot); extra <= 0 || bodyH-extra >= 3 {
			foot = below
			if extra > 0 { // the pointer takes a row more: the task stays below
				bodyH -= extra
				rows, off = draw.WindowNote(body, p.off, bodyH, st, how)
				p.off = off
			}
		}
		p.openBelow = false
	}
	// While the open task shows, the last row need not repeat its hint.
	if ls.Status == lessons.StatusTask {
		if i := lastTask(ls.Blocks); i >= 0 && starts[i] >= off && starts[i]+2 <= off+bodyH {
			short := p.foot(ls, true)
			for len(short) > len(foot) && short[0] == "" {
				short = short[1:]
			}
			if len(short) <= len(foot) {
				foot = short
			}
		}
	}
	out := append(head, rows...)
	for len(out) < p.h-len(foot) {
		out = append(out, "")
	}
	out = append(out, foot...)
	return draw.Block(out, p.w, p.h)
}

// openIsBelow reports whether what the learner must answer or do lies
// below row end: the open task's start, or the open question's last row.
func (p *Lesson) openIsBelow(ls *view.Lesson, starts []int, total, end int) bool {
	switch n := len(ls.Blocks); ls.Status {
	case lessons.StatusTask:
		i := lastTask(ls.Blocks)
		return i >= 0 && starts[i] >= end
	case lessons.StatusPredict:
		return n > 0 && ls.Blocks[n-1].Kind == view.BlockPrediction && total > end
	}
	return false
}

// head is where the step stands: the screen's header names the lesson.
func (p *Lesson) head(ls *view.Lesson) []string {
	st := p.ctx.Styles
	var rows []string
	var prog draw.Line
	prog.Add(&st.Muted, fmt.Sprintf("Step %d of %d ", ls.Step, ls.Steps))
	if ls.Steps > 0 {
		bw := min(ls.Steps*2, max(0, p.w-prog.Width()-1))
		if bw > 0 {
			done := ls.Step
			switch ls.Status {
			case lessons.StatusStepDone, lessons.StatusFinished:
			default:
				done-- // the step being played is not done yet
			}
			prog.AddStyled(draw.Bar(p.ctx.Styles, float64(done)/float64(ls.Steps), bw), bw)
		}
	}
	// The step's title joins the progress row when it fits.
	if ls.StepTitle != "" && prog.Width()+3+draw.Width(ls.StepTitle) <= p.w {
		prog.Add(&st.Faint, " · ")
		prog.Add(&st.Accent, ls.StepTitle)
		rows = append(rows, prog.Fit(p.w))
	} else {
		rows = append(rows, prog.Fit(p.w))
		if ls.StepTitle != "" {
			for _, s := range draw.Wrap(ls.StepTitle, p.w) {
				rows = append(rows, st.Accent.Render(s))
			}
		}
	}
	return rows
}

// body draws the blocks and returns the row each block starts at, and the
// row to bring to the top when the learner has just acted on it: its
// start, or for a prediction just answered, the answer.
func (p *Lesson) body(ls *view.Lesson) (rows []string, starts, tops []int) {
	st := p.ctx.Styles
	w := p.w
	if p.mdW != w || p.mdCache == nil || len(p.mdCache) > 200 {
		p.mdW, p.mdCache = w, map[string][]string{}
	}
	rows = []string{""}
	bs := ls.Blocks
	for i, b := range bs {
		if i > 0 {
			rows = append(rows, "")
		}
		starts = append(starts, len(rows))
		tops = append(tops, len(rows))
		switch b.Kind {
		case view.BlockText:
			md, ok := p.mdCache[b.Text]
			if !ok {
				md = draw.Markdown(st, b.Text, w)
				p.mdCache[b.Text] = md
			}
			rows = append(rows, md...)
		case view.BlockCommands:
			for _, c := range b.Commands {
				if c.OK {
					rows = append(rows, p.commandRows("$ ", c.Text, &st.Muted)...)
					rows = append(rows, p.found(c.Found)...)
					continue
				}
				rows = append(rows, p.commandRows(draw.SymFail+" ", c.Text, &st.Muted)...)
				for _, s := range draw.Wrap(draw.OneLine(c.Note), w-2) {
					rows = append(rows, "  "+st.Fail.Render(s))
				}
			}
		case view.BlockTask:
			rows = append(rows, p.task(b.Task, failedAfter(bs, i))...)
		case view.BlockPrediction:
			pr, answer := p.prediction(b.Prediction)
			if answer > 0 {
				tops[i] += answer
			}
			rows = append(rows, pr...)
		case view.BlockExpect:
			for _, e := range b.Expectations {
				rows = append(rows, p.expectation(e)...)
			}
		}
	}
	return rows, starts, tops
}

// found is what a command found, under it: a table the lab printed
// (a service's rows, as "a | b" under a rule of dashes) drawn as the
// narrative's tables are, a grid where it fits and one record a row where
// it does not; other lines wrapped.
func (p *Lesson) found(lines []string) []string {
	st := p.ctx.Styles
	w := p.w
	var rows []string
	for i := 0; i < len(lines); {
		if i+1 < len(lines) && isRule(lines[i+1]) {
			md := []string{pipeRow(lines[i]), pipeRow(lines[i+1])}
			j := i + 2
			for ; j < len(lines) && !rowCount.MatchString(strings.TrimSpace(lines[j])); j++ {
				md = append(md, pipeRow(lines[j]))
			}
			src := strings.Join(md, "\n")
			out, ok := p.mdCache[src]
			if !ok {
				out = draw.Markdown(st, src, w-2)
				p.mdCache[src] = out
			}
			for _, r := range out {
				rows = append(rows, "  "+r)
			}
			i = j
			continue
		}
		f := lines[i]
		if draw.Width(f) > w-2 {
			f = strings.Join(strings.Fields(f), " ") // columns cannot line up once wrapped
		}
		for _, s := range draw.Wrap(f, w-2) {
			rows = append(rows, "  "+st.Faint.Render(s))
		}
		i++
	}
	return rows
}

// rowCount is the line that ends a table the lab printed: "(3 rows)".
var rowCount = regexp.MustCompile(`^\(\d+ rows?\)$`)

// isRule reports whether a line is the dashes under a table's header.
func isRule(l string) bool {
	l = strings.TrimSpace(l)
	return l != "" && strings.Trim(l, "-| ") == "" && strings.Contains(l, "-")
}

// pipeRow writes a row the lab printed ("42      | 150") as a Markdown
// table's row ("| 42 | 150 |").
func pipeRow(l string) string {
	cells := strings.Split(l, "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(c)
	}
	return "| " + strings.Join(cells, " | ") + " |"
}

func (p *Lesson) task(t *view.Task, failed bool) []string {
	st := p.ctx.Styles
	var rows []string
	mark, ms := "[ ] ", &st.Warn
	switch {
	case t.Done && failed:
		// Its goal was reached, but the way there broke what the step
		// checks: not a done task for the learner.
		mark, ms = "["+draw.SymFail+"] ", &st.Fail
	case t.Done:
		mark, ms = "["+draw.SymOK+"] ", &st.OK
	}
	for i, s := range draw.WrapRuns(draw.Inline(st, draw.OneLine(t.Text)), p.w-4, "") {
		if i == 0 {
			rows = append(rows, ms.Render(mark)+s)
		} else {
			rows = append(rows, "    "+s)
		}
	}
	switch {
	case t.Hint == "" || t.Done:
	case t.HintShown:
		for _, s := range draw.Wrap(t.Hint, p.w-4) {
			rows = append(rows, "    "+st.Key.Render(s))
		}
	case !p.ctx.Follow:
		rows = append(rows, "    "+st.Muted.Render(draw.Cut(p.ctx.Keys.Hint.Keys()[0]+": a hint, if you want one", p.w-4)))
	}
	if len(t.Chosen) > 0 && !t.Done {
		// The lab holds still while the learner chooses: what they typed
		// shows here until n runs it.
		rows = append(rows, "    "+st.Muted.Render(draw.Cut("your choice, run at "+keyOf(p.ctx.Keys.NextStep)+":", p.w-4)))
		for _, c := range t.Chosen {
			rows = append(rows, p.commandRows("    $ ", c, &st.Text)...)
		}
	}
	if t.Waiting != "" && !t.Done {
		for _, s := range draw.Wrap("waits for "+t.Waiting, p.w-4) {
			rows = append(rows, "    "+st.Muted.Render(s))
		}
	}
	return rows
}

// failedAfter says whether an expectation checked after the task at i,
// before the next task, failed.
func failedAfter(bs []view.LessonBlock, i int) bool {
	for _, b := range bs[i+1:] {
		switch b.Kind {
		case view.BlockTask:
			return false
		case view.BlockExpect:
			for _, e := range b.Expectations {
				if e.Checked && !e.OK {
					return true
				}
			}
		}
	}
	return false
}

// commandRows is a command as the pane shows it: after its mark
// ("$ "), wrapped so that all of it can be read, each further row
// indented two columns past the mark so it reads as the same command.
func (p *Lesson) commandRows(mark, text string, ts *draw.Style) []string {
	st := p.ctx.Styles
	ms := &st.Faint
	if strings.TrimSpace(mark) == draw.SymFail {
		ms = &st.Fail
	}
	lead := draw.Width(mark)
	line := draw.OneLine(text)
	wrapped := draw.Wrap(line, max(1, p.w-lead))
	if len(wrapped) == 0 {
		return nil
	}
	var first draw.Line
	first.Add(ms, mark)
	first.Add(ts, wrapped[0])
	rows := []string{first.Fit(p.w)}
	rest := strings.Join(wrapped[1:], " ")
	if strings.HasPrefix(line, wrapped[0]) {
		rest = line[len(wrapped[0]):]
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return rows
	}
	pad := draw.Spaces(lead + 2)
	for _, s := range draw.Wrap(rest, max(1, p.w-lead-2)) {
		var l draw.Line
		l.Add(nil, pad)
		l.Add(ts, s)
		rows = append(rows, l.Fit(p.w))
	}
	return rows
}

// expectation is "✓ what it means", then the condition's values.
func (p *Lesson) expectation(e view.Expectation) []string {
	st := p.ctx.Styles
	var mark string
	var ms *draw.Style
	switch {
	case !e.Checked:
		mark, ms = draw.SymPending, &st.Muted
	case e.OK:
		mark, ms = draw.SymOK, &st.OK
	default:
		mark, ms = draw.SymFail, &st.Fail
	}
	title := e.Text
	if e.Label != "" {
		title = e.Label
	}
	var detail string
	switch {
	case !e.Checked || e.Got == "":
	case e.Label != "" && !e.OK:
		detail = e.Text + ", but " + e.Got
	case !e.OK:
		detail = "got " + e.Got
	default:
		// Under words of the lesson's own, the values read take its way
		// of writing numbers; beside a condition they stay as it has them.
		detail = e.Got
		if e.Label != "" {
			detail = draw.GroupNumbers(detail)
		}
	}
	ds := &st.Muted
	if !e.OK {
		ds = &st.Fail
	}
	// A bare condition takes its values on the same row when they fit.
	if e.Label == "" && detail != "" && 2+draw.Width(title)+3+draw.Width(detail) <= p.w {
		var l draw.Line
		l.Add(ms, mark+" ")
		l.Add(&st.Text, title)
		l.Add(ds, " ("+detail+")")
		return []string{l.Fit(p.w)}
	}
	var rows []string
	for i, s := range draw.Wrap(title, p.w-2) {
		var l draw.Line
		if i == 0 {
			l.Add(ms, mark+" ")
		} else {
			l.Add(nil, "  ")
		}
		l.Add(&st.Text, s)
		rows = append(rows, l.Fit(p.w))
	}
	if detail != "" {
		for _, s := range draw.Wrap(detail, p.w-2) {
			rows = append(rows, "  "+ds.Render(s))
		}
	}
	return rows
}

func lastTask(bs []view.LessonBlock) int {
	for i := len(bs) - 1; i >= 0; i-- {
		if bs[i].Kind == view.BlockTask {
			return i
		}
	}
	return -1
}

// foot is the notice, if any, and what the step waits for, in words that
// name the keys; taskShown says the open task and its hint are in view.
func (p *Lesson) foot(ls *view.Lesson, taskShown bool) []string {
	rows := p.notice(ls)
	mark, text, ms, ok := p.waitsFor(ls, taskShown)
	if !ok {
		return rows
	}
	if len(rows) == 0 {
		rows = append(rows, "")
	}
	for i, s := range draw.Wrap(text, p.w-2) {
		if i == 0 {
			rows = append(rows, ms.Render(mark+" "+s))
		} else {
			rows = append(rows, ms.Render("  "+s))
		}
	}
	return rows
}

// notice is the player's notice, coloured by how bad it is, after a blank
// row; nothing when there is none.
func (p *Lesson) notice(ls *view.Lesson) []string {
	st := p.ctx.Styles
	var rows []string
	if ls.Notice != "" {
		ns := &st.Warn
		switch ls.Status {
		case lessons.StatusFailed, lessons.StatusBroken:
			ns = &st.Fail
		case lessons.StatusStarting:
			ns = &st.Muted
		}
		rows = append(rows, "")
		for _, s := range draw.Wrap(ls.Notice, p.w) {
			rows = append(rows, ns.Render(s))
		}
	}
	return rows
}

// waitsFor is what the step waits for, in words that name the keys, with
// its mark and style; false when the pane says nothing more.
func (p *Lesson) waitsFor(ls *view.Lesson, taskShown bool) (mark, text string, ms *draw.Style, ok bool) {
	st := p.ctx.Styles
	k := p.ctx.Keys
	mark, ms = "", &st.Accent
	switch ls.Status {
	case lessons.StatusStarting:
		if ls.Notice != "" {
			return "", "", nil, false // the notice says it
		}
		mark, text, ms = draw.SymPending, "starting the step…", &st.Muted
	case lessons.StatusPlaying:
		mark, text, ms = draw.SymPending, "running the step's commands…", &st.Muted
		// A step's commands show when they are all done, which can take
		// many seconds (consumers joining a group one rebalance at a time
		// under classroom timing); meanwhile say which one is running.
		if cmd := p.runningCommand(); cmd != "" {
			text = draw.Cut("running: "+cmd, p.w-2)
		}
	case lessons.StatusTask:
		var open *view.Task
		for _, b := range ls.Blocks {
			if b.Kind == view.BlockTask && !b.Task.Done {
				open = b.Task
			}
		}
		where := "the task above"
		if p.openBelow {
			where = "the task below (↓)"
		}
		mark, text = "▶", "Your turn: "+where
		if p.ctx.Follow {
			mark, text, ms = draw.SymPending, "The teacher's turn: "+where, &st.Muted
			break
		}
		switch {
		case open != nil && open.Decide != "" && len(open.Chosen) > 0:
			text = fmt.Sprintf("Your choice waits (%d %s): add to it, or %s runs it", len(open.Chosen), plural(len(open.Chosen), "command", "commands"), keyOf(k.NextStep))
		case open != nil && open.Decide != "" && open.Acted:
			text = "Your choice: add to it, or " + keyOf(k.NextStep) + " when it is complete"
		case open != nil && open.Decide != "" && p.openBelow:
			text = "Your choice, in the task below (↓): " + open.Decide + ", then " + keyOf(k.NextStep)
		case open != nil && open.Decide != "":
			text = "Your choice: " + open.Decide + ", then " + keyOf(k.NextStep) + " — " + keyOf(k.Hint) + " for a hint"
		case open != nil && open.Tried && open.Waiting != "":
			mark, text, ms = draw.SymPending, "Done; the lab is getting there: "+open.Waiting, &st.Muted
		case open != nil && open.Hint != "" && open.HintShown && !taskShown:
			text = "Your turn — " + open.Hint
		case open != nil && !open.HintShown:
			text = "Your turn: " + where + " — " + keyOf(k.Hint) + " for a hint"
		}
	case lessons.StatusPredict:
		n := 0
		if ls.Prediction != nil {
			n = len(ls.Prediction.Choices)
		}
		mark, text = "▶", fmt.Sprintf("Your turn: press a–%c to predict", 'a'+max(0, n-1))
		if ls.Prediction != nil && ls.Prediction.Numeric {
			text = "Your turn: type a number and press enter"
		}
		if p.openBelow {
			text = strings.Replace(text, "Your turn: ", "Your turn, the question below (↓): ", 1)
		}
		if p.ctx.State.Class != nil && !p.ctx.Follow {
			text += ", or :reveal to show the class the answer"
		}
		if p.ctx.Follow && ls.Prediction != nil && ls.Prediction.Chosen >= 0 {
			mark, text, ms = draw.SymPending, "Answered; the teacher reveals it when the class is ready", &st.Muted
		}
	case lessons.StatusStepDone:
		mark, ms = draw.SymOK, &st.OK
		text = "Step done — " + keyOf(k.NextStep) + ": next step"
		if ls.Step >= ls.Steps {
			text = "Last step done — " + keyOf(k.NextStep) + ": finish the lesson"
		}
		if p.ctx.Follow {
			text = "Step done: the teacher moves on when the class is ready"
		}
	case lessons.StatusFailed:
		mark, text, ms = draw.SymFail, "An expectation failed — :lesson reset", &st.Fail
	case lessons.StatusBroken:
		mark, text, ms = draw.SymFail, "The step stopped — :lesson reset", &st.Fail
	case lessons.StatusFinished:
		mark, ms = draw.SymOK, &st.OK
		text = "Lesson finished."
		switch {
		case k.Lessons.Enabled() && ls.Next != "":
			text += " Next: " + ls.Next + " — " + keyOf(k.Lessons) + " goes back to the lessons with it selected, enter opens it."
		case k.Lessons.Enabled():
			text += " " + keyOf(k.Lessons) + ": back to the lessons"
		}
	default:
		return "", "", nil, false
	}
	return mark, text, ms, true
}

// keyOf is the first key of a binding, as the pane names it.
func keyOf(b key.Binding) string { return b.Keys()[0] }

// runningCommand is the lab's newest command as the timeline has it: while
// a step plays, the one running now.
func (p *Lesson) runningCommand() string {
	tl := p.ctx.State.Timeline
	for i := len(tl) - 1; i >= 0; i-- {
		if tl[i].Kind == "command" {
			return tl[i].Text
		}
	}
	return ""
}

// follow scrolls to what played since the learner last acted: from the
// start of the step, or from the task or question they just did or
// answered. It shows the newest rows unless that would hide the first of
// those; the learner's own scrolling holds until the step moves again or
// they act. A reveal stays in view, its verdict at the top, until the
// learner moves on, also when the step goes straight on to another
// question; a command typed at the open task brings the task back.
func (p *Lesson) follow(ls *view.Lesson, tops []int, total, h int) {
	n := len(ls.Blocks)
	acts := taskActs(ls)
	if ls.Step == p.seenStep && n == p.seenBlocks && ls.Status == p.seenStatus && acts == p.seenActs {
		// Nothing new: the learner's scrolling holds when the pane grows
		// or shrinks by a row of the foot. Only an end that was in view
		// stays in view, short of pushing the anchor out at the top.
		if h != p.seenH && p.off+p.seenH >= total && h > 0 {
			off := max(0, total-h)
			if p.anchor < len(tops) {
				if first := max(0, tops[p.anchor]-1); first >= p.off {
					off = min(off, first)
				}
			}
			p.off = off
		}
		p.seenH = h
		return
	}
	waited := p.seenStatus == lessons.StatusTask || p.seenStatus == lessons.StatusPredict
	switch {
	case ls.Step != p.seenStep || n < p.seenBlocks:
		p.anchor, p.off = 0, 0
	case waited && (ls.Status != p.seenStatus || n > p.seenBlocks) && p.seenBlocks > 0:
		p.anchor = p.seenBlocks - 1 // the block the learner just did or answered
	case ls.Status == lessons.StatusTask && acts != p.seenActs:
		if i := lastTask(ls.Blocks); i >= 0 {
			p.anchor = i // the learner typed at the open task: it is what they read now
		}
	}
	if ls.Status == lessons.StatusPredict && n > 0 && ls.Blocks[n-1].Kind == view.BlockPrediction && p.anchor < n-1 && !revealed(ls, p.anchor) {
		// The learner is asked to answer: the open question is in view,
		// what led to it one scroll up. After a reveal the reveal comes
		// first, and the foot points down to the question.
		p.anchor = n - 1
	}
	p.seenStep, p.seenBlocks, p.seenStatus, p.seenH, p.seenActs = ls.Step, n, ls.Status, h, acts
	if p.anchor >= len(tops) || h <= 0 {
		return
	}
	// draw.Window() writes "↑ N above" over the top row: start a row higher.
	first := max(0, tops[p.anchor]-1)
	if total-p.off > h { // the end is out of view
		p.off = min(first, total-h)
	}
	if first < p.off {
		p.off = first
	}
}

// revealed reports whether block i is a question whose answer is shown.
func revealed(ls *view.Lesson, i int) bool {
	if i < 0 || i >= len(ls.Blocks) {
		return false
	}
	b := ls.Blocks[i]
	return b.Kind == view.BlockPrediction && b.Prediction != nil && b.Prediction.Answer >= 0
}

// taskActs counts what the learner has done at the open task: each
// command of a choice, a first command, the goal's action.
func taskActs(ls *view.Lesson) int {
	i := lastTask(ls.Blocks)
	if i < 0 || ls.Blocks[i].Task == nil || ls.Blocks[i].Task.Done {
		return 0
	}
	t := ls.Blocks[i].Task
	n := len(t.Chosen)
	if t.Acted {
		n++
	}
	if t.Tried {
		n++
	}
	return n
}

// addInline adds narrative on one row, its code and bold styled as the
// pane styles them, its line breaks gone.
func addInline(l *draw.Line, st *draw.Styles, text string) {
	for _, r := range draw.Inline(st, draw.OneLine(text)) {
		l.Add(r.Style, r.Text)
	}
}

// TaskLine is the current task in one row, for screens too small for the
// lesson pane beside the cluster.
func TaskLine(st *draw.Styles, ls *view.Lesson, w int) string {
	if ls == nil {
		return ""
	}
	var l draw.Line
	l.Add(&st.Muted, fmt.Sprintf("Step %d/%d ", ls.Step, ls.Steps))
	for _, t := range ls.Tasks {
		if !t.Done {
			l.Add(&st.Warn, "[ ] ")
			addInline(&l, st, t.Text)
			switch {
			case t.Hint != "" && t.HintShown:
				l.Add(&st.Text, " — "+t.Hint)
			case t.Hint != "":
				l.Add(&st.Text, " (t: a hint)")
			}
			return l.Fit(w)
		}
	}
	if pr := ls.Prediction; pr != nil && pr.Chosen < 0 && pr.Answer < 0 {
		l.Add(&st.Accent, "Predict: ")
		addInline(&l, st, pr.Question)
		if pr.Numeric {
			l.Add(&st.Text, " (a number)")
		} else {
			l.Add(&st.Text, " (a–"+string(rune('a'+max(0, len(pr.Choices)-1)))+")")
		}
		return l.Fit(w)
	}
	l.Add(&st.Text, strings.TrimSpace(ls.StepTitle))
	return l.Fit(w)
}
