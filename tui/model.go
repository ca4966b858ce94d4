package tui

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// Options configure the lab screen.
type Options struct {
	// HistorySize bounds the history ring (DefaultHistory when 0).
	HistorySize int
	// Commands are the names the prompt completes (DefaultCommands when nil).
	Commands []string
	// ReadOnly is for recordings: keys and commands that would change the
	// lab are refused with a word of why. The clock's (pause, resume,
	// speed) still reach the source: they pace the playback.
	ReadOnly bool
	// Startup are command lines run in order when the screen opens, the
	// way typed ones run: shown as running, keys pressed meanwhile wait
	// their turn. A sandbox creates its first topic with them.
	Startup []string
	// Title names what is open when no lesson is ("Sandbox" when empty):
	// the header and the lesson pane show it.
	Title string
	// BackToLessons is for a screen opened from the lesson picker: its
	// key (backspace) sets WantsBack, and the picker takes over.
	BackToLessons bool
	// Theme overrides DefaultTheme.
	Theme *Theme
	// For Run: no alternate screen, no mouse, other streams (tests, tmux).
	NoAltScreen bool
	NoMouse     bool
	Input       io.Reader
	Output      io.Writer
}

// Model is the lab screen: the root Bubble Tea model. It owns the panels,
// the prompt, the help and the history, and routes keys.
type Model struct {
	// id marks the messages of this screen's own commands, so that a
	// screen that replaced another ignores what was meant for the old one.
	id     uint64
	ctx    *Context
	opts   Options
	panels [numPanels]panel

	cluster  *clusterPanel
	timeline *timelinePanel

	lay      layout
	focus    panelID
	tooSmall bool

	help     help.Model
	showHelp bool
	prompt   *prompt

	hist *history
	live *ViewState

	status     string
	statusKind statusKind
	running    string
	queued     []string // lines waiting for the running one
	quiet      []string // startup lines not yet done: their output stays out of the way
	cancel     context.CancelFunc

	output      []string // a multi-line result, shown over the body
	outputTitle string
	outputOff   int

	seenTrunc map[string]bool
	firstSeen map[string]time.Time // undated truncations
	epochs    map[string]uint64
	pulled    bool
	ticking   bool

	base     context.Context
	stopBase context.CancelFunc
	back     bool
}

// closeKey closes the help and the output pane; it is always on, unlike
// KeyMap.Live, which the help bar shows only when it means something.
var closeKey = key.NewBinding(key.WithKeys("esc", "enter"))

type statusKind int

const (
	statusInfo statusKind = iota
	statusOK
	statusErr
	statusBusy
)

// Frames of the flashes: a truncation blinks for about a second and a
// half; a new epoch is named for about six seconds.
const (
	flashEvery       = 150 * time.Millisecond
	truncFlashFrames = 10
	epochFlashFrames = 40
	// pullEvery bounds how often the source's View is read.
	pullEvery = 50 * time.Millisecond
	// maxQueued bounds the commands waiting for the running one.
	maxQueued = 8
)

// The screen's messages carry its id; 0 (tests) is anyone's.
type (
	changeMsg       struct{ id uint64 }
	sourceClosedMsg struct{ id uint64 }
	flashTickMsg    struct{ id uint64 }
	execDoneMsg     struct {
		id   uint64
		line string
		out  string
		err  error
	}
)

// screens numbers the screens made, for their messages' ids.
var screens atomic.Uint64

// New builds the lab screen over a source. It reads the source's first
// state at once, so the first frame already shows the lab.
func New(src Source, opts Options) *Model {
	th := DefaultTheme
	if opts.Theme != nil {
		th = *opts.Theme
	}
	st := NewStyles(th)
	ctx := newContext(src, st, DefaultKeyMap())
	if opts.Title != "" {
		ctx.Title = opts.Title
	}
	ctx.ReadOnly = opts.ReadOnly
	m := &Model{
		id:        screens.Add(1),
		ctx:       ctx,
		opts:      opts,
		focus:     pCluster,
		prompt:    newPrompt(st, opts.Commands),
		hist:      newHistory(opts.HistorySize),
		seenTrunc: map[string]bool{},
		firstSeen: map[string]time.Time{},
		epochs:    map[string]uint64{},
	}
	m.base, m.stopBase = context.WithCancel(context.Background())
	m.help = help.New()
	m.help.Styles.ShortKey = st.Help.Key
	m.help.Styles.ShortDesc = st.Help.Desc
	m.help.Styles.ShortSeparator = st.Help.Sep
	m.help.Styles.FullKey = st.Help.Key
	m.help.Styles.FullDesc = st.Help.Desc
	m.help.Styles.FullSeparator = st.Help.Sep
	m.help.Styles.Ellipsis = st.Help.Sep

	m.cluster = newClusterPanel(ctx)
	m.timeline = newTimelinePanel(ctx)
	m.panels = [numPanels]panel{
		pLesson:   newLessonPanel(ctx),
		pCluster:  m.cluster,
		pGroups:   newGroupsPanel(ctx),
		pQueues:   newQueuesPanel(ctx),
		pServices: newServicesPanel(ctx),
		pTimeline: m.timeline,
		pChecker:  newCheckerPanel(ctx),
		pChart:    newChartPanel(ctx),
	}
	ctx.Keys.Lessons.SetEnabled(opts.BackToLessons)
	m.pull()
	if m.live != nil && m.live.Lesson != nil {
		m.focus = pLesson // a lesson is read first; ↑/↓ scroll it
	}
	m.resize(MinWidth, MinHeight)
	if opts.ReadOnly {
		m.setStatus(statusInfo, "A recording: read-only. space pauses, +/- change speed, [ and ] move through it.")
	}
	return m
}

// Close cancels a running command and stops waiting for the source.
func (m *Model) Close() { m.stopBase() }

// Run opens the lab screen on the terminal and returns when the learner
// quits.
func Run(src Source, opts Options) error {
	// Ask the terminal about its background before Bubble Tea owns stdin.
	lipgloss.HasDarkBackground()
	m := New(src, opts)
	defer m.Close()
	po := programOptions(opts.NoAltScreen, opts.NoMouse, opts.Input, opts.Output)
	_, err := tea.NewProgram(m, po...).Run()
	return err
}

// Init starts listening to the source and runs the startup lines.
func (m *Model) Init() tea.Cmd {
	var cmds []tea.Cmd
	m.quiet = append([]string(nil), m.opts.Startup...)
	for _, line := range m.opts.Startup {
		cmds = append(cmds, m.run(line))
	}
	return tea.Batch(append(cmds, m.waitChange(0))...)
}

// waitChange waits for the source's next signal, no sooner than delay.
func (m *Model) waitChange(delay time.Duration) tea.Cmd {
	ch := m.ctx.Src.Changes()
	if ch == nil {
		return nil
	}
	done := m.base.Done()
	return func() tea.Msg {
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-done:
				return nil
			}
		}
		select {
		case _, ok := <-ch:
			if !ok {
				return sourceClosedMsg{m.id}
			}
			return changeMsg{m.id}
		case <-done:
			return nil
		}
	}
}

// pull reads the source's state into the history. A panicking source
// costs a status line, not the demo.
func (m *Model) pull() {
	defer func() {
		if r := recover(); r != nil {
			m.setStatus(statusErr, fmt.Sprintf("reading the lab failed: %v", r))
		}
	}()
	v := m.ctx.Src.View()
	hadLesson := m.live != nil && m.live.Lesson != nil
	m.noticeChanges(&v)
	m.hist.push(&v)
	m.live = &v
	if m.hist.live() {
		m.ctx.State = m.live
	}
	m.pulled = true
	if n := len(m.ctx.State.Nodes); m.ctx.Selected >= n {
		m.ctx.Selected = max(0, n-1)
	}
	if (v.Lesson != nil) != hadLesson && m.ctx.Width > 0 {
		m.resize(m.ctx.Width, m.ctx.Height)
	}
}

// noticeChanges starts flashes for truncations not seen before and for
// partitions whose epoch moved.
func (m *Model) noticeChanges(v *ViewState) {
	if len(m.seenTrunc) > 10000 {
		clear(m.seenTrunc)
		clear(m.firstSeen)
	}
	for _, p := range v.Partitions {
		if old, ok := m.epochs[p.Name]; ok && old != p.Epoch && p.Epoch > old && m.pulled {
			m.ctx.epochFlash[p.Name] = epochChange{From: old, To: p.Epoch, Frames: epochFlashFrames}
		}
		m.epochs[p.Name] = p.Epoch
		for _, r := range p.Replicas {
			if r.Truncation == nil {
				continue
			}
			if r.Truncation.At.IsZero() {
				// Undated by the source: date it by when it was first seen.
				id := fmt.Sprintf("%s@%s#%d-%d%v", p.Name, r.Node, r.Truncation.From, r.Truncation.To, r.Truncation.Epochs)
				at, ok := m.firstSeen[id]
				if !ok {
					at = v.Time
					m.firstSeen[id] = at
				}
				r.Truncation.At = at
			}
			k := truncKey(p.Name, r.Node, r.Truncation)
			if !m.seenTrunc[k] {
				m.seenTrunc[k] = true
				if m.pulled {
					m.ctx.truncFlash[k] = truncFlashFrames
				}
			}
		}
	}
}

func (m *Model) flashCmd() tea.Cmd {
	if m.ticking || (len(m.ctx.truncFlash) == 0 && len(m.ctx.epochFlash) == 0) {
		return nil
	}
	m.ticking = true
	return tea.Tick(flashEvery, func(time.Time) tea.Msg { return flashTickMsg{m.id} })
}

func (m *Model) tickFlashes() {
	m.ctx.Frame++
	for k, n := range m.ctx.truncFlash {
		if n <= 1 {
			delete(m.ctx.truncFlash, k)
		} else {
			m.ctx.truncFlash[k] = n - 1
		}
	}
	for k, e := range m.ctx.epochFlash {
		if e.Frames <= 1 {
			delete(m.ctx.epochFlash, k)
		} else {
			e.Frames--
			m.ctx.epochFlash[k] = e
		}
	}
}

// resize computes the layout once for a window size and gives every panel
// its content size.
func (m *Model) resize(w, h int) {
	m.ctx.Width, m.ctx.Height = w, h
	m.tooSmall = w < MinWidth || h < MinHeight
	if m.tooSmall {
		return
	}
	m.lay = computeLayout(w, h, m.live != nil && m.live.Lesson != nil)
	for si := range m.lay.slots {
		s := &m.lay.slots[si]
		for _, id := range s.panels {
			m.panels[id].SetSize(max(1, s.r.w-2), max(1, s.r.h-2))
		}
	}
	m.showFocus()
	m.help.Width = w
}

// showFocus brings the focused panel to the front of its slot.
func (m *Model) showFocus() {
	if si, pi := m.lay.slotOf(m.focus); si >= 0 {
		m.lay.slots[si].active = pi
	}
}

// Update routes a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case changeMsg:
		if !m.mine(msg.id) {
			return m, nil
		}
		m.pull()
		cmd = tea.Batch(m.waitChange(pullEvery), m.flashCmd())
	case sourceClosedMsg:
		if !m.mine(msg.id) {
			return m, nil
		}
		m.pull()
	case flashTickMsg:
		if !m.mine(msg.id) {
			return m, nil
		}
		m.ticking = false
		m.tickFlashes()
		cmd = m.flashCmd()
	case execDoneMsg:
		if !m.mine(msg.id) {
			return m, nil
		}
		cmd = m.execDone(msg)
	case tea.MouseMsg:
		m.mouse(msg)
	case tea.KeyMsg:
		cmd = m.key(msg)
	default:
		if m.prompt.active() { // cursor blinks
			_, _, cmd = m.prompt.update(msg)
		}
	}
	m.syncKeys()
	return m, cmd
}

// WantsBack says whether the learner asked to go back to the lessons.
func (m *Model) WantsBack() bool { return m.back }

// mine says whether a message is this screen's.
func (m *Model) mine(id uint64) bool { return id == 0 || id == m.id }

// syncKeys enables the keys that mean something now, so the help bar
// shows only those.
func (m *Model) syncKeys() {
	k := m.ctx.Keys
	ls := m.ctx.State.Lesson
	k.Answer.SetEnabled(ls != nil && ls.Prediction != nil && ls.Prediction.Chosen < 0 && len(ls.Prediction.Choices) > 0)
	k.Live.SetEnabled(!m.hist.live() || m.running != "")
	if m.running != "" {
		k.Live.SetHelp("esc", "cancel")
	} else {
		k.Live.SetHelp("esc", "back to live")
	}
	k.Filter.SetEnabled(!m.tooSmall && m.lay.visible(pTimeline))
	k.NextStep.SetEnabled(m.live != nil && m.live.Lesson != nil)
	k.PrevStep.SetEnabled(m.live != nil && m.live.Lesson != nil)
}

// key handles one key: the prompt first, so typing q there does not quit.
func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	k := m.ctx.Keys
	if m.prompt.active() {
		res, line, cmd := m.prompt.update(msg)
		if res == promptSubmitted && line != "" {
			if line == "q" || line == "quit" {
				return m.quit()
			}
			return m.run(line)
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
		case key.Matches(msg, k.ScrollUp):
			m.outputOff = max(0, m.outputOff-1)
			return nil
		case key.Matches(msg, k.ScrollDown):
			m.outputOff++
			return nil
		case key.Matches(msg, closeKey):
			m.output = nil
			return nil
		}
		m.output = nil // any other key closes it and does its job
	}
	if m.showHelp {
		if key.Matches(msg, k.Help) || key.Matches(msg, closeKey) {
			m.showHelp = false
			return nil
		}
		m.showHelp = false
	}
	switch {
	case key.Matches(msg, k.Help):
		m.showHelp = true
	case key.Matches(msg, k.Prompt):
		return m.prompt.open(m.ctx.State.Nodes)
	case key.Matches(msg, k.Live):
		if m.running != "" && m.cancel != nil {
			m.cancel()
			m.queued = nil
			m.quiet = slices.DeleteFunc(m.quiet, func(l string) bool { return l != m.running })
			m.setStatus(statusInfo, "cancelling "+m.running+"…")
			return nil
		}
		m.toLive()
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
			return nil
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
			return nil
		}
		m.hist.forwardEvent()
		if m.hist.live() {
			m.toLive()
		} else {
			m.ctx.State = m.hist.current()
		}
	case key.Matches(msg, k.Focus):
		m.focus = (m.focus + 1) % numPanels
		m.showFocus()
	case key.Matches(msg, k.FocusPrev):
		m.focus = (m.focus + numPanels - 1) % numPanels
		m.showFocus()
	case key.Matches(msg, k.ScrollUp):
		m.panels[m.focus].Scroll(-1)
	case key.Matches(msg, k.ScrollDown):
		m.panels[m.focus].Scroll(1)
	case key.Matches(msg, k.NodeNext):
		m.selectNode(m.ctx.Selected + 1)
	case key.Matches(msg, k.NodePrev):
		m.selectNode(m.ctx.Selected - 1)
	case key.Matches(msg, k.NodeN):
		i, _ := strconv.Atoi(msg.String())
		if i-1 >= len(m.ctx.State.Nodes) {
			m.setStatus(statusErr, fmt.Sprintf("there is no node %d: this cluster has %d", i, len(m.ctx.State.Nodes)))
			return nil
		}
		m.selectNode(i - 1)
	case key.Matches(msg, k.Kill):
		return m.nodeCmd("kill")
	case key.Matches(msg, k.Restart):
		return m.nodeCmd("restart")
	case key.Matches(msg, k.Isolate):
		return m.nodeCmd("isolate")
	case key.Matches(msg, k.Heal):
		return m.run("heal")
	case key.Matches(msg, k.Pause):
		if m.ctx.State.Clock.Paused {
			return m.run("resume")
		}
		return m.run("pause")
	case key.Matches(msg, k.Faster):
		return m.run("speed " + speedWord(nextSpeed(m.ctx.State.Clock.Speed, +1)))
	case key.Matches(msg, k.Slower):
		return m.run("speed " + speedWord(nextSpeed(m.ctx.State.Clock.Speed, -1)))
	case key.Matches(msg, k.Lessons):
		m.back = true // at once: keys typed after it are the picker's
	case key.Matches(msg, k.NextStep):
		return m.run(CmdLessonNext)
	case key.Matches(msg, k.PrevStep):
		return m.run(CmdLessonPrev)
	case key.Matches(msg, k.Answer):
		n := len(m.ctx.State.Lesson.Prediction.Choices)
		if c := msg.String(); int(c[0]-'a') >= n {
			m.setStatus(statusErr, fmt.Sprintf("there are only %d choices: a–%c", n, 'a'+n-1))
			return nil
		}
		return m.run(CmdPredict + " " + msg.String())
	case key.Matches(msg, k.Filter):
		if f := m.timeline.cycleFilter(); f == "" {
			m.setStatus(statusInfo, "timeline: every kind of event")
		} else {
			m.setStatus(statusInfo, "timeline: only "+f+" (f for the next kind)")
		}
	}
	return nil
}

func (m *Model) quit() tea.Cmd {
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

func (m *Model) nodeCmd(verb string) tea.Cmd {
	id := m.ctx.SelectedNode()
	if id == "" {
		m.setStatus(statusErr, "select a node first (←/→ or 1–9)")
		return nil
	}
	return m.run(verb + " " + id)
}

// run sends one command line to the source, unless the screen is showing
// the past, a recording, or another command is still running.
func (m *Model) run(line string) tea.Cmd {
	switch {
	case m.opts.ReadOnly && !clockLine(line):
		m.setStatus(statusErr, "a recording cannot be changed: "+line+" was not run")
		return nil
	case !m.hist.live() && !m.opts.ReadOnly:
		m.setStatus(statusErr, fmt.Sprintf("%s is the past and cannot change: esc returns to live, then try %q again",
			m.ctx.State.Time.Format("15:04:05.000"), line))
		return nil
	case m.running != "":
		// One command at a time, in the order given: keys pressed quickly
		// wait their turn rather than being lost.
		if len(m.queued) >= maxQueued {
			m.setStatus(statusErr, fmt.Sprintf("still running %q with %d waiting: esc cancels them", m.running, len(m.queued)))
			return nil
		}
		m.queued = append(m.queued, line)
		m.setStatus(statusBusy, fmt.Sprintf("%s, then %s", m.running, strings.Join(m.queued, ", ")))
		return nil
	}
	return m.start(line)
}

// clockLine says whether a line only paces time (pause, resume, speed):
// a recording accepts those.
func clockLine(line string) bool {
	verb, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	return verb == "pause" || verb == "resume" || verb == "speed"
}

// start runs a line now.
func (m *Model) start(line string) tea.Cmd {
	ctx, cancel := context.WithCancel(m.base)
	m.running, m.cancel = line, cancel
	m.setStatus(statusBusy, line)
	src := m.ctx.Src
	return func() (msg tea.Msg) {
		defer func() {
			if r := recover(); r != nil {
				msg = execDoneMsg{id: m.id, line: line, err: fmt.Errorf("internal error: %v", r)}
			}
			cancel()
		}()
		out, err := src.Exec(ctx, line)
		return execDoneMsg{id: m.id, line: line, out: out, err: err}
	}
}

func (m *Model) execDone(msg execDoneMsg) tea.Cmd {
	m.running, m.cancel = "", nil
	cmd := m.report(msg)
	if len(m.queued) > 0 && (m.hist.live() || m.opts.ReadOnly) {
		next := m.queued[0]
		m.queued = m.queued[1:]
		return tea.Batch(cmd, m.start(next))
	}
	m.queued = nil
	m.quiet = nil
	return cmd
}

// report shows a command's result: one line in the status line, more in
// the output pane.
func (m *Model) report(msg execDoneMsg) tea.Cmd {
	quiet := false
	if i := slices.Index(m.quiet, msg.line); i >= 0 {
		quiet, m.quiet = true, m.quiet[i+1:]
	}
	out := strings.TrimRight(msg.out, "\n")
	if msg.err != nil {
		m.setStatus(statusErr, msg.line+": "+msg.err.Error())
		if strings.Contains(msg.err.Error(), "\n") {
			m.showOutput(msg.line, msg.err.Error())
		}
		return nil
	}
	lines := strings.Split(out, "\n")
	switch {
	case out == "":
		m.setStatus(statusOK, msg.line)
	case len(lines) == 1:
		m.setStatus(statusOK, msg.line+" — "+out)
	case quiet:
		// A startup line the learner did not type: its lines are in the
		// timeline, the screen stays on the lab.
		m.setStatus(statusOK, fmt.Sprintf("%s — its %d lines are in the timeline", msg.line, len(lines)))
	default:
		m.setStatus(statusOK, fmt.Sprintf("%s — %d lines above (esc closes)", msg.line, len(lines)))
		m.showOutput(msg.line, out)
	}
	// A command usually changes the lab: look now rather than at the next signal.
	m.pull()
	return m.flashCmd()
}

func (m *Model) showOutput(title, text string) {
	m.output = strings.Split(text, "\n")
	m.outputTitle = title
	m.outputOff = 0
}

func (m *Model) setStatus(k statusKind, s string) { m.status, m.statusKind = s, k }

// mouse: a click focuses the panel under it, picks a tab, or selects a
// node; the wheel scrolls.
func (m *Model) mouse(msg tea.MouseMsg) {
	if m.tooSmall || m.showHelp || m.output != nil {
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
				for pi, sp := range tabSpans(m.tabs(s), s.active) {
					if msg.X-s.r.x >= sp[0] && msg.X-s.r.x < sp[1] {
						s.active = pi
						id = s.panels[pi]
					}
				}
			}
			m.focus = id
			if id == pCluster {
				if i, ok := m.cluster.nodeAt(msg.X-s.r.x-1, msg.Y-s.r.y-1); ok {
					m.selectNode(i)
				}
			}
		}
		return
	}
}

func (m *Model) tabs(s *slot) []string {
	t := make([]string, len(s.panels))
	for i, id := range s.panels {
		t[i] = m.panels[id].Title()
	}
	return t
}

// View draws the screen.
func (m *Model) View() string {
	w, h := m.ctx.Width, m.ctx.Height
	if m.tooSmall {
		return m.tooSmallView(w, h)
	}
	st := m.ctx.Styles
	m.ctx.Focus = m.focus
	rows := make([]string, 0, h)
	rows = append(rows, m.header(w))
	if m.lay.taskLine {
		rows = append(rows, taskLine(st, m.ctx.State.Lesson, w))
	}
	rows = append(rows, m.body()...)
	rows = append(rows, m.statusLine(w))
	rows = append(rows, fit(m.help.ShortHelpView(m.ctx.Keys.ShortHelp()), w))
	return strings.Join(rows, "\n")
}

func (m *Model) tooSmallView(w, h int) string { return tooSmall(w, h) }

// header: what is open, and the lab clock; in history, the banner.
func (m *Model) header(w int) string {
	st := m.ctx.Styles
	s := m.ctx.State
	if m.ctx.InHistory {
		text := fmt.Sprintf(" ◀ HISTORY %s — %d back — press ] to step forward, esc to return to live ",
			s.Time.Format("15:04:05.000"), m.hist.stepsBack())
		if ev := lastEvent(s); ev.Text != "" && textWidth(text)+10 < w {
			text += "· last event: " + ev.Text + " "
		}
		return st.Banner.Render(fit(text, w))
	}
	// The right side: the jobs, the clock, the timing. At narrow widths the
	// jobs shrink (shorter names and bars, then only the first) before
	// the timing goes, so the clock and its state stay in view.
	warn := ""
	if m.opts.ReadOnly {
		warn = "  RECORDING (read-only)"
	}
	room := w - 18 - textWidth(warn) // the left side keeps "mqlab │ ", a few letters of the title and the warning
	var r line
	for _, form := range []struct {
		level  int
		timing bool
	}{{0, true}, {1, true}, {2, true}, {2, false}, {3, false}} {
		r = m.headerRight(form.level, form.timing)
		if r.w <= room {
			break
		}
	}
	// The left side: what is open. A long title gives way before the step
	// number and the right side's clock.
	rw := min(r.w, room)
	var l line
	l.add(&st.Accent, "mqlab")
	l.add(&st.Faint, " │ ")
	title, tail := m.ctx.Title, ""
	if ls := s.Lesson; ls != nil {
		title, tail = ls.Title, fmt.Sprintf(" · step %d/%d", ls.Step, ls.Steps)
	}
	l.add(&st.Header, cut(title, max(8, w-rw-2-l.w-textWidth(tail)-textWidth(warn))))
	l.add(&st.Muted, tail)
	l.add(&st.Warn, warn)
	if l.w+r.w+2 > w {
		return l.fit(w-rw-2) + "  " + fit(r.b.String(), rw)
	}
	l.pad(w - r.w)
	l.b.WriteString(r.b.String())
	return l.b.String()
}

// headerRight is the header's right side: the jobs with their progress,
// whether the clock runs and how fast, the lab time, the timing preset.
// level 0 draws every job in full; 1 shortens names and bars; 2 draws
// the first job only, with how many more run; 3 draws no job.
func (m *Model) headerRight(level int, timing bool) line {
	st := m.ctx.Styles
	s := m.ctx.State
	var r line
	for i, j := range s.Jobs {
		if level >= 3 || level == 2 && i > 0 {
			if level == 2 {
				r.add(&st.Muted, fmt.Sprintf("+%d more  ", len(s.Jobs)-1))
			}
			break
		}
		name, bw := j.Name, 8
		if level >= 1 {
			name, bw = shortJob(name), 5
		}
		r.add(&st.Muted, name+" ")
		if j.Total > 0 {
			f := float64(j.Done) / float64(j.Total)
			r.b.WriteString(bar(st, f, bw))
			r.w += bw
			r.add(&st.Muted, fmt.Sprintf(" %d%%  ", int(f*100)))
		} else {
			r.add(&st.Muted, fmt.Sprintf("%d  ", j.Done))
		}
	}
	speed := s.Clock.Speed
	if speed == 0 {
		speed = 1
	}
	if s.Clock.Paused {
		r.add(&st.Warn, "‖ PAUSED")
	} else {
		r.add(&st.OK, "▶ running")
		r.add(&st.Text, " "+speedWord(speed))
	}
	if !s.Time.IsZero() {
		r.add(&st.Muted, "  "+s.Time.Format("15:04:05.0"))
	}
	if s.Timing != "" && timing {
		r.add(&st.Faint, "  "+s.Timing)
	}
	return r
}

// shortJob is a job's name at narrow widths: its first words, "check"
// for a check's drain.
func shortJob(name string) string {
	if strings.HasPrefix(name, "check:") {
		return "check"
	}
	if i := strings.Index(name, " ("); i > 0 { // "load orders (waiting)"
		name = name[:i]
	}
	if i := strings.Index(name, " as "); i > 0 {
		name = name[:i]
	}
	return name
}

func (m *Model) statusLine(w int) string {
	st := m.ctx.Styles
	if m.prompt.active() {
		return m.prompt.view(st, w)
	}
	var l line
	switch m.statusKind {
	case statusOK:
		l.add(&st.OK, symOK+" ")
		l.add(&st.Text, m.status)
	case statusErr:
		l.add(&st.Fail, symFail+" ")
		l.add(&st.Fail, m.status)
	case statusBusy:
		l.add(&st.Warn, symPending+" running ")
		l.add(&st.Text, m.status)
		l.add(&st.Faint, "  (esc cancels)")
	default:
		if m.status == "" {
			l.add(&st.Faint, "press : to type a command, ? for every key")
		} else {
			l.add(&st.Muted, m.status)
		}
	}
	return l.fit(w)
}

// body draws the slots, or the full help or a command's output over them.
func (m *Model) body() []string {
	b := m.lay.body
	switch {
	case m.showHelp:
		return strings.Split(frame(m.ctx.Styles, []string{"Help"}, 0, true, m.helpView(b.w-2, b.h-2), b.w, b.h), "\n")
	case m.output != nil:
		rows, off := window(m.output, m.outputOff, b.h-2, m.ctx.Styles)
		m.outputOff = off
		body := block(rows, b.w-2, b.h-2)
		return strings.Split(frame(m.ctx.Styles, []string{m.outputTitle + " · esc closes"}, 0, true, body, b.w, b.h), "\n")
	}
	frames := make([][]string, len(m.lay.slots))
	for si := range m.lay.slots {
		s := &m.lay.slots[si]
		id := s.panels[s.active]
		p := m.panels[id]
		frames[si] = strings.Split(frame(m.ctx.Styles, m.tabs(s), s.active, id == m.focus, p.View(), s.r.w, s.r.h), "\n")
	}
	// Every row of the body is covered by slots side by side.
	order := make([]int, len(m.lay.slots))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, c int) bool { return m.lay.slots[order[a]].r.x < m.lay.slots[order[c]].r.x })
	rows := make([]string, b.h)
	var sb strings.Builder
	for y := 0; y < b.h; y++ {
		sb.Reset()
		ay := b.y + y
		for _, si := range order {
			s := m.lay.slots[si]
			if ay >= s.r.y && ay < s.r.y+s.r.h {
				sb.WriteString(frames[si][ay-s.r.y])
			}
		}
		rows[y] = sb.String()
	}
	return rows
}

// helpView is the '?' screen: every key, what the symbols mean, and how
// to reach the command language.
func (m *Model) helpView(w, h int) string {
	st := m.ctx.Styles
	hm := m.help
	hm.Width = w
	// The full help lists every key, also those that mean nothing now.
	groups := m.ctx.Keys.FullHelp()
	for _, g := range groups {
		for i := range g {
			// The way back to the lessons is there only when the screen came from them.
			if g[i].Help() != m.ctx.Keys.Lessons.Help() || m.ctx.Keys.Lessons.Enabled() {
				g[i].SetEnabled(true)
			}
		}
	}
	rows := strings.Split(hm.FullHelpView(groups), "\n")
	rows = append(rows, "", st.Title.Render("What the symbols mean"))
	legend := [][2]string{
		{symLeader, "leader of a partition (the word says it too)"},
		{symCommitted + "7 " + symUncommitted + "7", "an entry of epoch 7: committed / not yet on a majority"},
		{"[ | …", "the log's first offset / the high-water mark / more before"},
		{symTruncated, "a replica cut its uncommitted tail: those entries are gone"},
		{symOK + " " + symFail, "holds / fails; " + symFail + " also marks a node that is down"},
		{symIsolated, "a node cut off from its peers (and clients, when isolated)"},
		{symSelected, "the selected node: k, r and i act on it"},
		{"┏━┓", "the focused panel: tab moves focus, ↑/↓ scroll it"},
	}
	for _, l := range legend {
		rows = append(rows, "  "+st.Key.Render(fit(l[0], 6))+" "+st.Text.Render(l[1]))
	}
	rows = append(rows, "", st.Muted.Render("Every key runs a lab command you could type at ':' — k on n2 is  :kill n2."),
		st.Muted.Render("Type :help for the commands. ? or esc closes this."))
	for len(rows) > h && rows[len(rows)-1] != "" { // short screens lose the notes first
		rows = rows[:len(rows)-1]
	}
	return block(rows, w, h)
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
