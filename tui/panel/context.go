package panel

import (
	"fmt"
	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/mqlab/mqlab/tui/keys"

	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/view"
)

// Context is what every panel shares, held by pointer: the screen size,
// styles, keys, the source, the state being drawn (live or from history),
// the selected node and what is flashing.
type Context struct {
	Width, Height int
	Styles        *draw.Styles
	Keys          *keys.KeyMap
	// Scroll are the keys every panel scrolls with.
	Scroll *ScrollKeys
	Src    view.Source
	// Notify, when set, shows a panel's word about what a key did in the
	// screen's status line.
	Notify func(text string)

	// State is the moment the panels draw: the live state, or a past one
	// while the learner looks back in history.
	State *view.State
	// InHistory is true while State is a past moment.
	InHistory bool
	// Selected is the index of the selected node in State.Nodes.
	Selected int
	// Focus is the focused panel: ↑/↓ scroll it.
	Focus ID

	// Title names what is open when no lesson is: "Sandbox", or a
	// recording. ReadOnly is true for a recording.
	Title    string
	About    string // the lesson pane's text when no lesson is open; "" for the sandbox's
	ReadOnly bool
	// Follow is true on a student's screen that follows a teacher's lab.
	Follow bool

	// Frame counts flash ticks; flashes alternate on its parity.
	Frame int
	// TruncFlash holds, per truncation key, the frames it still flashes.
	TruncFlash map[string]int
	// EpochFlash holds partitions whose epoch just changed.
	EpochFlash map[string]EpochChange
}

type EpochChange struct {
	From, To uint64
	Frames   int
}

func NewContext(src view.Source, st *draw.Styles, keys *keys.KeyMap) *Context {
	return &Context{
		Src:        src,
		Styles:     st,
		Keys:       keys,
		Scroll:     DefaultScrollKeys(),
		State:      &view.State{},
		Title:      "Sandbox",
		TruncFlash: map[string]int{},
		EpochFlash: map[string]EpochChange{},
	}
}

// notify passes a panel's word on to the screen.
func (c *Context) notify(text string) {
	if c.Notify != nil {
		c.Notify(text)
	}
}

// SelectedNode returns the id of the selected node, or "".
func (c *Context) SelectedNode() string {
	if c.State == nil || c.Selected < 0 || c.Selected >= len(c.State.Nodes) {
		return ""
	}
	return c.State.Nodes[c.Selected].ID
}

func TruncKey(part, node string, t *view.Truncation) string {
	return fmt.Sprintf("%s@%s#%d/%d-%d", part, node, t.At.UnixNano(), t.From, t.To)
}

// flashing says whether a truncation is flashing now, and on which phase.
func (c *Context) flashing(key string) (on, active bool) {
	if c.InHistory {
		return false, false
	}
	n := c.TruncFlash[key]
	if n <= 0 {
		return false, false
	}
	return c.Frame%2 == 0, true
}

// Component is one panel of the lab screen: it draws itself at the size
// it is given and takes its own keys.
type Component interface {
	Title() string
	SetSize(w, h int)
	// View draws exactly the size set, w cells by h rows.
	View() string
	// Scroll moves the panel's view by whole rows (or items): the mouse
	// wheel, and a new lesson step bringing the lesson to its top.
	Scroll(delta int)
	// Update takes a message for the panel and says whether it was one of
	// the panel's keys. focused: the panel has the focus; without it a
	// panel takes only the keys that act wherever it is on screen.
	Update(msg tea.Msg, focused bool) bool
	// ShortHelp and FullHelp are the panel's keys, for the help.
	help.KeyMap
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
