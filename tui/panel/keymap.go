package panel

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// A panel's own keys. The screen offers a key to the focused panel
// first, then to the panels on screen that take keys without the focus
// (the timeline's filter); only what no panel takes reaches the screen's
// keys.

// ScrollKeys move a panel's view while it has the focus. Every panel
// that scrolls takes the same ones, and so does the screen's output pane.
type ScrollKeys struct {
	Up, Down key.Binding
}

// DefaultScrollKeys are ↑/↓ and page up/down.
func DefaultScrollKeys() *ScrollKeys {
	return &ScrollKeys{
		Up:   key.NewBinding(key.WithKeys("up", "pgup"), key.WithHelp("↑/↓", "scroll the panel")),
		Down: key.NewBinding(key.WithKeys("down", "pgdown"), key.WithHelp("↓", "scroll down")),
	}
}

// ShortHelp is empty: the help bar leaves scrolling to the full help.
func (k *ScrollKeys) ShortHelp() []key.Binding { return nil }

// FullHelp names scrolling once, for both keys.
func (k *ScrollKeys) FullHelp() [][]key.Binding { return [][]key.Binding{{k.Up}} }

// scrolled is a panel that scrolls by whole rows (or items): its offset,
// moved by the scroll keys while it has the focus.
type scrolled struct {
	off  int
	keys *ScrollKeys
}

// Scroll moves the view by delta rows.
func (s *scrolled) Scroll(delta int) { s.off = max(0, s.off+delta) }

// Update scrolls on the scroll keys while the panel has the focus, and
// says whether the key was one of them.
func (s *scrolled) Update(msg tea.Msg, focused bool) bool {
	km, ok := msg.(tea.KeyMsg)
	if !ok || !focused {
		return false
	}
	switch {
	case key.Matches(km, s.keys.Up):
		s.Scroll(-1)
	case key.Matches(km, s.keys.Down):
		s.Scroll(1)
	default:
		return false
	}
	return true
}

// ShortHelp and FullHelp are the scroll keys'.
func (s *scrolled) ShortHelp() []key.Binding  { return s.keys.ShortHelp() }
func (s *scrolled) FullHelp() [][]key.Binding { return s.keys.FullHelp() }

// TimelineKeys are the timeline's own: f cycles its filter through the
// kinds of event present, whenever the timeline is on screen.
type TimelineKeys struct {
	Filter key.Binding
}

// ShortHelp is the filter.
func (k *TimelineKeys) ShortHelp() []key.Binding { return []key.Binding{k.Filter} }

// FullHelp is the filter.
func (k *TimelineKeys) FullHelp() [][]key.Binding { return [][]key.Binding{{k.Filter}} }
