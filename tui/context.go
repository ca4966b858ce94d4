package tui

import (
	"fmt"
	"strings"

	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/view"
)

// Context is what every panel shares, held by pointer: the screen size,
// styles, keys, the source, the state being drawn (live or from history),
// the selected node and what is flashing.
type Context struct {
	Width, Height int
	Styles        *draw.Styles
	Keys          *KeyMap
	Src           view.Source

	// State is the moment the panels draw: the live state, or a past one
	// while the learner looks back in history.
	State *view.State
	// InHistory is true while State is a past moment.
	InHistory bool
	// Selected is the index of the selected node in State.Nodes.
	Selected int
	// Focus is the focused panel: ↑/↓ scroll it.
	Focus panelID

	// Title names what is open when no lesson is: "Sandbox", or a
	// recording. ReadOnly is true for a recording.
	Title    string
	About    string // the lesson pane's text when no lesson is open; "" for the sandbox's
	ReadOnly bool
	// Follow is true on a student's screen that follows a teacher's lab.
	Follow bool

	// Frame counts flash ticks; flashes alternate on its parity.
	Frame int
	// truncFlash holds, per truncation key, the frames it still flashes.
	truncFlash map[string]int
	// epochFlash holds partitions whose epoch just changed.
	epochFlash map[string]epochChange
}

type epochChange struct {
	From, To uint64
	Frames   int
}

func newContext(src view.Source, st *draw.Styles, keys *KeyMap) *Context {
	return &Context{
		Src:        src,
		Styles:     st,
		Keys:       keys,
		State:      &view.State{},
		Title:      "Sandbox",
		truncFlash: map[string]int{},
		epochFlash: map[string]epochChange{},
	}
}

// SelectedNode returns the id of the selected node, or "".
func (c *Context) SelectedNode() string {
	if c.State == nil || c.Selected < 0 || c.Selected >= len(c.State.Nodes) {
		return ""
	}
	return c.State.Nodes[c.Selected].ID
}

func truncKey(part, node string, t *view.Truncation) string {
	return fmt.Sprintf("%s@%s#%d/%d-%d", part, node, t.At.UnixNano(), t.From, t.To)
}

// flashing says whether a truncation is flashing now, and on which phase.
func (c *Context) flashing(key string) (on, active bool) {
	if c.InHistory {
		return false, false
	}
	n := c.truncFlash[key]
	if n <= 0 {
		return false, false
	}
	return c.Frame%2 == 0, true
}

// panel is one component of the lab screen.
type panel interface {
	Title() string
	SetSize(w, h int)
	// View draws exactly the size set, w cells by h rows.
	View() string
	// Scroll moves the panel's view by whole rows (or items).
	Scroll(delta int)
}

// frame draws a panel's box: a border whose top line carries the title or
// the slot's tabs. Focus is a heavy border, so it shows without colour too.
func frame(st *draw.Styles, tabs []string, active int, focused bool, body string, w, h int) string {
	bs := st.Border
	tl, tr, bl, br, hz, vt := "╭", "╮", "╰", "╯", "─", "│"
	if focused {
		bs = st.BorderFocused
		tl, tr, bl, br, hz, vt = "┏", "┓", "┗", "┛", "━", "┃"
	}
	var b strings.Builder
	// Top border with tabs.
	var top draw.Line
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
		b.WriteString(cutStyled(top.String(), w-1))
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
			b.WriteString(draw.Fit(rows[i], w-2))
		} else {
			b.WriteString(draw.Spaces(w - 2))
		}
		b.WriteString(right)
		b.WriteByte('\n')
	}
	b.WriteString(bs.Render(bl + strings.Repeat(hz, max(0, w-2)) + br))
	return b.String()
}

// tabSpans returns where each tab's label lies on the top border, as
// [start, end) columns from the frame's left edge, for mouse clicks.
func tabSpans(tabs []string, active int) [][2]int {
	spans := make([][2]int, len(tabs))
	x := 2
	for i, t := range tabs {
		if i > 0 {
			x++
		}
		wd := draw.Width(t) + 2
		spans[i] = [2]int{x, x + wd}
		x += wd
	}
	_ = active
	return spans
}

func cutStyled(s string, w int) string { return draw.Cut(s, w) }

// window returns the rows of a scrolled view of h rows and the clamped
// offset; when rows remain below, the last visible row says how many.
func window(rows []string, off, h int, st *draw.Styles) ([]string, int) {
	return windowNote(rows, off, h, st, "(focus with tab, scroll ↑/↓)")
}

// windowNote is window with its own words for how to scroll.
func windowNote(rows []string, off, h int, st *draw.Styles, how string) ([]string, int) {
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

// emptyHint is what an empty panel says: with a live lab, how to fill it
// (the command to type); in a recording, or on a follower's screen, which
// cannot change it, only that it is empty.
func emptyHint(ctx *Context, readOnly string, live ...string) []string {
	if ctx.ReadOnly || ctx.Follow {
		return []string{ctx.Styles.Muted.Render(readOnly)}
	}
	out := make([]string, len(live))
	for i, l := range live {
		out[i] = ctx.Styles.Muted.Render(l)
	}
	return out
}

// noCluster is what the cluster panel says when there is none to show.
func (ctx *Context) noCluster() string {
	if ctx.Follow {
		return "The teacher has no lab open yet: it shows here as soon as they open one."
	}
	return "No cluster in this moment of the recording."
}
