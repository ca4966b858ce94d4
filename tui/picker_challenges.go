package tui

// The picker's challenges: a row each after the lessons, the box that says
// how to run the selected one, and what enter does on it.

import (
	"fmt"
	"strings"

	"github.com/mqlab/mqlab/lessons/challenge"
	"github.com/mqlab/mqlab/tui/draw"
)

// open opens the selected entry. A challenge runs the learner's own
// program, which only a shell can name: the status says how.
func (p *picker) open() pickerAction {
	if c := p.selected().ch; c != nil {
		p.setStatus(fmt.Sprintf("A challenge runs your own consumer: from a shell, mqlab challenge %s -- COMMAND (the page: %s)", c.ID, challengePage(c)), true)
		return pickNothing
	}
	return pickOpen
}

// challengePage is where a challenge's page is, in mqlab's folder.
func challengePage(c *challenge.Challenge) string {
	return "lessons/challenge/" + c.ID + "/README.md"
}

// challengeRow draws a challenge's row after its mark: its number, title,
// summary (when there is room) and whether it was passed.
func (p *picker) challengeRow(l *draw.Line, e pickerEntry, selected bool, numW, titleW, conceptsW int) {
	st := p.st
	name, _, _ := strings.Cut(e.ch.Title, ":") // the rest is in the box below
	p.numberAndTitle(l, e.num, name, selected, numW, titleW)
	// The summary takes the lessons' concepts and minutes columns.
	at := 2 + numW + 2 + titleW + 2
	if conceptsW > 0 {
		l.Add(&st.Faint, draw.Cut(e.ch.Summary, conceptsW+2+6))
		at += conceptsW + 2
	}
	l.Pad(at + 6 + 2)
	if _, ok := p.progress.Challenges[e.ch.ID]; ok {
		l.Add(&st.OK, draw.SymOK+" passed")
	}
}

// challengeDetail is a challenge's box: what it asks, how to run it, and
// whether it was passed.
func (p *picker) challengeDetail(c *challenge.Challenge, w int) (string, []string) {
	st := p.st
	summary := strings.ToUpper(c.Summary[:1]) + c.Summary[1:] + "."
	rows := draw.WrapRuns([]draw.Run{{Text: summary, Style: &st.Text}}, w, "")
	rows = append(rows, draw.WrapRuns([]draw.Run{{Text: "Run it from a shell: ", Style: &st.Muted}, {Text: "mqlab challenge " + c.ID + " -- COMMAND", Style: &st.Accent}}, w, "")...)
	rows = append(rows, draw.WrapRuns([]draw.Run{{Text: "The page, with starters in Go and Python: ", Style: &st.Muted}, {Text: challengePage(c), Style: &st.Text}}, w, "")...)
	var pr []draw.Run
	if cp, ok := p.progress.Challenges[c.ID]; ok {
		pr = []draw.Run{{Text: draw.SymOK + " Passed ", Style: &st.OK}, {Text: fmt.Sprintf("on %d schedules, %s.", cp.Schedules, cp.PassedAt.Local().Format("2006-01-02")), Style: &st.Text}}
	} else {
		pr = []draw.Run{{Text: fmt.Sprintf("Level %d; passed once your program passes %d schedules.", c.Level, challenge.PassSchedules), Style: &st.Text}}
	}
	return c.Title, append(rows, draw.WrapRuns(pr, w, "")...)
}
