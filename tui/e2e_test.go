package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
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
	v.Lesson = &view.Lesson{ID: "t", Title: "Failover", Step: 1, Steps: 2, StepTitle: "The leader dies", Status: lessons.StatusStepDone,
		Blocks: []view.LessonBlock{{Kind: view.BlockText, Text: "n1 led orders/0; it died, and another node leads."}}}
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
	src := newLessonSource(t, source.LessonOptions{})
	m := New(src, Options{Startup: []string{source.CmdLessonGoto + " 2"}, Commands: append(LabCommands(), source.LessonCommands...)})
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

// blockingSource answers every line at once but a produce, which waits
// until it is cancelled and then says what it managed, as the lab's does
// when no leader comes.
type blockingSource struct{ *fakeSource }

func (b *blockingSource) Exec(ctx context.Context, o view.Order) (string, error) {
	if !strings.HasPrefix(o.Line, "produce") {
		return b.fakeSource.Exec(ctx, o)
	}
	b.fakeSource.Exec(ctx, o)
	<-ctx.Done()
	return "producer-1 orders → failed: no leader", nil
}

// A fault key acts at once, also while another command blocks: with a
// produce waiting for a leader, r restarts the selected node without
// waiting its turn. Esc then cancels the produce, and the status line
// says it was cancelled, with no ✓.
func TestFaultKeysDoNotWait(t *testing.T) {
	src := &blockingSource{newFakeSource(sceneEnd(t))}
	m := New(src, Options{})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	waitText(t, tm, "orders/0")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(":")})
	tm.Type("produce orders count=3")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitExec(t, src.fakeSource, "produce orders count=3")
	start := time.Now()
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")})
	waitExec(t, src.fakeSource, "restart n1")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("r took %v to reach the lab while a produce blocked", d)
	}
	waitText(t, tm, "restart n1")
	tm.Send(tea.KeyMsg{Type: tea.KeyEscape})
	waitText(t, tm, "produce orders count=3: cancelled with esc; before that: producer-1 orders → failed")

	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if fm.statusKind != statusErr {
		t.Errorf("a cancelled command's status is %v, not an error: %q", fm.statusKind, fm.status)
	}
}
