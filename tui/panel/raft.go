package panel

import (
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/view"
)

// Raft shows one partition's raft, in the spirit of RaftScope: each
// replica's term and role, how long a follower has gone without hearing a
// leader and how soon it would stand for election, and the last
// AppendEntries and vote it sent each peer with what came back, as the
// fault network carried them. The partition is the one the learner
// picked with ←/→ while the panel has the focus, else the one the
// selected node leads, else the first with a leader.
type Raft struct {
	ctx    *Context
	w, h   int
	picked string // the partition picked with ←/→, "" to follow the selected node
	Keys   RaftKeys
	scrolled
}

// RaftKeys pick the partition the raft panel shows, while it has the focus.
type RaftKeys struct {
	Prev, Next key.Binding
}

func NewRaft(ctx *Context) *Raft {
	return &Raft{ctx: ctx, scrolled: scrolled{keys: ctx.Scroll}, Keys: RaftKeys{
		Prev: key.NewBinding(key.WithKeys("left"), key.WithHelp("←/→", "another partition (raft panel)")),
		Next: key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "the next partition")),
	}}
}

// Update picks the partition before or after the one shown on ←/→ while
// the panel has the focus, and scrolls; it says whether the key was the
// panel's.
func (p *Raft) Update(msg tea.Msg, focused bool) bool {
	km, ok := msg.(tea.KeyMsg)
	if !ok || !focused {
		return false
	}
	step := 0
	switch {
	case key.Matches(km, p.Keys.Prev):
		step = -1
	case key.Matches(km, p.Keys.Next):
		step = 1
	default:
		return p.scrolled.Update(msg, focused)
	}
	parts := p.ctx.State.Partitions
	if len(parts) == 0 {
		return true
	}
	i := 0
	if pt := p.partition(); pt != nil {
		for k := range parts {
			if parts[k].Name == pt.Name {
				i = k
			}
		}
	}
	p.picked = parts[(i+step+len(parts))%len(parts)].Name
	p.off = 0
	return true
}

// ShortHelp is empty; FullHelp names ←/→ with the scroll keys.
func (p *Raft) ShortHelp() []key.Binding { return nil }

// FullHelp lists the panel's keys.
func (p *Raft) FullHelp() [][]key.Binding {
	return append([][]key.Binding{{p.Keys.Prev}}, p.scrolled.FullHelp()...)
}

func (p *Raft) Title() string    { return "Raft" }
func (p *Raft) SetSize(w, h int) { p.w, p.h = w, h }

func (p *Raft) View() string {
	st := p.ctx.Styles
	s := p.ctx.State
	pt := p.partition()
	if pt == nil {
		return draw.Block(emptyHint(p.ctx, "No partition.", "No partition yet. Try  :topic create orders partitions=1"), p.w, p.h)
	}
	var head draw.Line
	groupHead(&head, st, pt.Name, pt.Leader)
	head.Add(&st.Muted, fmt.Sprintf("  epoch %d", pt.Epoch))
	if len(s.Partitions) > 1 {
		head.Add(&st.Faint, "  · tab here, then ←/→ picks another")
	}
	rows := []string{head.Fit(p.w)}
	for _, r := range pt.Replicas {
		rows = append(rows, p.replica(r)...)
	}
	rows, p.off = draw.Window(rows, p.off, p.h, st)
	return draw.Block(rows, p.w, p.h)
}

// partition is the one picked, else the one the selected node leads, else
// the first with a leader, else the first.
func (p *Raft) partition() *view.Partition {
	s := p.ctx.State
	for i := range s.Partitions {
		if s.Partitions[i].Name == p.picked {
			return &s.Partitions[i]
		}
	}
	name := LeaderTarget(s, p.ctx.SelectedNode())
	for i := range s.Partitions {
		if s.Partitions[i].Name == name {
			return &s.Partitions[i]
		}
	}
	if len(s.Partitions) > 0 {
		return &s.Partitions[0]
	}
	return nil
}

func (p *Raft) replica(r view.Replica) []string {
	st := p.ctx.Styles
	var l draw.Line
	l.Add(&st.Text, fmt.Sprintf("%-3s", r.Node))
	switch r.Role {
	case "leader":
		l.Add(&st.Leader, fmt.Sprintf(" %s %-9s", draw.SymLeader, r.Role))
	case "down":
		l.Add(&st.Fail, fmt.Sprintf(" %s %-9s", draw.SymFail, r.Role))
		return []string{l.Fit(p.w)}
	default:
		l.Add(&st.Muted, fmt.Sprintf("   %-9s", r.Role))
	}
	l.Add(&st.Text, fmt.Sprintf("term %d", r.Epoch))
	var rows []string
	if rv := r.Raft; rv.ElectionIn >= 0 && r.Role != "leader" {
		// When it last heard a leader and when it would stand go on to
		// rows of their own, each whole, rather than be cut at the edge.
		heard, stands := &draw.Line{}, &draw.Line{}
		heard.Add(&st.Muted, "heard a leader "+ago(rv.SinceContact))
		if rv.ElectionIn == 0 {
			stands.Add(&st.Warn, "stands for election now")
		} else {
			stands.Add(&st.Muted, "stands in ≥"+brief(rv.ElectionIn))
		}
		row := &l
		if l.Width()+2+heard.Width() <= p.w {
			l.Add(nil, "  ")
		} else {
			rows = append(rows, l.Fit(p.w))
			row = &draw.Line{}
			row.Add(nil, draw.Spaces(6))
		}
		row.Append(heard)
		rows = append(rows, flowItems(row, []*draw.Line{stands}, " · ", draw.Spaces(6), p.w)...)
	} else {
		rows = []string{l.Fit(p.w)}
	}
	for _, x := range r.Raft.Exchanges {
		if r.Role != "leader" && x.Kind == "append" {
			continue // an old append from when it led
		}
		var e draw.Line
		e.Add(&st.Faint, "→ "+x.Peer+" ")
		switch {
		case x.Kind == "append" && x.Entries == 0:
			e.Add(&st.Text, "heartbeat")
		case x.Kind == "append":
			e.Add(&st.Text, fmt.Sprintf("append %d entr%s", x.Entries, plural(x.Entries, "y", "ies")))
		case x.PreVote:
			e.Add(&st.Text, fmt.Sprintf("pre-vote for term %d", x.Term))
		default:
			e.Add(&st.Text, fmt.Sprintf("vote for term %d", x.Term))
		}
		switch {
		case x.Lost != "":
			e.Add(&st.Fail, " "+draw.SymFail+" "+x.Lost)
		case x.OK && x.Kind == "vote":
			e.Add(&st.OK, " "+draw.SymOK+" granted")
		case x.OK:
			e.Add(&st.OK, " "+draw.SymOK)
		case x.Kind == "vote":
			e.Add(&st.Fail, " "+draw.SymFail+" refused")
		default:
			e.Add(&st.Fail, " "+draw.SymFail+" refused (log mismatch or stale term)")
		}
		e.Add(&st.Faint, " "+ago(x.Ago))
		indent := 6
		if indent+e.Width() > p.w { // a narrow pane: less indent before a cut
			indent = 2
		}
		var row draw.Line
		row.Add(nil, draw.Spaces(indent))
		row.Append(&e)
		rows = append(rows, row.Fit(p.w))
	}
	return rows
}

func ago(d time.Duration) string { return brief(d) + " ago" }

// brief writes a duration the way a glance reads it: 7ms, 340ms, 1.2s.
func brief(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// LeaderTarget is the partition (or queue) whose leader K kills: the
// first the selected node leads, else the first on screen with a leader.
// The lab resolves leader(…) when the kill runs.
func LeaderTarget(v *view.State, selected string) string {
	for _, p := range v.Partitions {
		if p.Leader != "" && p.Leader == selected {
			return p.Name
		}
	}
	for _, p := range v.Partitions {
		if p.Leader != "" {
			return p.Name
		}
	}
	for _, q := range v.Queues {
		if q.Leader != "" {
			return q.Name
		}
	}
	return ""
}
