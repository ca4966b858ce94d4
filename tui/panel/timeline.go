package panel

import (
	"fmt"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"sort"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/mqlab/mqlab/tui/draw"
)

// Timeline draws the lab's events newest first. f cycles a filter
// through the kinds present, so "what got truncated?" is one key away.
type Timeline struct {
	ctx  *Context
	w, h int
	scrolled
	filter string // "" shows every kind
	// Keys are the timeline's own; the screen enables the filter while the
	// timeline is on screen.
	Keys TimelineKeys
}

func NewTimeline(ctx *Context) *Timeline {
	return &Timeline{ctx: ctx, scrolled: scrolled{keys: ctx.Scroll}, Keys: TimelineKeys{
		Filter: key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "filter timeline"), key.WithDisabled()),
	}}
}

// Update cycles the filter on f, focused or not, and scrolls while
// focused; it says whether the key was the timeline's.
func (p *Timeline) Update(msg tea.Msg, focused bool) bool {
	if km, ok := msg.(tea.KeyMsg); ok && key.Matches(km, p.Keys.Filter) {
		if f := p.CycleFilter(); f == "" {
			p.ctx.notify("timeline: every kind of event")
		} else {
			p.ctx.notify("timeline: only " + f + " (f for the next kind)")
		}
		return true
	}
	return p.scrolled.Update(msg, focused)
}

// ShortHelp is the filter.
func (p *Timeline) ShortHelp() []key.Binding { return p.Keys.ShortHelp() }

// FullHelp is scrolling and the filter.
func (p *Timeline) FullHelp() [][]key.Binding {
	return append(p.scrolled.FullHelp(), p.Keys.FullHelp()...)
}

func (p *Timeline) Title() string    { return "Timeline" }
func (p *Timeline) SetSize(w, h int) { p.w, p.h = w, h }

// kinds lists the kinds present, sorted.
func (p *Timeline) kinds() []string {
	seen := map[string]bool{}
	var ks []string
	for _, t := range p.ctx.State.Timeline {
		if !seen[t.Kind] {
			seen[t.Kind] = true
			ks = append(ks, t.Kind)
		}
	}
	sort.Strings(ks)
	return ks
}

// CycleFilter moves to the next kind, then back to all; it returns the
// filter now in force ("" for all).
func (p *Timeline) CycleFilter() string {
	ks := p.kinds()
	next := ""
	if p.filter == "" {
		if len(ks) > 0 {
			next = ks[0]
		}
	} else {
		i := sort.SearchStrings(ks, p.filter)
		if i < len(ks) && ks[i] == p.filter {
			i++
		}
		if i < len(ks) {
			next = ks[i]
		}
	}
	p.filter = next
	p.off = 0
	return next
}

func (p *Timeline) View() string {
	st := p.ctx.Styles
	tl := p.ctx.State.Timeline
	var head draw.Line
	if p.filter == "" {
		head.Add(&st.Muted, "all events, newest first")
	} else {
		head.Add(&st.Muted, "only ")
		head.Add(&st.Accent, p.filter)
	}
	head.Add(&st.Faint, " · f filters")
	rows := []string{head.Fit(p.w)}
	if len(tl) == 0 {
		rows = append(rows, st.Muted.Render("Nothing has happened yet."))
		return draw.Block(rows, p.w, p.h)
	}
	kindW := 0
	for _, t := range tl {
		kindW = max(kindW, draw.Width(t.Kind))
	}
	kindW = min(kindW, 16)
	timeW := len("15:04:05.000")
	narrow := p.w < timeW+kindW+24
	// Build only what can be seen: newest first, past the scroll offset.
	var body []string
	skipped, total, drawn := 0, 0, 0
	for i := len(tl) - 1; i >= 0; i-- {
		t := tl[i]
		if p.filter != "" && t.Kind != p.filter {
			continue
		}
		if skipped < p.off {
			skipped++
			continue
		}
		total++
		if len(body) >= p.h-1 {
			continue
		}
		drawn++
		var l draw.Line
		if narrow { // time and kind above, the sentence below
			l.Add(&st.Faint, t.Time.Format("15:04:05.0")+" ")
			l.Add(kindStyle(st, t.Kind), t.Kind)
			body = append(body, l.Fit(p.w))
			for _, s := range firstLines(draw.Wrap(t.Text, p.w-2), 2, p.w-2) {
				body = append(body, "  "+st.Text.Render(s))
			}
			continue
		}
		l.Add(&st.Faint, t.Time.Format("15:04:05.000")+" ")
		l.Add(kindStyle(st, t.Kind), draw.Fit(t.Kind, kindW)+" ")
		// Long sentences wrap under the text column.
		indent := timeW + 1 + kindW + 1
		lines := firstLines(draw.Wrap(t.Text, p.w-indent), 3, p.w-indent)
		if len(lines) == 0 {
			lines = []string{""}
		}
		l.Add(&st.Text, lines[0])
		body = append(body, l.Fit(p.w))
		for _, more := range lines[1:] {
			body = append(body, draw.Spaces(indent)+st.Text.Render(more))
		}
	}
	if p.off > 0 && skipped < p.off {
		p.off = skipped
	}
	if len(body) > p.h-1 {
		body = body[:p.h-1]
	}
	if rest := total - drawn; rest > 0 && len(body) > 0 {
		body[len(body)-1] = st.Muted.Render(fmt.Sprintf("↓ %d older (↑/↓ to scroll)", rest))
	}
	rows = append(rows, body...)
	return draw.Block(rows, p.w, p.h)
}

// kindStyle colours a kind by what it means; the kind's name is the word.
func kindStyle(st *draw.Styles, kind string) *draw.Style {
	k := strings.ToLower(kind)
	switch {
	case strings.Contains(k, "trunc"), strings.Contains(k, "lost"), strings.Contains(k, "dead"),
		strings.Contains(k, "kill"), strings.Contains(k, "crash"), strings.Contains(k, "fail"):
		return &st.Fail
	case strings.Contains(k, "leader"), strings.Contains(k, "elect"), strings.Contains(k, "step"):
		return &st.Leader
	case strings.Contains(k, "cut"), strings.Contains(k, "isolat"), strings.Contains(k, "slow"),
		strings.Contains(k, "redeliver"), strings.Contains(k, "retry"), strings.Contains(k, "fault"):
		return &st.Warn
	case strings.Contains(k, "heal"), strings.Contains(k, "restart"), strings.Contains(k, "commit"):
		return &st.OK
	}
	return &st.Muted
}

// kindTag is a short form of a kind for narrow panels.
func kindTag(kind string) string {
	if len(kind) <= 8 {
		return fmt.Sprintf("%-8s", kind)
	}
	return kind[:7] + "…"
}

// firstLines keeps at most n of a wrapped entry's lines of width w; when
// it cuts, the last one kept ends with "…", so a learner knows there is
// more (the entry's full text is in the timeline of a script or replay).
func firstLines(lines []string, n, w int) []string {
	if len(lines) <= n {
		return lines
	}
	out := append([]string(nil), lines[:n]...)
	last := out[n-1]
	if draw.Width(last) >= w {
		last = ansi.Truncate(last, max(0, w-1), "")
	}
	out[n-1] = last + "…"
	return out
}

// ShowAll shows every kind of event again.
func (p *Timeline) ShowAll() { p.filter = "" }

// Filter is the kind of event shown, or "" for every kind.
func (p *Timeline) Filter() string { return p.filter }

// Offset is how many rows the timeline is scrolled down.
func (p *Timeline) Offset() int { return p.off }
