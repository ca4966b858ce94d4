package tui

// The lab screen's input: which keys mean something now, each key (the
// prompt first), the mouse, and the clock speeds + and - step through.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/keys"
	"github.com/mqlab/mqlab/tui/panel"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

// closeKey closes the help and the output pane; it is always on, unlike
// KeyMap.Live, which the help bar shows only when it means something.
var closeKey = key.NewBinding(key.WithKeys("esc", "enter"))

// syncKeys enables the keys that mean something now, so the help bar
// shows only those.
func (m *Model) syncKeys() {
	k := m.ctx.Keys
	ls := m.ctx.State.Lesson
	open := ls != nil && ls.Prediction != nil && ls.Prediction.Chosen < 0 && ls.Prediction.Answer < 0
	k.Answer.SetEnabled(open && len(ls.Prediction.Choices) > 0)
	k.Number.SetEnabled(open && ls.Prediction.Numeric)
	k.Hint.SetEnabled(ls != nil && ls.Status == lessons.StatusTask && !m.opts.Follow && !m.opts.ReadOnly)
	k.Live.SetEnabled(!m.hist.live() || m.running != "")
	if m.running != "" {
		k.Live.SetHelp("esc", "cancel")
	} else {
		k.Live.SetHelp("esc", "back to live")
	}
	m.timeline.Keys.Filter.SetEnabled(!m.tooSmall && m.lay.visible(panel.TimelineID))
	k.Roster.SetEnabled(m.live != nil && m.live.Class != nil && !m.opts.Follow)
	k.NextStep.SetEnabled(m.live != nil && m.live.Lesson != nil)
	k.PrevStep.SetEnabled(m.live != nil && m.live.Lesson != nil)
	for _, b := range m.modeOff() {
		b.SetEnabled(false)
	}
	if m.opts.ReadOnly {
		k.Back.SetHelp("[/]", "step through events")
	}
}

// modeOff are the keys this kind of screen never takes: a recording
// cannot be changed, and a follower watches the teacher's lab, steps
// through its own history and answers questions, and changes nothing.
// Neither the help bar nor the full help shows them.
func (m *Model) modeOff() []*key.Binding {
	k := m.ctx.Keys
	switch {
	case m.opts.ReadOnly:
		return []*key.Binding{&k.Kill, &k.KillLeader, &k.Restart, &k.Isolate, &k.Heal, &k.Kafka, &k.NextStep, &k.PrevStep, &k.Answer, &k.Number, &k.Hint}
	case m.opts.Follow:
		return []*key.Binding{&k.Kill, &k.KillLeader, &k.Restart, &k.Isolate, &k.Heal, &k.Kafka,
			&k.NextStep, &k.PrevStep, &k.Pause, &k.Faster, &k.Slower, &k.Hint, &k.Lessons}
	}
	return nil
}

// key handles one key: the prompt first, so typing q there does not quit.
// keys takes a key message. Keys that arrive in one read — fast typing,
// a paste without bracketed paste, an SSH session on a slow link — come as
// one message with several runes: each rune is its own key press, in
// order, so "90" at a numeric question is 9 then 0, and ":help kill"
// opens the prompt and types into it. A bracketed paste is text: it goes
// into the prompt, which it opens.
func (m *Model) keys(msg tea.KeyMsg) tea.Cmd {
	if k := m.ctx.Keys; m.starting && !m.prompt.active() && !key.Matches(msg, k.Quit, k.Live, k.Help, k.Prompt) {
		// A lesson's step is being set up: a key pressed now (an answer
		// typed as the question appears) waits for it, then acts. The
		// prompt opens at once: what is typed there shows as it is typed,
		// and its command waits its turn.
		m.early = append(m.early, msg)
		return nil
	}
	if msg.Type != tea.KeyRunes || m.prompt.active() {
		return m.key(msg)
	}
	if msg.Paste {
		open := m.prompt.open(m.ctx.State.Nodes)
		_, _, typed := m.prompt.update(msg)
		return tea.Batch(open, typed)
	}
	if len(msg.Runes) <= 1 {
		return m.key(msg)
	}
	var cmds []tea.Cmd
	for _, r := range msg.Runes {
		one := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}
		if r == ' ' {
			one.Type = tea.KeySpace
		}
		if cmd := m.keys(one); cmd != nil {
			cmds = append(cmds, cmd)
		}
		m.syncKeys()
	}
	if len(cmds) == 1 {
		return cmds[0]
	}
	return tea.Sequence(cmds...)
}

func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	k := m.ctx.Keys
	if m.asking {
		m.asking = false
		if msg.String() == "y" || msg.String() == "Y" {
			return m.quitNow()
		}
		m.setStatus(statusInfo, "not quitting: the class goes on")
		return nil
	}
	if m.prompt.active() {
		res, line, cmd := m.prompt.update(msg)
		if res == promptSubmitted && line != "" {
			if line == "q" || line == "quit" {
				return m.quit()
			}
			return m.run(ParseOrder(line))
		}
		return cmd
	}
	if key.Matches(msg, k.Quit) {
		return m.quit()
	}
	if m.tooSmall {
		return nil
	}
	if m.output != nil {
		switch {
		case key.Matches(msg, m.ctx.Scroll.Up):
			m.outputOff = max(0, m.outputOff-1)
			return nil
		case key.Matches(msg, m.ctx.Scroll.Down):
			m.outputOff++
			return nil
		case key.Matches(msg, closeKey):
			m.output = nil
			return nil
		}
		m.output = nil // any other key closes it and does its job
	}
	if m.showHelp {
		switch {
		case key.Matches(msg, k.Help) || key.Matches(msg, closeKey):
			m.showHelp = false
			return nil
		case key.Matches(msg, m.ctx.Scroll.Up):
			m.helpOff = max(0, m.helpOff-1)
			return nil
		case key.Matches(msg, m.ctx.Scroll.Down):
			m.helpOff++
			return nil
		}
		m.showHelp = false
	}
	if m.panelKey(msg) {
		return nil
	}
	for _, handle := range []func(tea.KeyMsg) (tea.Cmd, bool){m.screenKey, m.timeKey, m.labKey, m.lessonKey} {
		if cmd, ok := handle(msg); ok {
			return cmd
		}
	}
	return nil
}

// screenKey handles the screen's own keys: help, the prompt, esc, focus
// and the selected node; false when the key is none of them.
func (m *Model) screenKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	k := m.ctx.Keys
	switch {
	case key.Matches(msg, k.Help):
		m.showHelp, m.helpOff = true, 0
	case key.Matches(msg, k.Prompt):
		return m.prompt.open(m.ctx.State.Nodes), true
	case key.Matches(msg, k.Roster):
		m.showRoster()
	case key.Matches(msg, k.Number):
		// A question asks for a number: its first digit starts the answer.
		cmd := m.prompt.open(m.ctx.State.Nodes)
		m.prompt.in.SetValue(source.CmdPredict + " " + msg.String())
		m.prompt.in.CursorEnd()
		return cmd, true
	case key.Matches(msg, k.Live):
		if m.running != "" && m.cancel != nil {
			m.cancel()
			m.queued = nil
			m.quiet = slices.DeleteFunc(m.quiet, func(l string) bool { return l != m.running })
			m.setStatus(statusInfo, "cancelling "+m.running+"…")
			return nil, true
		}
		m.toLive()
	case key.Matches(msg, k.Focus):
		m.focus = m.lay.nextFocus(m.focus, false)
		m.chosen = true
		m.showFocus()
	case key.Matches(msg, k.FocusPrev):
		m.focus = m.lay.nextFocus(m.focus, true)
		m.chosen = true
		m.showFocus()
	case key.Matches(msg, k.NodeNext):
		m.selectNode(m.ctx.Selected + 1)
	case key.Matches(msg, k.NodePrev):
		m.selectNode(m.ctx.Selected - 1)
	case key.Matches(msg, k.NodeN):
		i, _ := strconv.Atoi(msg.String())
		if i-1 >= len(m.ctx.State.Nodes) {
			m.setStatus(statusErr, fmt.Sprintf("there is no node %d: this cluster has %d", i, len(m.ctx.State.Nodes)))
			return nil, true
		}
		m.selectNode(i - 1)
	default:
		return nil, false
	}
	return nil, true
}

// timeKey handles moving through history, or through a recording; false
// when the key is none of them.
func (m *Model) timeKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	k := m.ctx.Keys
	switch {
	case m.opts.ReadOnly && (key.Matches(msg, k.Back) || key.Matches(msg, k.BackEvent)):
		return m.run(view.LineOrder(source.CmdStepBack)), true
	case m.opts.ReadOnly && (key.Matches(msg, k.Forward) || key.Matches(msg, k.NextEvent)):
		return m.run(view.LineOrder(source.CmdStepForward)), true
	case key.Matches(msg, k.Back):
		if m.hist.back() {
			m.ctx.State = m.hist.current()
			m.ctx.InHistory = true
		} else {
			m.setStatus(statusInfo, "this is the oldest moment kept")
		}
	case key.Matches(msg, k.Forward):
		if m.hist.live() {
			m.setStatus(statusInfo, "already live: [ steps back in time")
			return nil, true
		}
		m.hist.forward()
		if m.hist.live() {
			m.toLive()
		} else {
			m.ctx.State = m.hist.current()
		}
	case key.Matches(msg, k.BackEvent):
		if m.hist.backEvent() {
			m.ctx.State = m.hist.current()
			m.ctx.InHistory = true
		} else {
			m.setStatus(statusInfo, "no earlier event is kept")
		}
	case key.Matches(msg, k.NextEvent):
		if m.hist.live() {
			m.setStatus(statusInfo, "already live: { jumps back to the last event")
			return nil, true
		}
		m.hist.forwardEvent()
		if m.hist.live() {
			m.toLive()
		} else {
			m.ctx.State = m.hist.current()
		}
	default:
		return nil, false
	}
	return nil, true
}

// labKey handles the keys that change the lab, each by the lab command
// the prompt would run; false when the key is none of them.
func (m *Model) labKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	k := m.ctx.Keys
	switch {
	case key.Matches(msg, k.Kill):
		return m.nodeCmd(killNode), true
	case key.Matches(msg, k.KillLeader):
		p := panel.LeaderTarget(m.ctx.State, m.ctx.SelectedNode())
		if p == "" {
			m.setStatus(statusErr, "no partition or queue has a leader to kill now")
			return nil, true
		}
		return m.run(view.CommandOrder(command.Kill{Node: leaderRef(p)})), true
	case key.Matches(msg, k.Restart):
		return m.nodeCmd(restartNode), true
	case key.Matches(msg, k.Isolate):
		return m.nodeCmd(isolateNode), true
	case key.Matches(msg, k.Heal):
		return m.run(view.CommandOrder(command.Heal{})), true
	case key.Matches(msg, k.Pause):
		if m.ctx.State.Clock.Paused {
			return m.run(view.CommandOrder(command.Resume{})), true
		}
		return m.run(view.CommandOrder(command.Pause{})), true
	case key.Matches(msg, k.Faster):
		return m.run(view.CommandOrder(command.Speed{Factor: nextSpeed(m.ctx.State.Clock.Speed, +1)})), true
	case key.Matches(msg, k.Slower):
		return m.run(view.CommandOrder(command.Speed{Factor: nextSpeed(m.ctx.State.Clock.Speed, -1)})), true
	case key.Matches(msg, k.Kafka):
		if m.ctx.State.Kafka != nil {
			return m.run(view.CommandOrder(command.KafkaStop{})), true
		}
		return m.run(view.CommandOrder(command.KafkaListen{})), true
	}
	return nil, false
}

// lessonKey handles the lesson's keys: its steps, a hint, an answer, back
// to the lessons; false when the key is none of them.
func (m *Model) lessonKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	k := m.ctx.Keys
	switch {
	case key.Matches(msg, k.Lessons):
		m.back = true // at once: keys typed after it are the picker's
	case key.Matches(msg, k.NextStep):
		return m.run(view.LineOrder(source.CmdLessonNext)), true
	case key.Matches(msg, k.PrevStep):
		return m.run(view.LineOrder(source.CmdLessonPrev)), true
	case key.Matches(msg, k.Hint):
		return m.run(view.LineOrder(source.CmdLessonHint)), true
	case key.Matches(msg, k.Answer):
		n := len(m.ctx.State.Lesson.Prediction.Choices)
		if _, err := lessons.ParseAnswer(msg.String(), n, false); err != nil {
			m.setStatus(statusErr, fmt.Sprintf("there are only %d choices: a–%c", n, 'a'+n-1))
			return nil, true
		}
		return m.run(view.LineOrder(source.CmdPredict + " " + msg.String())), true
	default:
		return nil, false
	}
	return nil, true
}

// panelKey offers a key to the focused panel, then to the panels on
// screen that take keys without the focus; true when one took it.
func (m *Model) panelKey(msg tea.KeyMsg) bool {
	if m.panels[m.focus].Update(msg, true) {
		return true
	}
	for id, p := range m.panels {
		if panel.ID(id) != m.focus && m.lay.visible(panel.ID(id)) && p.Update(msg, false) {
			return true
		}
	}
	return false
}

// ShortHelp is the help bar: the screen's keys, with its panels' keys
// before the last few.
func (m *Model) ShortHelp() []key.Binding {
	own := m.ctx.Keys.ShortHelp()
	cut := len(own) - keys.ShortTail
	out := append([]key.Binding(nil), own[:cut]...)
	for _, p := range m.panels {
		out = append(out, p.ShortHelp()...)
	}
	return append(out, own[cut:]...)
}

// FullHelp is the '?' screen: the screen's columns, with its panels' keys
// in the last one, each once.
func (m *Model) FullHelp() [][]key.Binding {
	cols := m.ctx.Keys.FullHelp()
	last := cols[len(cols)-1]
	cut := len(last) - keys.FullTail
	col := append([]key.Binding(nil), last[:cut]...)
	seen := map[key.Help]bool{}
	for _, p := range m.panels {
		for _, g := range p.FullHelp() {
			for _, b := range g {
				if !seen[b.Help()] {
					seen[b.Help()] = true
					col = append(col, b)
				}
			}
		}
	}
	cols[len(cols)-1] = append(col, last[cut:]...)
	return cols
}

func (m *Model) quit() tea.Cmd {
	if m.opts.ConfirmQuit != nil {
		if q := m.opts.ConfirmQuit(); q != "" {
			m.asking = true
			m.setStatus(statusAsk, q)
			return nil
		}
	}
	return m.quitNow()
}

func (m *Model) quitNow() tea.Cmd {
	if m.cancel != nil {
		m.cancel()
	}
	m.stopBase()
	return tea.Quit
}

func (m *Model) toLive() {
	m.hist.toLive()
	m.ctx.InHistory = false
	if m.live != nil {
		m.ctx.State = m.live
	}
}

func (m *Model) selectNode(i int) {
	n := len(m.ctx.State.Nodes)
	if n == 0 {
		m.setStatus(statusInfo, "there are no nodes yet")
		return
	}
	m.ctx.Selected = (i%n + n) % n
}

// nodeCmd runs the command build makes for the selected node.
func (m *Model) nodeCmd(build func(command.NodeRef) command.Command) tea.Cmd {
	id := m.ctx.SelectedNode()
	if id == "" {
		m.setStatus(statusErr, "select a node first (←/→ or 1–9)")
		return nil
	}
	return m.run(view.CommandOrder(build(command.NodeRef{Kind: command.RefNode, Node: id})))
}

// The node commands the keys build.
func killNode(n command.NodeRef) command.Command    { return command.Kill{Node: n} }
func restartNode(n command.NodeRef) command.Command { return command.Restart{Node: n} }
func isolateNode(n command.NodeRef) command.Command { return command.Isolate{Node: n} }

// leaderRef is leader(name): of a partition ("orders/0") or a queue.
func leaderRef(name string) command.NodeRef {
	t := command.Target{Name: name}
	if topic, part, ok := strings.Cut(name, "/"); ok {
		if p, err := strconv.Atoi(part); err == nil {
			t = command.Target{Name: topic, Partition: p, IsPartition: true}
		}
	}
	return command.NodeRef{Kind: command.RefLeader, Of: t}
}

// mouse: a click focuses the panel under it, picks a tab, or selects a
// node; the wheel scrolls.
func (m *Model) mouse(msg tea.MouseMsg) {
	if m.output != nil && !m.tooSmall {
		// The output pane covers the body: the wheel scrolls it.
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			m.outputOff = max(0, m.outputOff-1)
		case tea.MouseButtonWheelDown:
			m.outputOff++
		}
		return
	}
	if m.showHelp && !m.tooSmall {
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			m.helpOff = max(0, m.helpOff-1)
		case tea.MouseButtonWheelDown:
			m.helpOff++
		}
		return
	}
	if m.tooSmall {
		return
	}
	for si := range m.lay.slots {
		s := &m.lay.slots[si]
		if !s.r.contains(msg.X, msg.Y) {
			continue
		}
		id := s.panels[s.active]
		switch {
		case msg.Button == tea.MouseButtonWheelUp:
			m.panels[id].Scroll(-1)
		case msg.Button == tea.MouseButtonWheelDown:
			m.panels[id].Scroll(1)
		case msg.Button == tea.MouseButtonLeft && msg.Action == tea.MouseActionPress:
			if msg.Y == s.r.y && len(s.panels) > 1 {
				for pi, sp := range draw.TabSpans(m.tabs(s), s.active) {
					if msg.X-s.r.x >= sp[0] && msg.X-s.r.x < sp[1] {
						s.active = pi
						id = s.panels[pi]
						m.chosen = true
					}
				}
			}
			m.focus = id
			if id == panel.ClusterID {
				if i, ok := m.cluster.NodeAt(msg.X-s.r.x-1, msg.Y-s.r.y-1); ok {
					m.selectNode(i)
				}
			}
		}
		return
	}
}

// speeds are the steps + and - move through.
var speeds = []float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 50, 100}

func nextSpeed(cur float64, dir int) float64 {
	if cur <= 0 {
		cur = 1
	}
	if dir > 0 {
		for _, s := range speeds {
			if s > cur+1e-9 {
				return s
			}
		}
		return speeds[len(speeds)-1]
	}
	for i := len(speeds) - 1; i >= 0; i-- {
		if speeds[i] < cur-1e-9 {
			return speeds[i]
		}
	}
	return speeds[0]
}

func speedWord(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) + "x" }
