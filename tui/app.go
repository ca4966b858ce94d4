package tui

import (
	"fmt"
	"io"
	"sync"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

// AppOptions configure the whole program: the lesson picker and the lab
// screen it opens.
type AppOptions struct {
	// Lessons are the lessons the picker lists (the embedded curriculum
	// when nil).
	Lessons []*lessons.Lesson
	// Progress keeps what the learner did; nil keeps nothing.
	Progress *lessons.Store
	// Timing is the lab's raft timing: "classroom" (the default), so that
	// a person can watch an election, or "fast" (tests).
	Timing string
	// Open, when set, opens this lesson at once instead of the picker; the
	// picker is one key away.
	Open *lessons.Lesson
	// Sandbox are the commands the sandbox runs when it opens.
	Sandbox []string
	// Kafka, when set, puts the Kafka protocol on the lab's nodes.
	Kafka *command.KafkaListen
	// SQS, when set, puts Amazon SQS's API on the lab's nodes.
	SQS *command.SQSListen
	// LogDir, when set, is the folder the lab writes its segment files
	// to, kept when it closes (see lab.Options).
	LogDir string
	// Theme overrides DefaultTheme.
	Theme *draw.Theme
	// Renderer is the terminal the program draws on (nil: this
	// process's); a program served over SSH has the session's.
	Renderer *lipgloss.Renderer
	// Class, when set, shares every screen this program opens with the
	// students who follow it (see Class).
	Class *source.Class
	// Notice is shown on the lesson picker when it opens: how students
	// reach a served lab.
	Notice string
	// NoChallenges leaves the challenges out of the picker: a session
	// served over SSH cannot run a program of its own.
	NoChallenges bool
	// ConfirmQuit, when set, is asked before q quits: a question to
	// answer y or n, or "" to quit at once. A teacher with students
	// connected is asked whether to end their sessions.
	ConfirmQuit func() string
	// For RunApp: no alternate screen, no mouse, other streams.
	NoAltScreen bool
	NoMouse     bool
	Input       io.Reader
	Output      io.Writer
}

// App is the program a learner opens: the lesson picker first, and the
// lab screen for the lesson (or the sandbox) chosen; backspace on the lab
// screen comes back. One lab serves every lesson in turn — a lesson starts
// on a fresh cluster — and Close closes it.
type App struct {
	opts   AppOptions
	st     *draw.Styles
	picker *picker
	w, h   int

	// The lab starts in the background when the app does: a classroom
	// cluster takes a few seconds to elect its leaders.
	labOnce  sync.Once
	labDone  chan struct{}
	lab      *lab.Lab
	labErr   error
	labUsed  bool
	want     *pickerEntry // opens when the lab is up
	wantOver bool

	asking  bool // the picker's q asked ConfirmQuit's question
	screen  *Model
	closers []func()      // the open screen's sources, last first
	closing chan struct{} // closed when the last screen's sources are closed
}

type labReadyMsg struct{}

// NewApp makes the program and starts its lab.
func NewApp(opts AppOptions) (*App, error) {
	if opts.Timing == "" {
		opts.Timing = "classroom"
	}
	if opts.Lessons == nil {
		all, err := lessons.Curriculum()
		if err != nil {
			return nil, fmt.Errorf("the curriculum: %w", err)
		}
		opts.Lessons = all
	}
	th := draw.DefaultTheme
	if opts.Theme != nil {
		th = *opts.Theme
	}
	a := &App{opts: opts, st: draw.NewStylesFor(th, opts.Renderer), labDone: make(chan struct{}), closing: make(chan struct{})}
	close(a.closing)
	var progress lessons.Progress
	var loadErr error
	where := ""
	if opts.Progress != nil {
		where = opts.Progress.Path()
		progress, loadErr = opts.Progress.Load()
	}
	a.picker = newPicker(a.st, opts.Lessons, progress, where)
	if opts.NoChallenges {
		a.picker.dropChallenges()
	}
	if opts.Notice != "" {
		a.picker.setStatus(opts.Notice, true)
	}
	if loadErr != nil {
		a.picker.setStatus(loadErr.Error(), false)
	}
	a.picker.setSize(MinWidth, MinHeight)
	a.w, a.h = MinWidth, MinHeight
	go func() {
		defer close(a.labDone)
		a.lab, a.labErr = lab.New(lab.Options{Nodes: 3, Timing: opts.Timing, Kafka: opts.Kafka, SQS: opts.SQS, LogDir: opts.LogDir})
	}()
	if opts.Open != nil {
		a.want = &pickerEntry{les: opts.Open}
		for i, e := range a.picker.entries {
			if e.les != nil && e.les.ID == opts.Open.ID {
				a.picker.sel = i
				a.picker.sync()
			}
		}
		a.picker.setStatus(fmt.Sprintf("Opening %s: starting a three-node cluster…", opts.Open.Title), true)
	}
	return a, nil
}

// RunApp runs the program on the terminal until the learner quits.
func RunApp(opts AppOptions) error {
	lipgloss.HasDarkBackground()
	a, err := NewApp(opts)
	if err != nil {
		return err
	}
	defer a.Close()
	_, err = tea.NewProgram(a, programOptions(opts.NoAltScreen, opts.NoMouse, opts.Input, opts.Output)...).Run()
	return err
}

// Close closes the open screen, its sources and the lab, and returns when
// they are gone.
func (a *App) Close() {
	a.leave()
	<-a.closing
	<-a.labDone
	a.labOnce.Do(func() {
		if a.lab != nil {
			a.lab.Close()
		}
	})
}

// Init waits for the lab.
func (a *App) Init() tea.Cmd {
	done := a.labDone
	return func() tea.Msg {
		<-done
		return labReadyMsg{}
	}
}

// Update routes a message to the lab screen when one is open, else to the
// picker.
func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.w, a.h = msg.Width, msg.Height
		a.picker.setSize(msg.Width, msg.Height)
	case labReadyMsg:
		if a.labErr != nil {
			a.picker.setStatus("the lab did not start: "+a.labErr.Error(), false)
			return a, nil
		}
		if a.want != nil && a.screen == nil {
			e, over := *a.want, a.wantOver
			a.want = nil
			return a, a.open(e, over)
		}
		return a, nil
	}
	if a.screen != nil {
		_, cmd := a.screen.Update(msg)
		if a.screen.WantsBack() {
			a.leave()
			return a, nil
		}
		return a, cmd
	}
	act := pickNothing
	switch msg := msg.(type) {
	case tea.KeyMsg:
		if a.asking {
			a.asking = false
			if msg.String() == "y" || msg.String() == "Y" {
				return a, tea.Quit
			}
			a.picker.setStatus("Not quitting: the class goes on.", true)
			return a, nil
		}
		act = a.picker.update(msg)
	case tea.MouseMsg:
		act = a.picker.mouse(msg)
	}
	switch act {
	case pickQuit:
		if a.opts.ConfirmQuit != nil {
			if q := a.opts.ConfirmQuit(); q != "" {
				a.asking = true
				a.picker.ask(q)
				return a, nil
			}
		}
		return a, tea.Quit
	case pickOpen:
		return a, a.request(a.picker.selected(), false)
	case pickStartOver:
		return a, a.request(a.picker.selected(), true)
	}
	return a, nil
}

// request opens an entry now, or as soon as the lab is up.
func (a *App) request(e pickerEntry, over bool) tea.Cmd {
	select {
	case <-a.labDone:
	default:
		a.want, a.wantOver = &e, over
		what := "the sandbox"
		if e.les != nil {
			what = e.les.Title
		}
		a.picker.setStatus(fmt.Sprintf("Opening %s as soon as the cluster is up…", what), true)
		return nil
	}
	if a.labErr != nil {
		a.picker.setStatus("the lab did not start: "+a.labErr.Error(), false)
		return nil
	}
	return a.open(e, over)
}

// open puts the lab screen up for a lesson (at the step the learner left
// it, or at step 1 when over) or the sandbox.
func (a *App) open(e pickerEntry, over bool) tea.Cmd {
	<-a.closing // the last screen's runner must be off the lab
	labSrc := source.NewLabSource(a.lab)
	var src view.Source = labSrc
	closers := []func(){labSrc.Close}
	opts := Options{
		Commands:      LabCommands(),
		BackToLessons: true,
		Theme:         a.opts.Theme,
		Renderer:      a.opts.Renderer,
		ConfirmQuit:   a.opts.ConfirmQuit,
	}
	if e.les != nil {
		ls, err := source.NewLessonSource(e.les, labSrc, source.LessonOptions{Progress: a.opts.Progress, Next: a.picker.nextName(e.les)})
		if err != nil {
			labSrc.Close()
			a.picker.setStatus(err.Error(), false)
			return nil
		}
		src = ls
		closers = append([]func(){ls.Close}, closers...)
		step := 1
		if !over {
			step = source.StartStep(e.les, a.opts.Progress)
		}
		opts.Commands = append(opts.Commands, source.LessonCommands...)
		if a.opts.Class != nil {
			opts.Commands = append(opts.Commands, source.CmdReveal)
		}
		opts.Startup = []string{fmt.Sprintf("%s %d", source.CmdLessonGoto, step)}
	} else {
		if a.labUsed {
			opts.Startup = append(opts.Startup, "cluster nodes=3")
		}
		opts.Startup = append(opts.Startup, a.opts.Sandbox...)
	}
	if a.opts.Class != nil {
		sh := a.opts.Class.Share(src)
		src = sh
		closers = append([]func(){sh.Close}, closers...)
	}
	a.labUsed = true
	a.closers = closers
	a.screen = New(src, opts)
	a.screen.Update(tea.WindowSizeMsg{Width: a.w, Height: a.h})
	a.picker.setStatus("", true)
	return a.screen.Init()
}

// leave closes the lab screen, if one is open, and shows the picker with
// the progress read again. Its sources close in the background: a lesson
// step may take a moment to stop.
func (a *App) leave() {
	if a.screen == nil {
		return
	}
	a.screen.Close()
	a.screen = nil
	closers := a.closers
	a.closers = nil
	done := make(chan struct{})
	prev := a.closing
	a.closing = done
	go func() {
		defer close(done)
		<-prev
		for _, c := range closers {
			c()
		}
	}()
	if a.opts.Progress != nil {
		pr, err := a.opts.Progress.Load()
		if err != nil {
			a.picker.setStatus(err.Error(), false)
		}
		a.picker.setProgress(pr)
		a.picker.moveOnFrom(a.picker.selected().les)
	}
}

// View draws the open screen.
func (a *App) View() string {
	if a.screen != nil {
		return a.screen.View()
	}
	return a.picker.View()
}

// programOptions are Bubble Tea's options for a screen on the terminal.
func programOptions(noAlt, noMouse bool, in io.Reader, out io.Writer) []tea.ProgramOption {
	var po []tea.ProgramOption
	if !noAlt {
		po = append(po, tea.WithAltScreen())
	}
	if !noMouse {
		po = append(po, tea.WithMouseCellMotion())
	}
	if in != nil {
		po = append(po, tea.WithInput(in))
	}
	if out != nil {
		po = append(po, tea.WithOutput(out))
	}
	return po
}
