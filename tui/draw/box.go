package draw

import (
	"fmt"
	"strings"
)

// Boxes and scrolled windows: the frame every panel and the picker draw
// in, and the rows of a view scrolled to an offset.

// Frame draws a panel's box: a border whose top line carries the title or
// the slot's tabs. Focus is a heavy border, so it shows without colour too.
func Frame(st *Styles, tabs []string, active int, focused bool, body string, w, h int) string {
	bs := st.Border
	tl, tr, bl, br, hz, vt := "╭", "╮", "╰", "╯", "─", "│"
	if focused {
		bs = st.BorderFocused
		tl, tr, bl, br, hz, vt = "┏", "┓", "┗", "┛", "━", "┃"
	}
	var b strings.Builder
	// Top border with tabs.
	var top Line
	top.Add(&bs, tl+hz)
	for i, t := range tabs {
		if i > 0 {
			top.Add(&bs, hz)
		}
		switch {
		case i == active && len(tabs) > 1:
			ts := st.TabActive
			if focused {
				ts = st.TitleFocused
			}
			top.Add(&ts, "["+t+"]")
		case i == active:
			ts := st.Title
			if focused {
				ts = st.TitleFocused
			}
			top.Add(&bs, " ")
			top.Add(&ts, t)
			top.Add(&bs, " ")
		default:
			top.Add(&st.Tab, " "+t+" ")
		}
	}
	if top.Width() > w-1 {
		b.WriteString(Cut(top.String(), w-1))
	} else {
		b.WriteString(top.String())
		b.WriteString(bs.Render(strings.Repeat(hz, w-1-top.Width())))
	}
	b.WriteString(bs.Render(tr))
	b.WriteByte('\n')
	left, right := bs.Render(vt), bs.Render(vt)
	rows := strings.Split(body, "\n")
	for i := 0; i < h-2; i++ {
		b.WriteString(left)
		if i < len(rows) {
			b.WriteString(Fit(rows[i], w-2))
		} else {
			b.WriteString(Spaces(w - 2))
		}
		b.WriteString(right)
		b.WriteByte('\n')
	}
	b.WriteString(bs.Render(bl + strings.Repeat(hz, max(0, w-2)) + br))
	return b.String()
}

// TabSpans returns where each tab's label lies on the top border, as
// [start, end) columns from the Frame's left edge, for mouse clicks.
func TabSpans(tabs []string, active int) [][2]int {
	spans := make([][2]int, len(tabs))
	x := 2
	for i, t := range tabs {
		if i > 0 {
			x++
		}
		wd := Width(t) + 2
		spans[i] = [2]int{x, x + wd}
		x += wd
	}
	_ = active
	return spans
}

// Window returns the rows of a scrolled view of h rows and the clamped
// offset; when rows remain below, the last visible row says how many.
func Window(rows []string, off, h int, st *Styles) ([]string, int) {
	return WindowNote(rows, off, h, st, "(focus with tab, scroll ↑/↓)")
}

// WindowNote is Window with its own words for how to scroll.
func WindowNote(rows []string, off, h int, st *Styles, how string) ([]string, int) {
	if h <= 0 {
		return nil, 0
	}
	if off > len(rows)-h {
		off = len(rows) - h
	}
	if off < 0 {
		off = 0
	}
	end := min(len(rows), off+h)
	out := append([]string(nil), rows[off:end]...)
	if end < len(rows) && len(out) > 0 {
		out[len(out)-1] = st.Muted.Render(fmt.Sprintf("↓ %d more %s", len(rows)-end, how))
	}
	if off > 0 && len(out) > 1 {
		out[0] = st.Muted.Render(fmt.Sprintf("↑ %d above", off))
	}
	return out, off
}
