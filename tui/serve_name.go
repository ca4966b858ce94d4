package tui

// A session that came in with the join code and no key of its own: its
// student types a name first, so that two laptops logging in as one user
// keep their progress apart.

import (
	"regexp"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/mqlab/mqlab/tui/draw"
)

// askName asks for a name, then hands the session to the program open
// makes for it; until then it quits on ctrl+c or esc.
type askName struct {
	st    *draw.Styles
	user  string
	why   []string // what the name is for
	in    textinput.Model
	open  func(name string) (tea.Model, error)
	next  tea.Model
	err   string
	w, h  int
	sized bool
}

// nameRule is what a name may be: letters, digits, '.', '_' and '-',
// up to 32; it becomes a folder.
var nameRule = regexp.MustCompile(`^[\p{L}\p{N}._-]{1,32}$`)

func newAskName(r *lipgloss.Renderer, user string, why []string, open func(name string) (tea.Model, error)) *askName {
	st := draw.NewStylesFor(draw.DefaultTheme, r)
	in := textinput.New()
	in.Prompt = "your name: "
	in.PromptStyle = st.Key.Style
	in.TextStyle = st.Text.Style
	in.CharLimit = 32
	in.Focus()
	return &askName{st: st, user: user, why: why, in: in, open: open}
}

func (a *askName) Init() tea.Cmd { return textinput.Blink }

func (a *askName) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if a.next != nil {
		return a.next.Update(msg)
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.w, a.h, a.sized = msg.Width, msg.Height, true
		return a, nil
	case tea.KeyMsg:
		switch msg.Type {
		case tea.KeyCtrlC, tea.KeyEsc:
			return a, tea.Quit
		case tea.KeyEnter:
			return a, a.submit()
		}
	}
	var cmd tea.Cmd
	a.in, cmd = a.in.Update(msg)
	return a, cmd
}

// submit opens the program for the name typed, or says what is wrong.
func (a *askName) submit() tea.Cmd {
	name := strings.TrimSpace(a.in.Value())
	if !nameRule.MatchString(name) || strings.Trim(name, ".") == "" {
		a.err = "A name is one word of letters, digits, '.', '_' or '-', up to 32: ada, ada.l, ada-2."
		return nil
	}
	next, err := a.open(name)
	if err != nil {
		a.err = err.Error()
		return nil
	}
	a.next = next
	cmds := []tea.Cmd{next.Init()}
	if a.sized {
		var cmd tea.Cmd
		a.next, cmd = a.next.Update(tea.WindowSizeMsg{Width: a.w, Height: a.h})
		cmds = append(cmds, cmd)
	}
	return tea.Batch(cmds...)
}

func (a *askName) View() string {
	if a.next != nil {
		return a.next.View()
	}
	st := a.st
	rows := []string{st.Accent.Render("mqlab") + st.Faint.Render(" │ ") + st.Header.Render("Welcome"), ""}
	for i, w := range a.why {
		s := &st.Text
		if i == len(a.why)-1 {
			s = &st.Muted
		}
		rows = append(rows, s.Render(w))
	}
	rows = append(rows, "", a.in.View())
	if a.err != "" {
		rows = append(rows, "", st.Fail.Render(draw.SymFail+" "+a.err))
	}
	rows = append(rows, "", st.Faint.Render("enter goes on · esc leaves"))
	if a.w > 0 {
		var fit []string
		for _, r := range rows {
			fit = append(fit, draw.WrapHanging(r, a.w)...)
		}
		rows = fit
	}
	return strings.Join(rows, "\n")
}
