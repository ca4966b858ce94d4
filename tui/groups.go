package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mqlab/mqlab/tui/view"
)

// groupsPanel draws consumer groups: members and what each is assigned,
// the generation, and per partition the committed offset and the lag.
type groupsPanel struct {
	ctx  *Context
	w, h int
	off  int
}

func newGroupsPanel(ctx *Context) *groupsPanel { return &groupsPanel{ctx: ctx} }

func (p *groupsPanel) Title() string    { return "Groups" }
func (p *groupsPanel) SetSize(w, h int) { p.w, p.h = w, h }
func (p *groupsPanel) Scroll(d int)     { p.off = max(0, p.off+d) }

func (p *groupsPanel) View() string {
	st := p.ctx.Styles
	gs := p.ctx.State.Groups
	if len(gs) == 0 {
		return block(emptyHint(p.ctx, "No consumer groups.", "No consumer groups. Start a consumer with", "  :consumer start c1 group=billing topic=orders"), p.w, p.h)
	}
	var rows []string
	for gi, g := range gs {
		if gi > 0 {
			rows = append(rows, "")
		}
		var l line
		l.add(&st.Header, g.Name)
		if g.Topic != "" {
			l.add(&st.Muted, " on ")
			l.add(&st.Text, g.Topic)
		}
		l.add(&st.Muted, "  generation ")
		l.add(&st.Bold, strconv.Itoa(g.Generation))
		if g.State != "" {
			s := &st.Muted
			if g.State == "rebalancing" {
				s = &st.Warn
			}
			l.add(s, "  "+g.State)
		}
		var lg line
		lg.add(&st.Muted, "lag ")
		lg.add(lagStyle(st, g.Lag), fmt.Sprintf("%d msgs · %s", g.Lag, seconds(g.LagSeconds)))
		if l.w+2+lg.w <= p.w {
			l.add(nil, "  ")
			l.b.WriteString(lg.b.String())
			l.w += lg.w
			rows = append(rows, l.fit(p.w))
		} else {
			rows = append(rows, l.fit(p.w), "  "+lg.fit(p.w-2))
		}

		idW := 4
		for _, m := range g.Members {
			idW = max(idW, textWidth(m.ID))
		}
		for _, m := range g.Members {
			var ml line
			ml.add(nil, "  ")
			ml.add(&st.Bold, m.ID)
			ml.pad(2 + idW + 1)
			switch m.State {
			case "crashed":
				ml.add(&st.Down, symDown+" crashed")
			case "stopped":
				ml.add(&st.Muted, "■ stopped")
			case "joining":
				ml.add(&st.Warn, symCandidate+" joining")
			default:
				ml.add(&st.OK, symUp+" up")
			}
			ml.pad(2 + idW + 1 + 10)
			if len(m.Partitions) == 0 {
				ml.add(&st.Warn, "idle")
				ml.add(&st.Muted, " (no partition)")
			} else {
				ml.add(&st.Muted, "▸ ")
				ml.add(&st.Text, strings.Join(m.Partitions, ", "))
			}
			rows = append(rows, ml.fit(p.w))
		}
		if len(g.Offsets) > 0 {
			rows = append(rows, p.offsets(g.Offsets)...)
		}
	}
	out, off := window(rows, p.off, p.h, st)
	p.off = off
	return block(out, p.w, p.h)
}

// offsets is the group's table: committed offset, hwm and lag per
// partition, columns as wide as their numbers.
func (p *groupsPanel) offsets(os []view.GroupOffset) []string {
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
			ws[c] = max(ws[c], textWidth(cells[i][c]))
		}
	}
	cell := func(c int, v string) string {
		if c == 0 {
			return fit(v, ws[c])
		}
		return spaces(ws[c]-textWidth(v)) + v
	}
	var hl line
	hl.add(nil, "  ")
	for c, h := range []string{"partition", "committed", "hwm", "lag", "lag s"} {
		if c > 0 {
			hl.add(nil, "  ")
		}
		hl.add(&st.Faint, cell(c, h))
	}
	rows := []string{hl.fit(p.w)}
	for i, o := range os {
		var l line
		l.add(nil, "  ")
		for c := range ws {
			if c > 0 {
				l.add(nil, "  ")
			}
			s := &st.Text
			if c == 3 {
				s = lagStyle(st, o.Lag)
			}
			l.add(s, cell(c, cells[i][c]))
		}
		rows = append(rows, l.fit(p.w))
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

func lagStyle(st *Styles, lag int64) *lipglossStyle {
	if lag > 0 {
		return &st.Warn
	}
	return &st.OK
}
