package panel

// A lesson's question as the lesson panel draws it: the question, its
// choices on one row or one a row, and once answered, the reveal.

import (
	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/view"
)

// prediction draws a question, its choices and, once answered, the
// outcome and why; answer is the row of the outcome (0 before it).
func (p *Lesson) prediction(pr *view.Prediction) (rows []string, answer int) {
	st := p.ctx.Styles
	rows = []string{st.Title.Render("Predict")}
	rows = append(rows, draw.Markdown(st, pr.Question, p.w)...)
	rows = append(rows, p.choices(pr)...)
	if pr.Chosen >= 0 {
		answer = len(rows)
	}
	letter := func(i int) string { return string(rune('a'+i)) + ")" }
	if pr.Class != nil { // wrapped, not cut: the median is its last word
		for _, s := range draw.Wrap(pr.Class.String(), p.w) {
			rows = append(rows, st.Accent.Render(s))
		}
	}
	switch {
	case pr.Numeric:
		rows = append(rows, p.numberOutcome(pr)...)
	case pr.Chosen < 0 && pr.Answer >= 0:
		rows = append(rows, st.Muted.Render(draw.Cut("The answer: "+letter(pr.Answer), p.w)))
	case pr.Chosen < 0:
	case pr.Answer < 0:
		rows = append(rows, st.Muted.Render(draw.Cut("You chose "+letter(pr.Chosen)+" Now watch.", p.w)))
	case pr.Answer == pr.Chosen:
		rows = append(rows, st.OK.Render(draw.Cut(draw.SymOK+" You chose "+letter(pr.Chosen)+" and predicted it.", p.w)))
	default:
		rows = append(rows, st.Fail.Render(draw.Cut(draw.SymFail+" You chose "+letter(pr.Chosen)+"; it was "+letter(pr.Answer), p.w)))
	}
	if pr.Answer >= 0 && pr.Why != "" {
		rows = append(rows, draw.WrapRuns(append([]draw.Run{{Text: "Why: ", Style: &st.Bold}}, draw.Inline(st, draw.OneLine(pr.Why))...), p.w, "")...)
	}
	return rows, answer
}

// numberOutcome is a numeric question's rows below it: what to type while
// it is open, then the learner's number and, once revealed, the answer.
func (p *Lesson) numberOutcome(pr *view.Prediction) []string {
	st := p.ctx.Styles
	var text string
	ms := &st.Muted
	switch {
	case pr.Answer >= 0 && pr.Given == "":
		text = "The answer: " + pr.Right + "."
	case pr.Chosen < 0:
		text = "Answer with a number."
	case pr.Answer < 0:
		text = "You said " + pr.Given + ". Now watch."
	case pr.Correct:
		text, ms = draw.SymOK+" You said "+pr.Given+" and predicted it: "+pr.Right+".", &st.OK
	default:
		text, ms = draw.SymFail+" You said "+pr.Given+"; it was "+pr.Right+".", &st.Fail
	}
	var rows []string
	for _, s := range draw.Wrap(text, p.w) {
		rows = append(rows, ms.Render(s))
	}
	return rows
}

// choices lists a prediction's answers, on one row when they fit, else
// one a row wrapped under its letter. The chosen one is marked ›, and once
// revealed the right one ✓ and a wrong choice ✗.
func (p *Lesson) choices(pr *view.Prediction) []string {
	st := p.ctx.Styles
	if len(pr.Choices) == 0 {
		return nil
	}
	leads := make([]draw.Line, len(pr.Choices))
	total := 0
	for i, c := range pr.Choices {
		mark, ms := " ", &st.Text
		switch {
		case pr.Answer >= 0 && i == pr.Answer:
			mark, ms = draw.SymOK, &st.OK
		case pr.Answer >= 0 && i == pr.Chosen:
			mark, ms = draw.SymFail, &st.Fail
		case i == pr.Chosen:
			mark, ms = draw.SymSelected, &st.Accent
		}
		leads[i].Add(ms, mark+string(rune('a'+i))+") ")
		total += leads[i].Width() + draw.Width(c) + 3
	}
	if total <= p.w {
		var l draw.Line
		for i, c := range pr.Choices {
			if i > 0 {
				l.Add(nil, "   ")
			}
			l.Append(&leads[i])
			l.Add(&st.Text, c)
		}
		return []string{l.Fit(p.w)}
	}
	var rows []string
	for i, c := range pr.Choices {
		lw := leads[i].Width()
		for j, s := range draw.Wrap(draw.OneLine(c), p.w-lw) {
			lead := draw.Spaces(lw)
			if j == 0 {
				lead = leads[i].String()
			}
			rows = append(rows, lead+st.Text.Render(s))
		}
	}
	return rows
}
