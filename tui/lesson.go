package tui

import (
	"fmt"
	"strings"
)

// lessonPanel draws the open lesson's step: progress, narrative, tasks,
// the prediction and the expectations with ✓/✗.
type lessonPanel struct {
	ctx  *Context
	w, h int
	off  int
	// Wrapping is the costly part; keep the last result.
	wrapKey  string
	wrapW    int
	wrapRows []string
}

func newLessonPanel(ctx *Context) *lessonPanel { return &lessonPanel{ctx: ctx} }

func (p *lessonPanel) Title() string    { return "Lesson" }
func (p *lessonPanel) SetSize(w, h int) { p.w, p.h = w, h }
func (p *lessonPanel) Scroll(d int)     { p.off = max(0, p.off+d) }

func (p *lessonPanel) View() string {
	st := p.ctx.Styles
	ls := p.ctx.State.Lesson
	if ls == nil {
		rows := []string{st.Header.Render("Sandbox")}
		rows = append(rows, "")
		for _, s := range wrapText("No lesson is open: the lab is yours. Select a node with ←/→ or 1–9 and press k to kill it, r to restart it. Type : for a command (try :help).", p.w) {
			rows = append(rows, st.Text.Render(s))
		}
		return block(rows, p.w, p.h)
	}
	var rows []string
	rows = append(rows, st.Header.Render(cut(ls.Title, p.w)))
	var prog line
	prog.add(&st.Muted, fmt.Sprintf("Step %d of %d ", ls.Step, ls.Steps))
	if ls.Steps > 0 {
		bw := min(ls.Steps*2, max(0, p.w-prog.w-1))
		if bw > 0 {
			prog.b.WriteString(bar(st, float64(ls.Step)/float64(ls.Steps), bw))
			prog.w += bw
		}
	}
	// The step's title joins the progress row when it fits.
	if ls.StepTitle != "" && prog.w+3+textWidth(ls.StepTitle) <= p.w {
		prog.add(&st.Faint, " · ")
		prog.add(&st.Accent, ls.StepTitle)
		rows = append(rows, prog.fit(p.w))
	} else {
		rows = append(rows, prog.fit(p.w))
		if ls.StepTitle != "" {
			rows = append(rows, st.Accent.Render(cut(ls.StepTitle, p.w)))
		}
	}
	rows = append(rows, "")
	if ls.Text != "" {
		if p.wrapKey != ls.Text || p.wrapW != p.w {
			p.wrapKey, p.wrapW = ls.Text, p.w
			p.wrapRows = nil
			for _, s := range wrapText(ls.Text, p.w) {
				p.wrapRows = append(p.wrapRows, st.Text.Render(s))
			}
		}
		rows = append(rows, p.wrapRows...)
	}
	if len(ls.Tasks) > 0 {
		rows = append(rows, "", st.Title.Render("Do"))
		for _, t := range ls.Tasks {
			mark, ms := "[ ] ", &st.Warn
			if t.Done {
				mark, ms = "["+symOK+"] ", &st.OK
			}
			text := t.Text
			if t.Hint != "" && !t.Done {
				text += " — " + t.Hint
			}
			for i, s := range wrapText(text, p.w-4) {
				var l line
				if i == 0 {
					l.add(ms, mark)
				} else {
					l.add(nil, "    ")
				}
				l.add(&st.Text, s)
				rows = append(rows, l.fit(p.w))
			}
		}
	}
	if pr := ls.Prediction; pr != nil {
		rows = append(rows, "", st.Title.Render("Predict"))
		for _, s := range wrapText(pr.Question, p.w) {
			rows = append(rows, st.Text.Render(s))
		}
		rows = append(rows, p.choices(pr)...)
		letter := func(i int) string { return string(rune('a'+i)) + ")" }
		switch {
		case pr.Chosen < 0:
			rows = append(rows, st.Accent.Render(cut(fmt.Sprintf("Press a–%c to answer.", 'a'+max(0, len(pr.Choices)-1)), p.w)))
		case pr.Answer < 0:
			rows = append(rows, st.Muted.Render(cut("You chose "+letter(pr.Chosen)+" Now watch.", p.w)))
		case pr.Answer == pr.Chosen:
			rows = append(rows, st.OK.Render(cut(symOK+" You chose "+letter(pr.Chosen)+" and predicted it.", p.w)))
		default:
			rows = append(rows, st.Fail.Render(cut(symFail+" You chose "+letter(pr.Chosen)+"; it was "+letter(pr.Answer), p.w)))
		}
	}
	if len(ls.Expectations) > 0 {
		rows = append(rows, "", st.Title.Render("Expect"))
		for _, e := range ls.Expectations {
			var l line
			switch {
			case !e.Checked:
				l.add(&st.Muted, symPending+" ")
			case e.OK:
				l.add(&st.OK, symOK+" ")
			default:
				l.add(&st.Fail, symFail+" ")
			}
			l.add(&st.Text, e.Text)
			if e.Checked && !e.OK && e.Got != "" {
				l.add(&st.Fail, " (got "+e.Got+")")
			}
			rows = append(rows, l.fit(p.w))
		}
	}
	out, off := window(rows, p.off, p.h, st)
	p.off = off
	return block(out, p.w, p.h)
}

// choices lists a prediction's answers, on one row when they fit. The
// chosen one is marked ›, and once revealed the right one ✓ and a wrong
// choice ✗.
func (p *lessonPanel) choices(pr *Prediction) []string {
	st := p.ctx.Styles
	items := make([]line, len(pr.Choices))
	total := 0
	for i, c := range pr.Choices {
		mark, ms := " ", &st.Text
		switch {
		case pr.Answer >= 0 && i == pr.Answer:
			mark, ms = symOK, &st.OK
		case pr.Answer >= 0 && i == pr.Chosen:
			mark, ms = symFail, &st.Fail
		case i == pr.Chosen:
			mark, ms = symSelected, &st.Accent
		}
		items[i].add(ms, mark+string(rune('a'+i))+") ")
		items[i].add(&st.Text, c)
		total += items[i].w + 3
	}
	if total <= p.w {
		var l line
		for i := range items {
			if i > 0 {
				l.add(nil, "   ")
			}
			l.b.WriteString(items[i].b.String())
			l.w += items[i].w
		}
		return []string{l.fit(p.w)}
	}
	rows := make([]string, len(items))
	for i := range items {
		rows[i] = items[i].fit(p.w)
	}
	return rows
}

// taskLine is the current task in one row, for screens too small for the
// lesson pane beside the cluster.
func taskLine(st *Styles, ls *Lesson, w int) string {
	if ls == nil {
		return ""
	}
	var l line
	l.add(&st.Muted, fmt.Sprintf("Step %d/%d ", ls.Step, ls.Steps))
	for _, t := range ls.Tasks {
		if !t.Done {
			l.add(&st.Warn, "[ ] ")
			text := t.Text
			if t.Hint != "" {
				text += " — " + t.Hint
			}
			l.add(&st.Text, text)
			return l.fit(w)
		}
	}
	if pr := ls.Prediction; pr != nil && pr.Chosen < 0 {
		l.add(&st.Accent, "Predict: ")
		l.add(&st.Text, pr.Question+" (a–"+string(rune('a'+max(0, len(pr.Choices)-1)))+")")
		return l.fit(w)
	}
	l.add(&st.Text, strings.TrimSpace(ls.StepTitle))
	return l.fit(w)
}
