// Package draw is how the screen draws text: the theme and its styles,
// lines fitted to a width, wrapping, Markdown, and the boxes panels sit in.
package draw

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Theme names every colour the screen uses by what it means. Each is an
// AdaptiveColor, so light and dark terminals both read well. Colour is never
// the only carrier of a state: every coloured thing has a symbol or a word.
type Theme struct {
	Text        lipgloss.AdaptiveColor
	Muted       lipgloss.AdaptiveColor
	Faint       lipgloss.AdaptiveColor
	Accent      lipgloss.AdaptiveColor
	Border      lipgloss.AdaptiveColor
	FocusBorder lipgloss.AdaptiveColor
	OK          lipgloss.AdaptiveColor
	Fail        lipgloss.AdaptiveColor
	Warn        lipgloss.AdaptiveColor
	Leader      lipgloss.AdaptiveColor
	Committed   lipgloss.AdaptiveColor
	Uncommitted lipgloss.AdaptiveColor
	Truncated   lipgloss.AdaptiveColor
	Selected    lipgloss.AdaptiveColor
	SelectedFg  lipgloss.AdaptiveColor
	Banner      lipgloss.AdaptiveColor
	BannerFg    lipgloss.AdaptiveColor
}

// DefaultTheme has strong contrast for a projector: no pastel on white.
var DefaultTheme = Theme{
	Text:        lipgloss.AdaptiveColor{Light: "#1a1a1a", Dark: "#e8e8e8"},
	Muted:       lipgloss.AdaptiveColor{Light: "#555555", Dark: "#a0a0a0"},
	Faint:       lipgloss.AdaptiveColor{Light: "#8a8a8a", Dark: "#6c6c6c"},
	Accent:      lipgloss.AdaptiveColor{Light: "#5b2bb5", Dark: "#b69cff"},
	Border:      lipgloss.AdaptiveColor{Light: "#9a9a9a", Dark: "#5a5a5a"},
	FocusBorder: lipgloss.AdaptiveColor{Light: "#5b2bb5", Dark: "#b69cff"},
	OK:          lipgloss.AdaptiveColor{Light: "#0b7a2a", Dark: "#5fd787"},
	Fail:        lipgloss.AdaptiveColor{Light: "#c0001a", Dark: "#ff6b6b"},
	Warn:        lipgloss.AdaptiveColor{Light: "#9a5b00", Dark: "#ffc24b"},
	Leader:      lipgloss.AdaptiveColor{Light: "#8a4b00", Dark: "#ffcf5c"},
	Committed:   lipgloss.AdaptiveColor{Light: "#0a5fb4", Dark: "#6cb6ff"},
	Uncommitted: lipgloss.AdaptiveColor{Light: "#7a7a7a", Dark: "#9a9a9a"},
	Truncated:   lipgloss.AdaptiveColor{Light: "#c0001a", Dark: "#ff6b6b"},
	Selected:    lipgloss.AdaptiveColor{Light: "#5b2bb5", Dark: "#b69cff"},
	SelectedFg:  lipgloss.AdaptiveColor{Light: "#ffffff", Dark: "#1a1a1a"},
	Banner:      lipgloss.AdaptiveColor{Light: "#9a5b00", Dark: "#ffc24b"},
	BannerFg:    lipgloss.AdaptiveColor{Light: "#ffffff", Dark: "#1a1a1a"},
}

// Styles are every style the screen draws with, built once from a Theme.
type Styles struct {
	Text, Muted, Faint, Bold Style
	Accent                   Style
	Title, TitleFocused      Style
	Tab, TabActive           Style
	Border, BorderFocused    Style
	OK, Fail, Warn           Style
	Leader, Down, Isolated   Style
	Committed, Uncommitted   Style
	Truncated, Flash         Style
	Selected                 Style
	Banner                   Style
	Header, Key              Style
	Bar, BarEmpty            Style
	Help                     help.Styles // the help bubble's, from the same theme
	// NoColor: the terminal shows no colour or weight (NO_COLOR, a dumb
	// terminal), so what a style alone would set apart keeps its marks:
	// inline code its backticks.
	NoColor bool
}

// Style is a lipgloss style with its escape codes worked out once: a wide
// frame draws hundreds of short runs, and lipgloss's Render costs
// microseconds each where two concatenations cost nanoseconds.
type Style struct {
	lipgloss.Style
	pre, post string
	slow      bool // underlined: lipgloss treats spaces apart
}

// sentinel is a private-use rune no text of ours contains.
const sentinel = "\uE000"

func mkStyle(s lipgloss.Style) Style {
	if s.GetUnderline() || s.GetStrikethrough() {
		return Style{Style: s, slow: true}
	}
	r := s.Render(sentinel)
	i := strings.Index(r, sentinel)
	if i < 0 {
		return Style{Style: s}
	}
	return Style{Style: s, pre: r[:i], post: r[i+len(sentinel):]}
}

// Render draws one line of text in the style.
func (s *Style) Render(text string) string {
	if s.slow || strings.IndexByte(text, '\n') >= 0 {
		return s.Style.Render(text)
	}
	if s.pre == "" && s.post == "" {
		return text
	}
	return s.pre + text + s.post
}

// NewStyles builds every style from a theme, for the colour profile of
// the terminal in use.
func NewStyles(t Theme) *Styles { return NewStylesFor(t, nil) }

// NewStylesFor builds every style from a theme for the terminal r draws
// on: its colour profile and whether its background is dark. A screen
// served over SSH draws on the learner's terminal, not the server's. Nil
// is the process's own terminal.
func NewStylesFor(t Theme, r *lipgloss.Renderer) *Styles {
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	fg := func(c lipgloss.AdaptiveColor) lipgloss.Style { return r.NewStyle().Foreground(c) }
	s := &Styles{
		Text:          mkStyle(fg(t.Text)),
		Muted:         mkStyle(fg(t.Muted)),
		Faint:         mkStyle(fg(t.Faint)),
		Bold:          mkStyle(fg(t.Text).Bold(true)),
		Accent:        mkStyle(fg(t.Accent).Bold(true)),
		Title:         mkStyle(fg(t.Muted).Bold(true)),
		TitleFocused:  mkStyle(fg(t.FocusBorder).Bold(true)),
		Tab:           mkStyle(fg(t.Muted)),
		TabActive:     mkStyle(fg(t.Accent).Bold(true).Underline(true)),
		Border:        mkStyle(fg(t.Border)),
		BorderFocused: mkStyle(fg(t.FocusBorder)),
		OK:            mkStyle(fg(t.OK).Bold(true)),
		Fail:          mkStyle(fg(t.Fail).Bold(true)),
		Warn:          mkStyle(fg(t.Warn).Bold(true)),
		Leader:        mkStyle(fg(t.Leader).Bold(true)),
		Down:          mkStyle(fg(t.Fail).Bold(true)),
		Isolated:      mkStyle(fg(t.Warn).Bold(true)),
		Committed:     mkStyle(fg(t.Committed)),
		Uncommitted:   mkStyle(fg(t.Uncommitted)),
		Truncated:     mkStyle(fg(t.Truncated).Bold(true)),
		Flash:         mkStyle(r.NewStyle().Foreground(t.SelectedFg).Background(t.Truncated).Bold(true)),
		Selected:      mkStyle(r.NewStyle().Foreground(t.SelectedFg).Background(t.Selected).Bold(true)),
		Banner:        mkStyle(r.NewStyle().Foreground(t.BannerFg).Background(t.Banner).Bold(true)),
		Header:        mkStyle(fg(t.Text).Bold(true)),
		Key:           mkStyle(fg(t.Accent).Bold(true)),
		Bar:           mkStyle(fg(t.Accent)),
		BarEmpty:      mkStyle(fg(t.Faint)),
	}
	s.NoColor = r.ColorProfile() == termenv.Ascii
	key, desc, sep := fg(t.Accent).Bold(true), fg(t.Muted), fg(t.Faint)
	s.Help = help.Styles{ShortKey: key, ShortDesc: desc, ShortSeparator: sep,
		FullKey: key, FullDesc: desc, FullSeparator: sep, Ellipsis: sep}
	return s
}

// Symbols carry every state without colour.
const (
	SymLeader      = "▲"
	SymDown        = "✗"
	SymUp          = "●"
	SymCommitted   = "●"
	SymUncommitted = "○"
	SymLearning    = "◐" // committed; this replica has not heard so yet
	SymTruncated   = "✂"
	SymSegment     = "¦" // a segment file begins at the next offset
	SymIsolated    = "⊘"
	SymSlow        = "~"
	SymOK          = "✓"
	SymFail        = "✗"
	SymPending     = "…"
	SymSelected    = "›"
	SymCandidate   = "◇"
)
