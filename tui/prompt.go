package tui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

// prompt is the ':' command line: a text input with a history of what was
// typed (↑/↓) and completion of command names (tab).
type prompt struct {
	in       textinput.Model
	commands []string
	hist     []string
	pos      int // index into hist while browsing; len(hist) for the draft
	draft    string
	keys     promptKeys
}

type promptKeys struct {
	Submit, Cancel, Older, Newer key.Binding
}

func newPrompt(st *draw.Styles, commands []string) *prompt {
	in := textinput.New()
	in.Prompt = ": "
	in.PromptStyle = st.Key.Style
	in.TextStyle = st.Text.Style
	in.PlaceholderStyle = st.Faint.Style
	in.CompletionStyle = st.Faint.Style
	in.Placeholder = "a lab command, e.g. kill n2 · help"
	in.ShowSuggestions = true
	in.CharLimit = 500
	// ↑/↓ walk the history; ctrl+n/ctrl+p cycle suggestions.
	in.KeyMap.NextSuggestion = key.NewBinding(key.WithKeys("ctrl+n"))
	in.KeyMap.PrevSuggestion = key.NewBinding(key.WithKeys("ctrl+p"))
	if len(commands) == 0 {
		commands = append(LabCommands(), source.LessonCommands...)
	}
	return &prompt{
		in:       in,
		commands: commands,
		keys: promptKeys{
			Submit: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run")),
			Cancel: key.NewBinding(key.WithKeys("esc", "ctrl+c"), key.WithHelp("esc", "cancel")),
			Older:  key.NewBinding(key.WithKeys("up"), key.WithHelp("↑/↓", "history")),
			Newer:  key.NewBinding(key.WithKeys("down")),
		},
	}
}

func (p *prompt) active() bool { return p.in.Focused() }

// open focuses the input, with completions for these nodes: the
// prompt's commands that take a node first complete "kill n2" as well as
// "kill".
func (p *prompt) open(nodes []view.Node) tea.Cmd {
	sug := append([]string(nil), p.commands...)
	for _, sp := range command.Specs() {
		if !strings.HasPrefix(sp.Args, "NODE") || !slices.Contains(p.commands, sp.Name) {
			continue
		}
		for _, n := range nodes {
			sug = append(sug, sp.Name+" "+n.ID)
		}
	}
	p.in.SetSuggestions(sug)
	p.in.Reset()
	p.pos = len(p.hist)
	p.draft = ""
	return p.in.Focus()
}

func (p *prompt) close() { p.in.Blur(); p.in.Reset() }

// promptResult is what a key did to the prompt.
type promptResult int

const (
	promptTyping promptResult = iota
	promptSubmitted
	promptCancelled
)

// update handles one message while the prompt is open. On submit it
// returns the line and records it in the history.
func (p *prompt) update(msg tea.Msg) (promptResult, string, tea.Cmd) {
	if km, ok := msg.(tea.KeyMsg); ok {
		switch {
		case key.Matches(km, p.keys.Submit):
			line := strings.TrimSpace(p.in.Value())
			if line != "" && (len(p.hist) == 0 || p.hist[len(p.hist)-1] != line) {
				p.hist = append(p.hist, line)
				if len(p.hist) > 200 {
					p.hist = p.hist[len(p.hist)-200:]
				}
			}
			p.close()
			return promptSubmitted, line, nil
		case key.Matches(km, p.keys.Cancel):
			p.close()
			return promptCancelled, "", nil
		case key.Matches(km, p.keys.Older):
			if p.pos > 0 {
				if p.pos == len(p.hist) {
					p.draft = p.in.Value()
				}
				p.pos--
				p.in.SetValue(p.hist[p.pos])
				p.in.CursorEnd()
			}
			return promptTyping, "", nil
		case key.Matches(km, p.keys.Newer):
			if p.pos < len(p.hist) {
				p.pos++
				if p.pos == len(p.hist) {
					p.in.SetValue(p.draft)
				} else {
					p.in.SetValue(p.hist[p.pos])
				}
				p.in.CursorEnd()
			}
			return promptTyping, "", nil
		}
	}
	var cmd tea.Cmd
	p.in, cmd = p.in.Update(msg)
	return promptTyping, "", cmd
}

// view draws the prompt in one row of w cells, with what tab would
// complete to spelled out (the inline completion is faint, and without
// colour faint is invisible).
func (p *prompt) view(st *draw.Styles, w int) string {
	hint := ""
	if m := p.in.MatchedSuggestions(); len(m) > 0 && p.in.Value() != "" && m[0] != p.in.Value() {
		hint = "tab → " + p.in.CurrentSuggestion()
	} else {
		hint = "enter runs · esc cancels · ↑/↓ history"
	}
	hw := min(draw.Width(hint), w/2)
	p.in.Width = max(1, w-hw-4)
	var l draw.Line
	l.AddStyled(p.in.View(), draw.Width(p.in.View()))
	l.Pad(w - hw)
	l.Add(&st.Faint, draw.Cut(hint, hw))
	return l.Fit(w)
}

// ParseOrder reads a typed line once: a lab command, or a line the source
// may read itself (a lesson command, a recording's step), with why it is
// no lab command. The screen classifies and runs what it returns and
// never parses the line again.
func ParseOrder(line string) view.Order {
	cmd, err := command.Parse(line)
	if err != nil {
		return view.Order{Line: line, Err: err}
	}
	return view.Order{Line: line, Cmd: cmd}
}

// LabCommands are the lab's command names for the prompt's completion,
// read from the command table, with the words that must follow some of
// them spelled out ("consumer start", "drop next reply to").
func LabCommands() []string {
	var out []string
	for _, sp := range command.Specs() {
		first, _, _ := strings.Cut(sp.Args, " ")
		switch {
		case first != "" && isWords(first):
			for _, w := range strings.Split(first, "|") {
				out = append(out, sp.Name+" "+w)
			}
		default:
			out = append(out, sp.Name)
		}
	}
	return out
}

// ClockCommands are the commands that only pace lab time, which a
// recording accepts, for the prompt's completion.
func ClockCommands() []string {
	var out []string
	for _, sp := range command.Specs() {
		if sp.Traits&command.TraitClock != 0 {
			out = append(out, sp.Name)
		}
	}
	return out
}

// isWords says whether an argument is literal words ("start|stop", "to")
// rather than a placeholder ("NODE", "[COMMAND]").
func isWords(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && r != '|' && r != '-' {
			return false
		}
	}
	return true
}
