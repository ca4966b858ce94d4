package panel

import (
	"fmt"
	"strconv"

	"github.com/mqlab/mqlab/tui/draw"
)

// Checker draws the checker's invariants, each with ✓ or ✗ and its
// count, and how many hold.
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
		return draw.Block(rows, p.w, p.h)
	}
	ok, bad := 0, 0
	nameW := 0
	numW := 1
	for _, f := range c.Fields {
		if f.OK {
			ok++
		} else {
			bad++
		}
		nameW = max(nameW, draw.Width(f.Name))
		numW = max(numW, len(strconv.FormatInt(f.Value, 10)))
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
	rows = append(rows, head.Fit(p.w))
	nameW = min(nameW, max(8, p.w-numW-6))
	for _, f := range c.Fields {
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
			rows = append(rows, l.Fit(p.w))
		case l.Width()+2+draw.Width(f.Note) <= p.w:
			l.Add(&st.Muted, "  "+f.Note)
			rows = append(rows, l.Fit(p.w))
		default: // the note goes under the name
			rows = append(rows, l.Fit(p.w))
			for _, s := range draw.Wrap(f.Note, p.w-2) {
				rows = append(rows, "  "+st.Muted.Render(s))
			}
		}
	}
	out, off := draw.Window(rows, p.off, p.h, st)
	p.off = off
	return draw.Block(out, p.w, p.h)
}
