package tui

// Following the source: waiting for its signals, pulling its state into
// the history, and the flashes that mark a truncation or a new epoch.

import (
	"fmt"
	"github.com/mqlab/mqlab/tui/panel"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/mqlab/mqlab/tui/view"
)

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
// costs a status line, not the class's demo.
func (m *Model) pull() {
	defer func() {
		if r := recover(); r != nil {
			m.setStatus(statusErr, fmt.Sprintf("reading the lab failed: %v", r))
		}
	}()
	v := m.ctx.Src.View()
	hadLesson := m.live != nil && m.live.Lesson != nil
	if ls := v.Lesson; ls != nil && hadLesson && (ls.Step != m.live.Lesson.Step || ls.ID != m.live.Lesson.ID) {
		m.newStep()
	}
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
	m.showContent()
}

// newStep brings the lesson forward when its step changes, however it
// changed (n, p, a typed lesson command, a task done): the pane in front
// of the lesson's slot is the lesson, at its top, and the timeline shows
// every kind of event again, so a new step never opens on a panel that
// hides it.
func (m *Model) newStep() {
	m.focus = panel.LessonID
	m.chosen = false
	m.showFocus()
	m.panels[panel.LessonID].Scroll(-1 << 20)
	m.timeline.ShowAll()
}

// noticeChanges starts flashes for truncations not seen before and for
// partitions whose epoch moved.
func (m *Model) noticeChanges(v *view.State) {
	if len(m.seenTrunc) > 10000 {
		clear(m.seenTrunc)
		clear(m.firstSeen)
	}
	for _, p := range v.Partitions {
		if old, ok := m.epochs[p.Name]; ok && old != p.Epoch && p.Epoch > old && m.pulled {
			m.ctx.EpochFlash[p.Name] = panel.EpochChange{From: old, To: p.Epoch, Frames: epochFlashFrames}
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
			k := panel.TruncKey(p.Name, r.Node, r.Truncation)
			if !m.seenTrunc[k] {
				m.seenTrunc[k] = true
				if m.pulled {
					m.ctx.TruncFlash[k] = truncFlashFrames
				}
			}
		}
	}
}

func (m *Model) flashCmd() tea.Cmd {
	if m.ticking || (len(m.ctx.TruncFlash) == 0 && len(m.ctx.EpochFlash) == 0) {
		return nil
	}
	m.ticking = true
	return tea.Tick(flashEvery, func(time.Time) tea.Msg { return flashTickMsg{m.id} })
}

func (m *Model) tickFlashes() {
	m.ctx.Frame++
	for k, n := range m.ctx.TruncFlash {
		if n <= 1 {
			delete(m.ctx.TruncFlash, k)
		} else {
			m.ctx.TruncFlash[k] = n - 1
		}
	}
	for k, e := range m.ctx.EpochFlash {
		if e.Frames <= 1 {
			delete(m.ctx.EpochFlash, k)
		} else {
			e.Frames--
			m.ctx.EpochFlash[k] = e
		}
	}
}
