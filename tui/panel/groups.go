package panel

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/view"
)

// Groups draws consumer groups: members and what each is assigned,
// the generation, and per partition the committed offset and the lag.
type Groups struct {
	ctx  *Context
	w, h int
	scrolled
}

func NewGroups(ctx *Context) *Groups { return &Groups{ctx: ctx, scrolled: scrolled{keys: ctx.Scroll}} }

func (p *Groups) Title() string    { return "Groups" }
func (p *Groups) SetSize(w, h int) { p.w, p.h = w, h }

func (p *Groups) View() string {
	st := p.ctx.Styles
	gs := p.ctx.State.Groups
	if len(gs) == 0 {
		return draw.Block(emptyHint(p.ctx, "No consumer groups.", "No consumer groups. Start a consumer with", "  :consumer start c1 group=billing topic=orders"), p.w, p.h)
	}
	var rows []string
	for gi, g := range gs {
		if gi > 0 {
			rows = append(rows, "")
		}
		var l draw.Line
		l.Add(&st.Header, g.Name)
		if g.Topic != "" {
			l.Add(&st.Muted, " on ")
			l.Add(&st.Text, g.Topic)
		}
		l.Add(&st.Muted, "  generation ")
		l.Add(&st.Bold, strconv.Itoa(g.Generation))
		if g.State != "" {
			s := &st.Muted
			if g.State == "rebalancing" {
				s = &st.Warn
			}
			l.Add(s, "  "+g.State)
		}
		var lg draw.Line
		lg.Add(&st.Muted, "lag ")
		lg.Add(lagStyle(st, g.Lag), fmt.Sprintf("%d offsets · %s", g.Lag, seconds(g.LagSeconds)))
		if l.Width()+2+lg.Width() <= p.w {
			l.Add(nil, "  ")
			l.Append(&lg)
			rows = append(rows, l.Fit(p.w))
		} else {
			rows = append(rows, l.Fit(p.w), "  "+lg.Fit(p.w-2))
		}

		idW := 4
		for _, m := range g.Members {
			idW = max(idW, draw.Width(m.ID))
		}
		for _, m := range g.Members {
			var ml draw.Line
			ml.Add(nil, "  ")
			ml.Add(&st.Bold, m.ID)
			ml.Pad(2 + idW + 1)
			switch m.State {
			case "crashed":
				ml.Add(&st.Down, draw.SymDown+" crashed")
			case "stopped":
				ml.Add(&st.Muted, "■ stopped")
			case "joining":
				ml.Add(&st.Warn, draw.SymCandidate+" joining")
			default:
				ml.Add(&st.OK, draw.SymUp+" up")
			}
			ml.Pad(2 + idW + 1 + 10)
			if len(m.Partitions) == 0 {
				ml.Add(&st.Warn, "idle")
				ml.Add(&st.Muted, " (no partition)")
			} else {
				ml.Add(&st.Muted, "▸ ")
				ml.Add(&st.Text, strings.Join(m.Partitions, ", "))
			}
			rows = append(rows, ml.Fit(p.w))
		}
		if len(g.Offsets) > 0 {
			rows = append(rows, p.offsets(g.Offsets)...)
		}
	}
	out, off := draw.Window(rows, p.off, p.h, st)
	p.off = off
	return draw.Block(out, p.w, p.h)
}

// offsets is the group's table: committed offset, hwm and lag per
// partition, columns as wide as their numbers.
func (p *Groups) offsets(os []view.GroupOffset) []string {
	st := p.ctx.Styles
	cells := make([][5]string, len(os))
	ws := [5]int{len("partition"), len("committed"), len("hwm"), len("lag"), len("lag s")}
	for i, o := range os {
		committed := "—"
		if o.Committed >= 0 {
			committed = strconv.FormatInt(o.Committed, 10)
		}
		cells[i] = [5]string{o.Partition, committed, strconv.FormatInt(o.HWM, 10), strconv.FormatInt(o.Lag, 10), seconds(o.LagSeconds)}
		for c := range ws {
			ws[c] = max(ws[c], draw.Width(cells[i][c]))
		}
	}
	cell := func(c int, v string) string {
		if c == 0 {
			return draw.Fit(v, ws[c])
		}
		return draw.Spaces(ws[c]-draw.Width(v)) + v
	}
	var hl draw.Line
	hl.Add(nil, "  ")
	for c, h := range []string{"partition", "committed", "hwm", "lag", "lag s"} {
		if c > 0 {
			hl.Add(nil, "  ")
		}
		hl.Add(&st.Faint, cell(c, h))
	}
	rows := []string{hl.Fit(p.w)}
	for i, o := range os {
		var l draw.Line
		l.Add(nil, "  ")
		for c := range ws {
			if c > 0 {
				l.Add(nil, "  ")
			}
			s := &st.Text
			if c == 3 {
				s = lagStyle(st, o.Lag)
			}
			l.Add(s, cell(c, cells[i][c]))
		}
		rows = append(rows, l.Fit(p.w))
	}
	return rows
}

func seconds(s float64) string {
	switch {
	case s <= 0:
		return "0s"
	case s < 10:
		return strconv.FormatFloat(s, 'f', 1, 64) + "s"
	default:
		return strconv.FormatFloat(s, 'f', 0, 64) + "s"
	}
}

func lagStyle(st *draw.Styles, lag int64) *draw.Style {
	if lag > 0 {
		return &st.Warn
	}
	return &st.OK
}
