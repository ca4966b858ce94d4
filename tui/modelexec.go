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
)

// run sends one command line to the source, unless the screen is showing
// the past, a recording, or another command is still running.
func (m *Model) run(line string) tea.Cmd {
	switch {
	case m.opts.ReadOnly && !clockLine(line):
		m.setStatus(statusErr, "a recording cannot be changed: "+line+" was not run")
		return nil
	case m.opts.Follow && !strings.HasPrefix(line, lessons.CmdPredict+" "):
		m.setStatus(statusErr, line+" was not run: "+ErrReadOnly.Error())
		return nil
	case !m.hist.live() && !m.opts.ReadOnly:
		m.setStatus(statusErr, fmt.Sprintf("%s is the past and cannot change: esc returns to live, then try %q again",
			m.ctx.State.Time.Format("15:04:05.000"), line))
		return nil
	case m.running != "" && faultLine(line) && len(m.queued) == 0 && besideable(m.running):
		// A teacher's kill or restart acts at once, also while a produce
		// waits for a leader that only the restart can bring back.
		return m.startAside(line)
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
	if line == CmdStepForward || line == CmdStepBack {
		return true // a recording's own
	}
	cmd, err := command.Parse(line)
	return err == nil && command.Clock(cmd)
}

// besideable says whether a fault may run beside the running line: a lab
// command that works on the cluster there is. Not beside one that makes a
// new cluster (cluster, or a lesson's step, which replays the lesson on a
// fresh one), nor ahead of lines still waiting their turn: there a fault
// would hit a cluster about to be replaced, or run before what set it up.
func besideable(running string) bool {
	cmd, err := command.Parse(running)
	return err == nil && cmd.Name() != "cluster"
}

// faultLine says whether a line breaks or mends the cluster.
func faultLine(line string) bool {
	cmd, err := command.Parse(line)
	return err == nil && command.Fault(cmd)
}

// start runs a line now.
func (m *Model) start(line string) tea.Cmd {
	ctx, cancel := context.WithCancel(m.base)
	m.running, m.cancel = line, cancel
	m.setStatus(statusBusy, line)
	return m.exec(ctx, cancel, line, false)
}

// startAside runs a fault line now, beside the command that is running,
// which keeps the status line's "running" and esc.
func (m *Model) startAside(line string) tea.Cmd {
	ctx, cancel := context.WithCancel(m.base)
	m.setStatus(statusBusy, line+" (while "+m.running+" runs)")
	return m.exec(ctx, cancel, line, true)
}

func (m *Model) exec(ctx context.Context, cancel context.CancelFunc, line string, aside bool) tea.Cmd {
	src := m.ctx.Src
	return func() (msg tea.Msg) {
		defer func() {
			if r := recover(); r != nil {
				msg = execDoneMsg{id: m.id, line: line, err: fmt.Errorf("internal error: %v", r), aside: aside}
			}
			cancel()
		}()
		out, err := src.Exec(ctx, line)
		if err == nil && ctx.Err() != nil && m.base.Err() == nil {
			// Esc stopped it part-way: what it managed is no success.
			err = errCancelled
			if out = strings.TrimSpace(out); out != "" {
				err = fmt.Errorf("%w; before that: %s", errCancelled, oneLine(out))
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
		text := msg.err.Error()
		if !strings.HasPrefix(text, msg.line) { // the error names the command already: say it once
			text = msg.line + ": " + text
		}
		m.setStatus(statusErr, text)
		// What does not fit the status line opens above it, wrapped: the
		// end of an error is often the part that says what would be right.
		if strings.Contains(text, "\n") || textWidth(text)+2 > m.ctx.Width {
			m.showOutput(msg.line, text)
			m.setStatus(statusErr, oneLine(text))
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
