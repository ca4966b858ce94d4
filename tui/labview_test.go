package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

// Startup lines run in order when the screen opens, as typed ones would.
func TestStartupLines(t *testing.T) {
	src := newFakeSource(labShapedState())
	src.reply = func(line string) (string, error) {
		if line == "produce orders count=3" {
			return "producer-1 acknowledged\nproducer-2 acknowledged\nproducer-3 acknowledged", nil
		}
		return "done", nil
	}
	m := New(src, Options{Startup: []string{"topic create orders partitions=3", "produce orders count=3"}})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	waitExec(t, src, "produce orders count=3")
	if got := src.got(); len(got) != 2 || got[0] != "topic create orders partitions=3" {
		t.Errorf("ran %q", got)
	}
	// Its output does not cover the lab: one line says where it went.
	waitText(t, tm, "produce orders count=3 — its 3 lines are in the timeline")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if fm := tm.FinalModel(t).(*Model); fm.output != nil {
		t.Errorf("a startup line opened the output pane: %q", fm.output)
	}
}

// A recording refuses what would change the lab, but its pace is the
// learner's: space, +/- and the steps of [ and ] reach the source, and the
// help bar offers no key that would change it.
func TestReadOnlyPaces(t *testing.T) {
	src := newFakeSource(labShapedState())
	m := New(src, Options{ReadOnly: true, Title: "run.jsonl"})
	t.Cleanup(m.Close)
	m.Update(teaSize(100, 30))
	if v := m.View(); !strings.Contains(v, "mqlab │ run.jsonl  REPLAY") || !strings.Contains(v, "A recording plays here") {
		t.Errorf("the screen does not say it is a recording:\n%s", v)
	}
	// Pacing works in the past too: the playback goes on underneath.
	press(m, "k", " ", "+", "[", "-", ":", "h", "e", "a", "l", "enter")
	if got := strings.Join(src.got(), ","); got != "pause,speed 2x,step back,speed 0.5x" {
		t.Errorf("a recording ran %q", got)
	}
	v := m.View()
	if !strings.Contains(v, "a recording cannot be changed: heal was not run") {
		t.Errorf("no word of why:\n%s", v)
	}
	if footer := v[strings.LastIndex(v, "\n")+1:]; strings.Contains(footer, "kill") || strings.Contains(footer, "heal") {
		t.Errorf("the help bar of a recording offers keys that would change it: %q", footer)
	}
}

// A key pressed while a lesson's step is being set up, an answer typed
// as the question appears, waits for the step and then acts: it is not
// lost because the question was not open yet when it was pressed.
func TestKeysWaitForTheOpeningStep(t *testing.T) {
	starting := view.State{Lesson: &view.Lesson{ID: "t", Title: "t", Step: 1, Steps: 2, Status: lessons.StatusStarting}}
	src := newFakeSource(starting)
	opened := make(chan struct{})
	src.reply = func(line string) (string, error) {
		if line == source.CmdLessonGoto+" 1" {
			<-opened
			pred := &view.Prediction{Question: "q", Choices: []string{"7", "8", "9"}, Chosen: -1, Answer: -1}
			src.set(func(v *view.State) {
				v.Lesson = &view.Lesson{ID: "t", Title: "t", Step: 1, Steps: 2, Status: lessons.StatusPredict, Prediction: pred,
					Blocks: []view.LessonBlock{{Kind: view.BlockPrediction, Prediction: pred}}}
			})
		}
		return "done", nil
	}
	m := New(src, Options{Startup: []string{source.CmdLessonGoto + " 1"}, Commands: append(LabCommands(), source.LessonCommands...)})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	waitExec(t, src, source.CmdLessonGoto+" 1")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("b")})
	close(opened)
	waitExec(t, src, "predict b")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
