package tui

// Running command lines: one at a time and in order, except that a fault
// (kill, restart, isolate, partition, slow, heal, drop) never waits behind
// another; refused in the past or in a recording; and how each result is
// reported.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

// run sends one order to the source, unless the screen is showing the
// past, a recording, or another command is still running.
func (m *Model) run(o view.Order) tea.Cmd {
	line := o.Line
	switch {
	case m.opts.ReadOnly && !clockOrder(o):
		m.setStatus(statusErr, "a recording cannot be changed: "+line+" was not run")
		return nil
	case m.opts.Follow && !source.FollowerTakes(o):
		m.setStatus(statusErr, line+" was not run: "+source.ErrReadOnly.Error())
		return nil
	case !m.hist.live() && !m.opts.ReadOnly:
		m.setStatus(statusErr, fmt.Sprintf("%s is the past and cannot change: esc returns to live, then try %q again",
			m.ctx.State.Time.Format("15:04:05.000"), line))
		return nil
	case m.running != "" && faultOrder(o) && len(m.queued) == 0 && besideable(m.runningCmd):
		// A teacher's kill or restart acts at once, also while a produce
		// waits for a leader that only the restart can bring back.
		return m.startAside(o)
	case m.running != "":
		// One command at a time, in the order given: keys pressed quickly
		// wait their turn rather than being lost.
		if len(m.queued) >= maxQueued {
			m.setStatus(statusErr, fmt.Sprintf("still running %q with %d waiting: esc cancels them", m.running, len(m.queued)))
			return nil
		}
		m.queued = append(m.queued, o)
		waiting := make([]string, len(m.queued))
		for i, q := range m.queued {
			waiting[i] = q.Line
		}
		m.setStatus(statusBusy, fmt.Sprintf("%s, then %s", m.running, strings.Join(waiting, ", ")))
		return nil
	}
	return m.start(o)
}

// clockOrder says whether an order only paces time (pause, resume,
// speed): a recording accepts those.
func clockOrder(o view.Order) bool {
	if o.Line == source.CmdStepForward || o.Line == source.CmdStepBack {
		return true // a recording's own
	}
	return o.Cmd != nil && command.Clock(o.Cmd)
}

// besideable says whether a fault may run beside the running command: a
// lab command that works on the cluster there is. Not beside one that
// makes a new cluster (cluster, or a lesson's step, which replays the
// lesson on a fresh one), nor ahead of lines still waiting their turn:
// there a fault would hit a cluster about to be replaced, or run before
// what set it up.
func besideable(running command.Command) bool {
	return running != nil && running.Name() != "cluster"
}

// faultOrder says whether an order breaks or mends the cluster.
func faultOrder(o view.Order) bool { return o.Cmd != nil && command.Fault(o.Cmd) }

// setsUpStep says whether an order moves the lesson on to where it next
// asks something: a step opened (lesson next, prev, goto, reset) or an
// answer, after which the step plays on. Keys pressed meanwhile are meant
// for what it will ask, which is not open yet.
func setsUpStep(o view.Order) bool {
	if o.Cmd != nil {
		return false
	}
	line := strings.TrimSpace(o.Line)
	if _, ok := lessons.PredictAnswer(line); ok {
		return true
	}
	for _, c := range []string{source.CmdLessonNext, source.CmdLessonPrev, source.CmdLessonReset, source.CmdLessonGoto} {
		if line == c || strings.HasPrefix(line, c+" ") {
			return true
		}
	}
	return false
}

// start runs an order now. While it sets up a lesson's step, keys wait
// for the step and then act (see started).
func (m *Model) start(o view.Order) tea.Cmd {
	ctx, cancel := context.WithCancel(m.base)
	if setsUpStep(o) {
		m.starting = true
	}
	m.running, m.runningCmd, m.cancel = o.Line, o.Cmd, cancel
	m.setStatus(statusBusy, o.Line)
	return m.exec(ctx, cancel, o, false)
}

// startAside runs a fault now, beside the command that is running, which
// keeps the status line's "running" and esc.
func (m *Model) startAside(o view.Order) tea.Cmd {
	ctx, cancel := context.WithCancel(m.base)
	m.setStatus(statusBusy, o.Line+" (while "+m.running+" runs)")
	return m.exec(ctx, cancel, o, true)
}

func (m *Model) exec(ctx context.Context, cancel context.CancelFunc, o view.Order, aside bool) tea.Cmd {
	src := m.ctx.Src
	line := o.Line
	return func() (msg tea.Msg) {
		defer func() {
			if r := recover(); r != nil {
				msg = execDoneMsg{id: m.id, line: line, err: fmt.Errorf("internal error: %v", r), aside: aside}
			}
			cancel()
		}()
		out, err := src.Exec(ctx, o)
		if err == nil && ctx.Err() != nil && m.base.Err() == nil {
			// Esc stopped it part-way: what it managed is no success.
			err = errCancelled
			if out = strings.TrimSpace(out); out != "" {
				err = fmt.Errorf("%w; before that: %s", errCancelled, draw.OneLine(out))
			}
			out = ""
		}
		return execDoneMsg{id: m.id, line: line, out: out, err: err, aside: aside}
	}
}

// errCancelled: the learner stopped the command with esc.
var errCancelled = errors.New("cancelled with esc")

func (m *Model) execDone(msg execDoneMsg) tea.Cmd {
	if msg.aside {
		return m.report(msg)
	}
	m.running, m.runningCmd, m.cancel = "", nil, nil
	cmd := m.report(msg)
	if len(m.queued) > 0 && (m.hist.live() || m.opts.ReadOnly) {
		next := m.queued[0]
		m.queued = m.queued[1:]
		return tea.Batch(cmd, m.start(next))
	}
	m.queued = nil
	m.quiet = nil
	if m.starting {
		return tea.Batch(cmd, m.started())
	}
	return cmd
}

// started ends the screen's start: the keys pressed meanwhile act now, in
// order, on the step the startup lines opened.
func (m *Model) started() tea.Cmd {
	m.starting = false
	early := m.early
	m.early = nil
	if len(early) == 0 {
		return nil
	}
	m.pull() // the keys act on the step as it opened, not on the last frame drawn
	m.syncKeys()
	var cmds []tea.Cmd
	for _, k := range early {
		cmds = append(cmds, m.keys(k))
		m.syncKeys()
	}
	return tea.Sequence(cmds...)
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
		text := msg.err.Error()
		if !strings.HasPrefix(text, msg.line) { // the error names the command already: say it once
			text = msg.line + ": " + text
		}
		m.setStatus(statusErr, text)
		// What does not fit the status line opens above it, wrapped: the
		// end of an error is often the part that says what would be right.
		if strings.Contains(text, "\n") || draw.Width(text)+2 > m.ctx.Width {
			m.showOutput(msg.line, text)
			m.setStatus(statusErr, draw.OneLine(text))
		}
		// A command that failed or was cancelled part-way may have
		// changed the lab all the same (a produce that got some records
		// in): the frame that says so shows the lab as it is.
		m.pull()
		return m.flashCmd()
	}
	lines := strings.Split(out, "\n")
	switch {
	case out == "":
		m.setStatus(statusOK, msg.line)
	case len(lines) == 1 && missedPrediction(msg.line, out):
		// The command ran, but the news is that the prediction missed:
		// the mark says so, as the lesson pane's ✗ does.
		m.setStatus(statusErr, m.lineAndAnswer(msg.line, out))
	case len(lines) == 1:
		m.setStatus(statusOK, m.lineAndAnswer(msg.line, out))
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

// missedPrediction says whether out answers a prediction the learner got
// wrong (the player then says what the answer is).
func missedPrediction(line, out string) bool {
	return strings.Contains(line, "predict") && strings.HasPrefix(out, "the answer is ")
}

func (m *Model) showOutput(title, text string) {
	m.output = strings.Split(text, "\n")
	m.outputTitle = title
	m.outputOff = 0
}

func (m *Model) setStatus(k statusKind, s string) { m.status, m.statusKind = s, k }

// lineAndAnswer is a command and its one-line answer for the status line.
// Where both do not fit, the command is cut rather than the answer: the
// learner has just typed the command, and the answer is the news.
func (m *Model) lineAndAnswer(line, out string) string {
	// The status line's row after its mark, and the footer's row short of
	// the keys it keeps, less what breaking at a word may leave unused.
	kept := m.footerKept
	if kept == 0 {
		kept = 20 // not drawn yet: about ": command • ? help"
	}
	room := m.ctx.Width - 2 + max(0, m.ctx.Width-kept-4-12)
	if w := draw.Width(line) + 3 + draw.Width(out); w <= room || room <= 0 {
		return line + " — " + out
	}
	keep := max(20, room-3-draw.Width(out))
	if keep < draw.Width(line) {
		line = draw.Cut(line, keep)
	}
	return line + " — " + out
}
