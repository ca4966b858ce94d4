package tui

import (
	"bytes"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/mqlab/mqlab/lessons"
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
	v := sceneEnd(t)
	v.Lesson = &Lesson{ID: "t", Title: "Failover", Step: 1, Steps: 2, StepTitle: "The leader dies", Status: lessons.StatusStepDone,
		Blocks: []LessonBlock{{Kind: BlockText, Text: "n1 led orders/0; it died, and another node leads."}}}
	src := newFakeSource(v)
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

// A lesson on a real lab: answer the question, kill the leader with k, and
// the screen shows who leads now and at what epoch, without the timeline.
func TestEndToEndFailover(t *testing.T) {
	src := newLessonSource(t, LessonOptions{})
	m := New(src, Options{Startup: []string{CmdLessonGoto + " 2"}, Commands: append(LabCommands(), LessonCommands...)})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))

	waitText(t, tm, "Test: the leader dies", "n1 dies. At which epoch")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("b")}) // predict: a higher one
	waitText(t, tm, "and predicted it.")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("k")}) // n1 is selected and leads orders/0
	// One wait for both: WaitFor consumes the output it reads.
	waitText(t, tm, "(new, was", "leads now, at epoch")

	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
