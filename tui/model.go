package tui

import (
	"context"
	"github.com/mqlab/mqlab/tui/keys"
	"github.com/mqlab/mqlab/tui/panel"
	"io"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/view"
)

// Options configure the lab screen.
type Options struct {
	// HistorySize bounds the history ring (DefaultHistory when 0).
	HistorySize int
	// Commands are the names the prompt completes (the lab's and the lesson's when nil).
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
	// About replaces the lesson pane's words for a lab with no lesson:
	// what the screen shows and what ends it.
	About string
	// BackToLessons is for a screen opened from the lesson picker: its
	// key (backspace) sets WantsBack, and the picker takes over.
	BackToLessons bool
	// Over, for a screen that watches a run with an end (a challenge),
	// says whether it has ended: the header then says so where it would
	// say the clock runs, though the lab stays up to be looked at.
	Over func() bool
	// Theme overrides DefaultTheme.
	Theme *draw.Theme
	// Renderer is the terminal the screen draws on (nil: this process's);
	// a screen served over SSH has the session's.
	Renderer *lipgloss.Renderer
	// Follow is for a student following a teacher's shared lab (see
	// Class): keys and commands that would change it are hidden and
	// refused; a prediction's answer goes to the class's tally.
	Follow bool
	// ConfirmQuit, when set, is asked before q quits: a question for y or
	// n, or "" to quit at once (see AppOptions).
	ConfirmQuit func() string
	// For Run: no alternate screen, no mouse, other streams (tests, tmux).
	NoAltScreen bool
	NoMouse     bool
	Input       io.Reader
	Output      io.Writer
}

// Model is the lab screen: the root Bubble Tea model. It owns the panels,
// the prompt, the help and the history, and routes keys.
type Model struct {
	// footerKept is how wide the footer's kept keys (: and ?) drew last:
	// a long status goes on in the footer's row beside them.
	footerKept int
	// id marks the messages of this screen's own commands, so that a
	// screen that replaced another ignores what was meant for the old one.
	id     uint64
	ctx    *panel.Context
	opts   Options
	panels [panel.Count]panel.Component

	cluster  *panel.Cluster
	timeline *panel.Timeline

	lay      layout
	focus    panel.ID
	tooSmall bool
	// chosen: the learner picked a panel (tab or click); until then a
	// side slot shows whatever part of the lab has something to show.
	chosen bool

	help     help.Model
	showHelp bool
	helpOff  int // the full help's first row shown
	prompt   *prompt

	hist *history
	live *view.State

	status     string
	statusKind statusKind
	running    string          // the running order's line
	runningCmd command.Command // and its lab command, or nil
	queued     []view.Order    // orders waiting for the running one
	quiet      []string        // startup lines not yet done: their output stays out of the way
	starting   bool            // the startup lines run: keys wait in early
	early      []tea.KeyMsg    // keys pressed while the screen was starting, in order
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
	// asking: q asked ConfirmQuit's question; y quits, any other key stays.
	asking bool
}

type statusKind int

const (
	statusInfo statusKind = iota
	statusOK
	statusErr
	statusBusy
	statusAsk // a question for y or n
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
		// aside: a fault command that ran beside the one running
		aside bool
	}
)

// screens numbers the screens made, for their messages' ids.
var screens atomic.Uint64

// New builds the lab screen over a source. It reads the source's first
// state at once, so the first frame already shows the lab.
func New(src view.Source, opts Options) *Model {
	th := draw.DefaultTheme
	if opts.Theme != nil {
		th = *opts.Theme
	}
	st := draw.NewStylesFor(th, opts.Renderer)
	ctx := panel.NewContext(src, st, keys.Default())
	ctx.About = opts.About
	if opts.Title != "" {
		ctx.Title = opts.Title
	}
	ctx.ReadOnly = opts.ReadOnly
	ctx.Follow = opts.Follow
	m := &Model{
		id:        screens.Add(1),
		ctx:       ctx,
		opts:      opts,
		focus:     panel.ClusterID,
		prompt:    newPrompt(st, opts.Commands),
		hist:      newHistory(opts.HistorySize),
		seenTrunc: map[string]bool{},
		firstSeen: map[string]time.Time{},
		epochs:    map[string]uint64{},
	}
	ctx.Notify = func(text string) { m.setStatus(statusInfo, text) }
	m.base, m.stopBase = context.WithCancel(context.Background())
	m.help = help.New()
	m.help.Styles = st.Help

	m.cluster = panel.NewCluster(ctx)
	m.timeline = panel.NewTimeline(ctx)
	m.panels = [panel.Count]panel.Component{
		panel.LessonID:   panel.NewLesson(ctx),
		panel.ClusterID:  m.cluster,
		panel.GroupsID:   panel.NewGroups(ctx),
		panel.QueuesID:   panel.NewQueues(ctx),
		panel.ServicesID: panel.NewServices(ctx),
		panel.TimelineID: m.timeline,
		panel.CheckerID:  panel.NewChecker(ctx),
		panel.ChartID:    panel.NewChart(ctx),
		panel.RaftID:     panel.NewRaft(ctx),
	}
	ctx.Keys.Lessons.SetEnabled(opts.BackToLessons)
	m.pull()
	if m.live != nil && m.live.Lesson != nil {
		m.focus = panel.LessonID // a lesson is read first; ↑/↓ scroll it
	}
	m.resize(MinWidth, MinHeight)
	if opts.ReadOnly {
		m.setStatus(statusInfo, "A recording, paused at its start: space plays it, [ and ] step one event, +/- change speed.")
	}
	return m
}

// Close cancels a running command and stops waiting for the source.
func (m *Model) Close() { m.stopBase() }

// Run opens the lab screen on the terminal and returns when the learner
// quits.
func Run(src view.Source, opts Options) error {
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
	m.starting = len(m.opts.Startup) > 0
	for _, line := range m.opts.Startup {
		cmds = append(cmds, m.run(ParseOrder(line)))
	}
	return tea.Batch(append(cmds, m.waitChange(0))...)
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
		cmd = m.keys(msg)
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
