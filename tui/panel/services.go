package panel

import (
	"fmt"
	"strings"

	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/view"
)

// Services draws the services' SQL tables as they are: the outbox
// rows going pending → sent, processed_messages, wallets, charges.
type Services struct {
	ctx  *Context
	w, h int
	scrolled
}

func NewServices(ctx *Context) *Services {
	return &Services{ctx: ctx, scrolled: scrolled{keys: ctx.Scroll}}
}

func (p *Services) Title() string    { return "Services" }
func (p *Services) SetSize(w, h int) { p.w, p.h = w, h }

func (p *Services) View() string {
	st := p.ctx.Styles
	ts := p.ctx.State.Tables
	if len(ts) == 0 {
		return draw.Block(emptyHint(p.ctx, "No services running.", "No services running. Start one with", "  :service start orders mode=outbox"), p.w, p.h)
	}
	var rows []string
	for ti, t := range ts {
		if ti > 0 {
			rows = append(rows, "")
		}
		var l draw.Line
		l.Add(&st.Header, t.Name)
		if t.Note != "" {
			rows = append(rows, l.Fit(p.w))
			for _, s := range draw.Wrap(t.Note, p.w-2) {
				rows = append(rows, "  "+st.Muted.Render(s))
			}
			continue
		}
		total := t.Total
		if total < len(t.Rows) {
			total = len(t.Rows)
		}
		body, shown := p.table(t)
		count := tableCount(total, len(t.Rows), shown, len(t.Columns), p.w-l.Width())
		l.Add(&st.Muted, count)
		rows = append(rows, l.Fit(p.w))
		rows = append(rows, body...)
	}
	out, off := draw.Window(rows, p.off, p.h, st)
	p.off = off
	return draw.Block(out, p.w, p.h)
}

// tableCount is a table's size after its name: rows, how many of them
// and of the columns are shown, in the fullest words that fit in w
// ("  50 rows, the last 20 shown · 6 of 10 columns", down to "  50 rows,
// last 20 · 6/10 cols").
func tableCount(total, rows, shown, cols, w int) string {
	count := fmt.Sprintf("  %d rows", total)
	if total == 1 {
		count = "  1 row"
	}
	var forms []string
	for _, last := range []string{", the last %d shown", ", last %d"} {
		c := count
		if rows < total {
			c += fmt.Sprintf(last, rows)
		}
		for _, cs := range []string{" · %d of %d columns", " · %d/%d cols"} {
			if shown < cols {
				forms = append(forms, c+fmt.Sprintf(cs, shown, cols))
			} else {
				forms = append(forms, c)
			}
		}
	}
	for _, f := range forms {
		if draw.Width(f) <= w {
			return f
		}
	}
	return forms[len(forms)-1]
}

// table lays the columns out to fit: each as wide as its widest cell; when
// the panel is narrow the last columns go first (the source puts the ones
// a learner watches first), then the widest are shrunk. It returns the
// rows and how many columns it shows.
func (p *Services) table(t view.Table) ([]string, int) {
	st := p.ctx.Styles
	if len(t.Columns) == 0 {
		return nil, 0
	}
	ws := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		ws[i] = draw.Width(c)
	}
	for _, r := range t.Rows {
		for i := 0; i < len(r) && i < len(ws); i++ {
			ws[i] = max(ws[i], min(draw.Width(r[i]), 40))
		}
	}
	// Keep the columns that fit at up to minCol cells each.
	const minCol = 10
	need := func(ws []int) int {
		n := len(ws) - 1
		for _, w := range ws {
			n += min(w, minCol)
		}
		return n
	}
	for len(ws) > 1 && need(ws) > p.w-2 {
		ws = ws[:len(ws)-1]
	}
	avail := p.w - 2 - (len(ws) - 1)
	for sum(ws) > avail {
		wi := 0
		for i := range ws {
			if ws[i] > ws[wi] {
				wi = i
			}
		}
		if ws[wi] <= 4 {
			break
		}
		ws[wi]--
	}
	render := func(cells []string, s *draw.Style) string {
		var l draw.Line
		l.Add(nil, "  ")
		for i := range ws {
			if i > 0 {
				l.Add(nil, " ")
			}
			v := ""
			if i < len(cells) {
				v = cells[i]
			}
			cs := s
			if s == nil {
				cs = cellStyle(st, v)
			}
			l.Add(cs, draw.Fit(v, ws[i]))
		}
		return l.Fit(p.w)
	}
	rows := []string{render(t.Columns, &st.Faint)}
	for _, r := range t.Rows {
		rows = append(rows, render(r, nil))
	}
	return rows, len(ws)
}

// cellStyle colours the words a learner watches for; the word itself is
// always there.
func cellStyle(st *draw.Styles, v string) *draw.Style {
	switch strings.ToLower(v) {
	case "pending":
		return &st.Warn
	case "sent", "done", "ok", "processed":
		return &st.OK
	case "failed", "error":
		return &st.Fail
	}
	return &st.Text
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}
