package panel

import (
	"fmt"
	"strconv"

	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/view"
)

// Checker draws the checker's invariants, each with ✓ or ✗ and its
// count, and how many hold, with the records behind each count that is
// not zero (what check why lists): under a broken count's row, and under
// all the counts for the others.
type Checker struct {
	ctx  *Context
	w, h int
	scrolled
}

func NewChecker(ctx *Context) *Checker {
	return &Checker{ctx: ctx, scrolled: scrolled{keys: ctx.Scroll}}
}

func (p *Checker) Title() string    { return "Checker" }
func (p *Checker) SetSize(w, h int) { p.w, p.h = w, h }

func (p *Checker) View() string {
	st := p.ctx.Styles
	c := p.ctx.State.Checker
	if len(c.Fields) == 0 {
		return draw.Block(p.unchecked(), p.w, p.h)
	}
	nameW, numW := 0, 1
	for _, f := range c.Fields {
		nameW = max(nameW, draw.Width(f.Name))
		numW = max(numW, len(strconv.FormatInt(f.Value, 10)))
	}
	rows := p.counts(c)
	nameW = min(nameW, max(8, p.w-numW-6))
	for _, f := range c.Fields {
		rows = append(rows, p.field(f, nameW, numW)...)
		if !f.OK {
			rows = append(rows, p.records(f)...)
		}
	}
	for _, f := range c.Fields {
		if f.OK {
			rows = append(rows, p.why(f)...)
		}
	}
	out, off := draw.Window(rows, p.off, p.h, st)
	p.off = off
	return draw.Block(out, p.w, p.h)
}

// unchecked is what the panel says before a check.
func (p *Checker) unchecked() []string {
	st := p.ctx.Styles
	var rows []string
	paras := []string{"Not checked yet.", "Run  :check  to drain and count."}
	switch {
	case p.ctx.ReadOnly:
		paras = []string{"Not checked in this recording."}
	case p.ctx.Follow:
		paras = []string{"Not checked yet: the teacher's check shows here."}
	}
	for _, para := range paras {
		for _, s := range draw.Wrap(para, p.w) {
			rows = append(rows, st.Muted.Render(s))
		}
	}
	return rows
}

// counts is how many invariants hold and how many are broken, and when
// they were checked.
func (p *Checker) counts(c view.Checker) []string {
	st := p.ctx.Styles
	ok, bad := 0, 0
	for _, f := range c.Fields {
		if f.OK {
			ok++
		} else {
			bad++
		}
	}
	var head draw.Line
	head.Add(&st.OK, fmt.Sprintf("%s %d hold", draw.SymOK, ok))
	head.Add(&st.Muted, "  ")
	if bad > 0 {
		head.Add(&st.Fail, fmt.Sprintf("%s %d broken", draw.SymFail, bad))
	} else {
		head.Add(&st.Muted, fmt.Sprintf("%s 0 broken", draw.SymFail))
	}
	var rows []string
	if !c.At.IsZero() {
		// When it was checked: beside the counts, or above them on a
		// narrow panel, never cut.
		at := "checked " + c.At.Format("15:04:05")
		if head.Width()+2+len(at) <= p.w {
			head.Add(&st.Muted, "  "+at)
		} else {
			rows = append(rows, st.Muted.Render(draw.Fit(at, p.w)))
		}
	}
	return append(rows, head.Fit(p.w))
}

// field is one invariant's row, with its note beside it or under it.
func (p *Checker) field(f view.CheckField, nameW, numW int) []string {
	st := p.ctx.Styles
	var l draw.Line
	if f.OK {
		l.Add(&st.OK, draw.SymOK+" ")
	} else {
		l.Add(&st.Fail, draw.SymFail+" ")
	}
	l.Add(&st.Text, draw.Fit(f.Name, nameW))
	vs := &st.Bold
	if !f.OK {
		vs = &st.Fail
	}
	l.Add(vs, fmt.Sprintf(" %*d", numW, f.Value))
	switch {
	case f.Note == "":
		return []string{l.Fit(p.w)}
	case l.Width()+2+draw.Width(f.Note) <= p.w:
		l.Add(&st.Muted, "  "+f.Note)
		return []string{l.Fit(p.w)}
	}
	rows := []string{l.Fit(p.w)} // the note goes under the name
	for _, s := range draw.Wrap(f.Note, p.w-2) {
		rows = append(rows, "  "+st.Muted.Render(s))
	}
	return rows
}

// whyShown bounds the records the panel lists behind one count; check why
// FIELD lists more.
const whyShown = 5

// why is the records behind a count that is not broken, under the
// counts: a heading, then the records.
func (p *Checker) why(f view.CheckField) []string {
	if len(f.Why) == 0 || f.Value == 0 {
		return nil
	}
	st := p.ctx.Styles
	var head draw.Line
	head.Add(&st.Bold, "why "+f.Name)
	return append([]string{"", head.Fit(p.w)}, p.records(f)...)
}

// records is the first records behind a count, each wrapped, and how
// many more check why would list. A broken count has them right under
// its row.
func (p *Checker) records(f view.CheckField) []string {
	if len(f.Why) == 0 || f.Value == 0 {
		return nil
	}
	st := p.ctx.Styles
	var rows []string
	shown := f.Why[:min(len(f.Why), whyShown)]
	for _, w := range shown {
		for i, s := range draw.Wrap(w, max(p.w-4, 8)) {
			lead := "· "
			if i > 0 {
				lead = "  "
			}
			rows = append(rows, "  "+st.Text.Render(draw.Fit(lead+s, p.w-2)))
		}
	}
	if more := f.More + len(f.Why) - len(shown); more > 0 {
		rows = append(rows, "  "+st.Muted.Render(draw.Fit(fmt.Sprintf("… %d more: :check why %s", more, f.Name), p.w-2)))
	}
	return rows
}
