package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

// A fault's effect is on every panel of the frame that reports it: in a
// running lab at classroom timing, with records flowing to a consumer,
// the first frame whose status line says "✓ kill n1" shows n1 down on the
// cluster panel too, at the 100x30 of a projector. The screen writes each
// frame's rows top to bottom, the cluster above the status line, so in
// the stream of frames n1's "down" must come before the tick of the
// status line: a panel a frame late would put it after.
func TestKillShowsInTheFrameThatReportsIt(t *testing.T) {
	l, err := lab.New(lab.Options{Nodes: 3, Timing: "classroom"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	src := source.NewLabSource(l)
	t.Cleanup(src.Close)
	for _, line := range []string{"topic create orders partitions=3", "load orders rate=1000/s for=60s", "consumer start c1 group=billing topic=orders"} {
		mustExec(t, src, line)
	}
	m := New(src, Options{Commands: LabCommands()})
	t.Cleanup(m.Close)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	waitText(t, tm, "n1 ● up", "▶ running")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("1")})
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("k")})
	var text string
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		text = ansi.Strip(string(b))
		return strings.Contains(text, "✓ kill n1")
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(time.Millisecond))
	down, reported := strings.Index(text, "n1 ✗ down"), strings.Index(text, "✓ kill n1")
	if down < 0 || down > reported {
		t.Errorf("the frame that says \"✓ kill n1\" shows n1 still up: the cluster panel lags the status line")
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// A command that fails part-way may have changed the lab all the same:
// the frame that reports the failure shows the lab as it is then.
func TestFailedCommandShowsTheLabAsItIs(t *testing.T) {
	src := newFakeSource(view.State{Nodes: []view.Node{{ID: "n1", Up: true}, {ID: "n2", Up: true}, {ID: "n3", Up: true}}})
	src.reply = func(string) (string, error) {
		src.set(func(v *view.State) { v.Nodes = []view.Node{{ID: "n1"}, {ID: "n2", Up: true}, {ID: "n3", Up: true}} })
		return "", errors.New("n1 went down, then the wait for a new leader ran out")
	}
	m := New(src, Options{})
	t.Cleanup(m.Close)
	m.Update(teaSize(120, 40))
	press(m, "1", "k")
	got := ansi.Strip(m.View())
	if !strings.Contains(got, "n1 went down") || !strings.Contains(got, "n1 ✗ down") {
		t.Errorf("the frame that reports the failure does not show n1 down:\n%s", got)
	}
}
