package source

import (
	"context"
	"strings"
	"sync"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/view"
)

// The lesson commands the TUI's keys send (n, p, a–d) and the screen
// opens a lesson with; the player runs them.
const (
	CmdLessonNext  = lessons.CmdLessonNext
	CmdLessonPrev  = lessons.CmdLessonPrev
	CmdLessonReset = lessons.CmdLessonReset
	CmdLessonGoto  = lessons.CmdLessonGoto
	CmdLessonHint  = lessons.CmdLessonHint
	CmdPredict     = lessons.CmdPredict
)

// LessonCommands are the lesson commands for the prompt's completion.
var LessonCommands = lessons.Commands

// LessonOptions configure a LessonSource.
type LessonOptions struct {
	// Progress keeps the step, the answers and whether the lesson was
	// finished. Nil keeps nothing.
	Progress *lessons.Store
	// Sandbox lets the learner pass a step although an expectation fails,
	// a task waits or a question is open. A lesson normally holds them to
	// it.
	Sandbox bool
	// Next names the lesson after this one, offered when it is finished.
	Next string
}

// LessonSource plays a lesson on the lab screen through a lessons.Player
// on the lab of a LabSource: View adds the player's state, drawn as the
// pane's Lesson, and Exec gives the lesson commands (lesson next, predict
// b, …) to the player and every other line to the lab, noting it for the
// player first.
type LessonSource struct {
	lab    *LabSource
	player *lessons.Player
	les    *lessons.Lesson
	next   string // the lesson after it, for its finish

	ch   chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// NewLessonSource plays les on the lab of labSrc. Nothing plays until a
// lesson command: the screen opens it with "lesson goto N". Close it
// before closing the lab.
func NewLessonSource(les *lessons.Lesson, labSrc *LabSource, opts LessonOptions) (*LessonSource, error) {
	p, err := lessons.NewPlayer(les, lessons.PlayerOptions{Lab: labSrc.Lab(), Progress: opts.Progress, Sandbox: opts.Sandbox})
	if err != nil {
		return nil, err
	}
	s := &LessonSource{lab: labSrc, player: p, les: les, next: opts.Next,
		ch: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.forward()
	return s, nil
}

// StartStep is the step to open a lesson at: where the learner left it
// (from 1), or 1.
func StartStep(les *lessons.Lesson, store *lessons.Store) int { return lessons.StartStep(les, store) }

// Lab returns the LabSource the lesson plays on.
func (s *LessonSource) Lab() *LabSource { return s.lab }

// forward passes the lab's and the player's signals on as the source's.
func (s *LessonSource) forward() {
	defer close(s.done)
	defer close(s.ch)
	labCh, playerCh := s.lab.Changes(), s.player.Changes()
	for labCh != nil || playerCh != nil {
		select {
		case _, ok := <-labCh:
			if !ok {
				labCh = nil
				continue
			}
		case _, ok := <-playerCh:
			if !ok {
				playerCh = nil
				continue
			}
		case <-s.stop:
			return
		}
		select {
		case s.ch <- struct{}{}:
		default:
		}
	}
	<-s.stop
}

// Changes signals, coalesced, that the lab or the lesson moved.
func (s *LessonSource) Changes() <-chan struct{} { return s.ch }

// Close stops the player and any lesson command, and returns when they
// are gone. It does not close the LabSource or the lab.
func (s *LessonSource) Close() {
	s.once.Do(func() {
		s.player.Close()
		close(s.stop)
		<-s.done
	})
}

// View is the lab's state with the lesson's.
func (s *LessonSource) View() view.State {
	v := s.lab.View()
	st := s.player.State()
	v.Lesson = lessonOf(s.les, st)
	v.Clock.Held = heldWords(st.Held, v.Clock.Paused, st.Status)
	v.Lesson.Next = s.next
	return v
}

// heldWords is why the clock stands still, for the header: the player's
// hold, else the lesson's own pause and how time runs on — while a
// question is open, not that space would run it on, which could change
// the answer before it is given.
func heldWords(held string, paused bool, status lessons.Status) string {
	switch {
	case held != "" || !paused:
		return held
	case status == lessons.StatusPredict:
		return "the lesson stopped it — answer the question"
	}
	return "the lesson stopped it — space resumes"
}

// Exec gives an order to the player: a lab command (the learner's key
// or typed line, parsed once) or a line of the lesson's own (lesson next,
// predict b).
func (s *LessonSource) Exec(ctx context.Context, o view.Order) (string, error) {
	if o.Cmd != nil {
		return s.player.ExecCommand(ctx, o.Cmd)
	}
	return s.player.Exec(ctx, o.Line)
}

// lessonOf draws the player's state as the pane's Lesson.
func lessonOf(les *lessons.Lesson, st lessons.State) *view.Lesson {
	ls := &view.Lesson{ID: les.ID, Title: les.Title, Step: min(st.Step+1, st.Steps), Steps: st.Steps,
		StepTitle: st.StepTitle, Status: st.Status, Notice: st.Notice}
	ls.Blocks = make([]view.LessonBlock, 0, len(st.Blocks))
	for _, b := range st.Blocks {
		var c view.LessonBlock
		switch b.Kind {
		case lessons.KindText:
			c = view.LessonBlock{Kind: view.BlockText, Text: b.Text}
		case lessons.KindLab:
			c = view.LessonBlock{Kind: view.BlockCommands, Commands: commandLines(b.Commands)}
		case lessons.KindTask:
			t := view.Task{Text: b.Task.Text, Hint: b.Task.Hint, HintShown: b.Task.HintShown, Done: b.Task.Done, Waiting: b.Task.Waiting, Tried: b.Task.Tried,
				Decide: b.Task.Decide, Acted: b.Task.Acted, Chosen: b.Task.Chosen}
			c = view.LessonBlock{Kind: view.BlockTask, Task: &t}
			ls.Tasks = append(ls.Tasks, t)
		case lessons.KindPredict:
			pr := b.Prediction
			p := view.Prediction{Question: pr.Question, Choices: pr.Choices, Chosen: pr.Chosen, Answer: pr.Answer, Why: pr.Why,
				Numeric: pr.Numeric, Given: pr.Given, Right: pr.Right, Correct: pr.Correct, Number: pr.Number}
			c = view.LessonBlock{Kind: view.BlockPrediction, Prediction: &p}
			if ls.Prediction == nil || ls.Prediction.Chosen >= 0 || ls.Prediction.Answer >= 0 {
				ls.Prediction = &p
			}
		case lessons.KindExpect:
			es := expectations(b.Expects)
			c = view.LessonBlock{Kind: view.BlockExpect, Expectations: es}
			ls.Expectations = append(ls.Expectations, es...)
		default:
			continue
		}
		ls.Blocks = append(ls.Blocks, c)
	}
	return ls
}

// looksIntoFiles says whether a lesson's command lists or prints the
// lab's segment files or reads a service's tables, whose output the
// lesson pane shows under it: the narrative goes on to read it ("the
// balance above").
func looksIntoFiles(text string) bool {
	return strings.HasPrefix(text, "log files ") || strings.HasPrefix(text, "log dump ") || strings.HasPrefix(text, "sql ")
}

func commandLines(rs []lessons.CommandResult) []view.CommandLine {
	out := make([]view.CommandLine, len(rs))
	for i, r := range rs {
		out[i] = view.CommandLine{Text: r.Text, OK: r.Err == nil}
		if r.Err != nil {
			out[i].Note = r.Err.Error()
		}
		if r.Err == nil && looksIntoFiles(r.Text) {
			out[i].Found = r.Lines
		}
	}
	return out
}

func expectations(rs []lessons.ExpectResult) []view.Expectation {
	out := make([]view.Expectation, len(rs))
	for i, r := range rs {
		out[i] = view.Expectation{Text: r.Cond, Label: r.Label, Checked: true, OK: r.Held, Got: r.Observed}
	}
	return out
}

// Reveal shows the open question's answer without answering it: the
// teacher's "reveal", for a class that answered on its own screens.
func (s *LessonSource) Reveal(ctx context.Context) (string, error) { return s.player.Reveal(ctx) }
