package tui

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/view"
)

// lessonBlocksState is a step as a LessonSource shows it, played to its
// end: narrative, the lab's commands, a wrong prediction revealed, a task
// done, expectations of which one failed, and the notice that says so.
func lessonBlocksState() *view.Lesson {
	return &view.Lesson{
		ID: "failover", Title: "Leader failover: epochs, truncation and the repeat",
		Step: 2, Steps: 5, StepTitle: "A batch only the leader holds",
		Status: lessons.StatusFailed,
		Notice: "This step did not go as the lesson expects: hwm(orders/0) == 2000 (hwm(orders/0) is 1500) does not hold. " +
			"During this step you ran: kill n2. :lesson reset starts the step again on a fresh cluster.",
		Blocks: []view.LessonBlock{
			{Kind: view.BlockText, Text: "The next batch, offsets **1,500 to 1,999**, reaches n1 at the worst\nmoment: n1 has just lost contact with both followers."},
			{Kind: view.BlockPrediction, Prediction: &view.Prediction{Question: "What becomes of the batch?",
				Choices: []string{"both are lost", "0 to 1,499 survive; the batch is lost", "0 to 1,499 survive; the checkout retries the batch"},
				Chosen:  1, Answer: 2, Why: "Everything below the high-water mark is on a majority."}},
			{Kind: view.BlockCommands, Commands: []view.CommandLine{{Text: "partition n1 | n2,n3", OK: true},
				{Text: "wait hwm(orders/0) == 2000", Note: "timed out after 10s"}}},
			{Kind: view.BlockTask, Task: &view.Task{Text: "Kill n1.", Hint: "key: select n1 and press k · or type: kill n1", Done: true}},
			{Kind: view.BlockText, Text: "| acks | told \"ok\" | lost |\n|---|---|---|\n| 1 | 500 | 12 |"},
			{Kind: view.BlockExpect, Expectations: []view.Expectation{
				{Text: "hwm(orders/0) == 2000", Label: "the retried batch is committed", Checked: true, Got: "hwm(orders/0) is 1500"},
				{Text: "leo(orders/0@n1) == 2000", Label: "n1 holds its own copy of it", Checked: true, OK: true, Got: "leo(orders/0@n1) is 2000"},
				{Text: "confirmed == 1500", Checked: true, OK: true, Got: "confirmed is 1500"},
			}},
		},
	}
}

func TestLessonPaneGoldens(t *testing.T) {
	for _, c := range []struct {
		name string
		ls   func() *view.Lesson
		w, h int
	}{
		{"blocks_failed", lessonBlocksState, 40, 44},
		{"blocks_failed", lessonBlocksState, 78, 18},
		{"blocks_task", func() *view.Lesson {
			ls := lessonBlocksState()
			ls.Status, ls.Notice = lessons.StatusTask, "You ran kill n2; this task asks you to press h (or type heal)."
			ls.Blocks = append(ls.Blocks[:1:1], view.LessonBlock{Kind: view.BlockTask, Task: &view.Task{Text: "Heal the network.", Hint: "key: h · or type: heal"}})
			ls.Tasks = []view.Task{*ls.Blocks[1].Task}
			ls.Blocks[0].Prediction = nil
			ls.Blocks[0] = view.LessonBlock{Kind: view.BlockText, Text: "n1 still holds offsets 1,500 to 1,999 from the old epoch."}
			return ls
		}, 40, 16},
		{"blocks_finished", func() *view.Lesson {
			return &view.Lesson{Title: "Leader failover", Step: 5, Steps: 5, Status: lessons.StatusFinished}
		}, 40, 6},
	} {
		ctx := newContext(newFakeSource(view.State{}), draw.NewStyles(draw.DefaultTheme), DefaultKeyMap())
		ctx.Keys.Lessons.SetEnabled(true)
		ctx.State = &view.State{Lesson: c.ls()}
		p := newLessonPanel(ctx)
		p.SetSize(c.w, c.h)
		got := p.View()
		golden(t, fmt.Sprintf("lesson_%s_%dx%d", c.name, c.w, c.h), got)
		for i, l := range lines(got) {
			if draw.Width(l) != c.w {
				t.Errorf("%s row %d is %d wide", c.name, i, draw.Width(l))
			}
		}
	}
}

// Random keys and sizes over the lesson pane in every status, and over the
// picker: nothing panics and every frame fills the window exactly.
func TestRandomInputLessonAndPicker(t *testing.T) {
	rnd := rand.New(rand.NewSource(7))
	keys := []string{"n", "p", "a", "b", "c", "k", "tab", "shift+tab", "up", "down", "enter", "esc", "?", "backspace",
		"r", "j", "g", "G", "x", "home", "end"}
	v := sceneEnd(t)
	v.Lesson = lessonBlocksState()
	src := newFakeSource(v)
	m := New(src, Options{BackToLessons: true})
	t.Cleanup(m.Close)
	p := newPicker(draw.NewStyles(draw.DefaultTheme), pickerLessons(), pickerProgress(), "")
	w, h := 100, 30
	m.Update(teaSize(w, h))
	p.setSize(w, h)
	for i := 0; i < 4000; i++ {
		if rnd.Intn(10) == 0 {
			w, h = 20+rnd.Intn(200), 5+rnd.Intn(70)
			m.Update(teaSize(w, h))
			p.setSize(w, h)
		}
		if rnd.Intn(20) == 0 {
			src.mu.Lock()
			ls := lessonBlocksState()
			ls.Status = lessons.Status(rnd.Intn(int(lessons.StatusFinished) + 1))
			ls.Blocks = ls.Blocks[:rnd.Intn(len(ls.Blocks)+1)]
			src.state.Lesson = ls
			src.mu.Unlock()
			m.Update(changeMsg{})
		}
		k := keyMsg(keys[rnd.Intn(len(keys))])
		m.Update(k)
		p.update(k)
		if i%5 == 0 {
			if w >= MinWidth && h >= MinHeight {
				checkSize(t, "lesson screen", m.View(), w, h)
				checkSize(t, "picker", p.View(), w, h)
			} else {
				m.View()
				p.View()
			}
		}
	}
}

// While a step's commands run, the pane's last row names the one running,
// read from the timeline: a step whose consumers join one rebalance at a
// time can take many seconds, and a bare "running…" says nothing.
func TestLessonPaneNamesTheRunningCommand(t *testing.T) {
	ctx := newContext(newFakeSource(view.State{}), draw.NewStyles(draw.DefaultTheme), DefaultKeyMap())
	ls := &view.Lesson{Title: "How many partitions?", Step: 2, Steps: 4, StepTitle: "Partitions do not do the work", Status: lessons.StatusPlaying,
		Blocks: []view.LessonBlock{{Kind: view.BlockText, Text: "Four workers start."}}}
	ctx.State = &view.State{Lesson: ls}
	p := newLessonPanel(ctx)
	p.SetSize(60, 12)
	if got := lines(p.View()); !strings.Contains(strings.Join(got, "\n"), "running the step's commands…") {
		t.Errorf("with no command in the timeline the pane says:\n%s\nwant the plain running notice", strings.Join(got, "\n"))
	}
	ctx.State.Timeline = []view.TimelineLine{
		{Kind: "command", Text: "consumer start billing-2 group=billing topic=orders"},
		{Kind: "leader-elected", Text: "n2 leads orders/3 at epoch 2"},
		{Kind: "command", Text: "consumer start billing-3 group=billing topic=orders rate=50/s commit=poll"},
		{Kind: "outcome", Text: "billing-2 joined group billing"},
	}
	got := lines(p.View())
	last := ""
	for _, l := range got {
		if strings.TrimSpace(l) != "" {
			last = l
		}
	}
	if !strings.Contains(last, "running: consumer start billing-3") || strings.Contains(last, "billing-2") {
		t.Errorf("the pane's last row is %q; want it to name the newest command, billing-3's start", last)
	}
	for i, l := range got {
		if draw.Width(l) != 60 {
			t.Errorf("row %d is %d wide, want 60", i, draw.Width(l))
		}
	}
}

// A step that asks a second question after the first one's reveal keeps
// the open question in view, in a pane too short for both: the learner is
// asked to answer it.
func TestLessonPaneShowsTheOpenQuestion(t *testing.T) {
	ctx := newContext(newFakeSource(view.State{}), draw.NewStyles(draw.DefaultTheme), DefaultKeyMap())
	first := &view.Prediction{Question: "What becomes of the batch?",
		Choices: []string{"both are lost", "0 to 1,499 survive; the batch is lost", "0 to 1,499 survive; the checkout retries the batch"},
		Chosen:  2, Answer: 2, Why: "Everything below the high-water mark is on a majority, so any new leader has it, and the producer retries."}
	second := &view.Prediction{Question: "At which epoch does the new leader lead?",
		Choices: []string{"one higher", "the same one", "n1's epoch minus one"}, Chosen: -1, Answer: -1}
	ls := &view.Lesson{Title: "Leader failover", Step: 2, Steps: 4, StepTitle: "A batch only the leader holds",
		Status: lessons.StatusPredict, Prediction: first,
		Blocks: []view.LessonBlock{
			{Kind: view.BlockText, Text: "The next batch, offsets 1,500 to 1,999, reaches n1 at the worst moment: n1 has just lost contact with both followers."},
			{Kind: view.BlockPrediction, Prediction: &view.Prediction{Question: first.Question, Choices: first.Choices, Chosen: -1, Answer: -1}},
		}}
	ctx.State = &view.State{Lesson: ls}
	p := newLessonPanel(ctx)
	p.SetSize(40, 16)
	if got := p.View(); !strings.Contains(got, "What becomes of the batch?") {
		t.Fatalf("the first question is not in view:\n%s", got)
	}
	// The first is answered and revealed; the second is asked.
	ls2 := *ls
	ls2.Prediction = second
	ls2.Blocks = []view.LessonBlock{ls.Blocks[0], {Kind: view.BlockPrediction, Prediction: first}, {Kind: view.BlockPrediction, Prediction: second}}
	ctx.State = &view.State{Lesson: &ls2}
	got := p.View()
	for _, want := range []string{"At which epoch does the new", "n1's epoch minus one"} {
		if !strings.Contains(got, want) {
			t.Errorf("the open question is not in view (%q missing):\n%s", want, got)
		}
	}
}

// The one-row task line of a small screen holds a question or task
// written over several lines in its lesson file on one row: a line break
// in it would push the whole screen up a row.
func TestTaskLineIsOneRow(t *testing.T) {
	st := draw.NewStyles(draw.DefaultTheme)
	for _, ls := range []*view.Lesson{
		{Step: 2, Steps: 4, Status: lessons.StatusPredict, Prediction: &view.Prediction{Question: "n1 leads at epoch 3. Once n2 and n3 elect a new leader, at\nwhich epoch does it lead?", Choices: []string{"a", "b", "c"}, Chosen: -1, Answer: -1}},
		{Step: 3, Steps: 4, Status: lessons.StatusTask, Tasks: []view.Task{{Text: "Heal the network\nso n1 can rejoin.", Hint: "key: h"}}},
	} {
		got := taskLine(st, ls, 80)
		if strings.Contains(got, "\n") || draw.Width(got) != 80 {
			t.Errorf("task line %q: %d wide, want one row of 80", got, draw.Width(got))
		}
	}
}

// The small screen's task line gives the goal and how to ask for the
// hint, and the hint itself only once asked; a question that asks for a
// number says so instead of listing letters.
func TestTaskLineHidesTheHintUntilAsked(t *testing.T) {
	st := draw.NewStyles(draw.DefaultTheme)
	task := view.Task{Text: "Let n1 back into the cluster.", Hint: "key: h · or type: heal"}
	ls := &view.Lesson{Step: 3, Steps: 4, Status: lessons.StatusTask, Tasks: []view.Task{task}}
	if got := taskLine(st, ls, 100); strings.Contains(got, "heal") || !strings.Contains(got, "(t: a hint)") {
		t.Errorf("before the hint is asked for: %q", got)
	}
	ls.Tasks[0].HintShown = true
	if got := taskLine(st, ls, 100); !strings.Contains(got, "key: h · or type: heal") {
		t.Errorf("after the hint is asked for: %q", got)
	}
	num := &view.Lesson{Step: 1, Steps: 6, Status: lessons.StatusPredict, Prediction: &view.Prediction{Question: "How many orders wait?", Numeric: true, Chosen: -1, Answer: -1}}
	if got := taskLine(st, num, 100); !strings.Contains(got, "How many orders wait? (a number)") {
		t.Errorf("a numeric question: %q", got)
	}
}
