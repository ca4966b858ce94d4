package tui

import (
	"bytes"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
)

func waitText(t *testing.T, tm *teatest.TestModel, texts ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, s := range texts {
			if !bytes.Contains(b, []byte(s)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

func waitExec(t *testing.T, src *fakeSource, line string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !src.has(line) {
		if time.Now().After(deadline) {
			t.Fatalf("the source never ran %q; it ran %q", line, src.got())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The whole program: keys and the prompt reach the source as command
// lines, and resizing down to the minimum and below redraws.
func TestEndToEnd(t *testing.T) {
	src := newFakeSource(scenarioDemo(t).View())
	m := New(src, Options{})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))

	waitText(t, tm, "orders/0", "Timeline")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("k")})
	waitExec(t, src, "kill n1")
	waitText(t, tm, "kill n1")

	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(":")})
	tm.Type("produce orders count=3 acks=1")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitExec(t, src, "produce orders count=3 acks=1")

	tm.Send(tea.WindowSizeMsg{Width: 80, Height: 24})
	waitText(t, tm, "[Lesson]━ Cluster")
	tm.Send(tea.WindowSizeMsg{Width: 60, Height: 20})
	waitText(t, tm, "at least 80×24")
	tm.Send(tea.WindowSizeMsg{Width: 100, Height: 30})
	waitText(t, tm, "[Lesson]━ Checker")

	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

// A lesson on the demo lab: kill the leader with k, and the screen shows
// who leads now and at what epoch, without the timeline.
func TestEndToEndFailover(t *testing.T) {
	d := newDemo(1, demoStart)
	d.advanceBy(10 * time.Second)
	m := New(d, Options{})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))

	waitText(t, tm, "Demo: leader failover", "orders/0  leader ▲ n1  epoch 7")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("n")}) // step 2: kill the leader
	waitText(t, tm, "Kill the leader")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("b")}) // predict: epoch 8
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("k")}) // n1 is selected and leads orders/0
	waitText(t, tm, "n1 is down")
	d.advanceBy(2 * time.Second)
	// One wait for both: WaitFor consumes the output it reads.
	waitText(t, tm, "orders/0  leader ▲ n2  epoch 8 (new, was 7)", "and predicted it.")

	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
