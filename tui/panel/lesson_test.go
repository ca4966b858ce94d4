package panel

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/keys"
	"github.com/mqlab/mqlab/tui/view"
	"github.com/muesli/termenv"
)

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
		ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
		ctx.Keys.Lessons.SetEnabled(true)
		ctx.State = &view.State{Lesson: c.ls()}
		p := NewLesson(ctx)
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

// While a step's commands run, the pane's last row names the one running,
// read from the timeline: a step whose consumers join one rebalance at a
// time can take many seconds, and a bare "running…" says nothing.
func TestLessonPaneNamesTheRunningCommand(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ls := &view.Lesson{Title: "How many partitions?", Step: 2, Steps: 4, StepTitle: "Partitions do not do the work", Status: lessons.StatusPlaying,
		Blocks: []view.LessonBlock{{Kind: view.BlockText, Text: "Four workers start."}}}
	ctx.State = &view.State{Lesson: ls}
	p := NewLesson(ctx)
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

// A step that asks a question keeps it in view in a pane too short for
// the step. Once the learner answers and the step goes straight on to a
// second question, the first one's verdict and why stay in view, with
// the foot pointing down to the second, rather than scrolling the
// correction away; a pane tall enough shows both.
func TestLessonPaneShowsTheOpenQuestion(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	first := &view.Prediction{Question: "At which byte of the segment will the batch holding offset 27 start?", Numeric: true,
		Chosen: 0, Answer: 0, Given: "25", Right: "771 (exact)",
		Why: "Offsets 20 to 24 are five batches of 111 bytes, 555 in all; the late orders' batches take 108 bytes each, so 555 + 2 × 108 = 771."}
	second := &view.Prediction{Question: "How many seconds after the late orders is offset 20 deleted?", Numeric: true, Chosen: -1, Answer: -1}
	long := strings.Repeat("Retention deletes a whole file or nothing, so a segment goes only when its newest record is past retention. ", 3)
	ls := &view.Lesson{Title: "The log", Step: 3, Steps: 13, StepTitle: "Ten late orders",
		Status: lessons.StatusPredict, Prediction: first,
		Blocks: []view.LessonBlock{
			{Kind: view.BlockText, Text: long + long},
			{Kind: view.BlockPrediction, Prediction: &view.Prediction{Question: first.Question, Numeric: true, Chosen: -1, Answer: -1}},
		}}
	ctx.State = &view.State{Lesson: ls}
	p := NewLesson(ctx)
	p.SetSize(40, 24)
	if got := p.View(); !strings.Contains(got, "offset 27 start?") {
		t.Fatalf("the first question is not in view:\n%s", got)
	}
	// The first is answered and revealed; a paragraph, then the second.
	ls2 := *ls
	ls2.Prediction = second
	ls2.Blocks = []view.LessonBlock{ls.Blocks[0], {Kind: view.BlockPrediction, Prediction: first},
		{Kind: view.BlockText, Text: long}, {Kind: view.BlockPrediction, Prediction: second}}
	ctx.State = &view.State{Lesson: &ls2}
	got := strings.Join(strings.Fields(p.View()), " ")
	for _, want := range []string{"✗ You said 25; it was 771 (exact).", "Why: Offsets 20 to 24", "so 555 + 2 × 108 = 771.", "the question below (↓)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q is not in view after the reveal:\n%s", want, p.View())
		}
	}
	// Scrolling down reaches the question; nothing new pulls the view back.
	for range 30 {
		p.Scroll(1)
	}
	if got := p.View(); !strings.Contains(got, "Answer with a number.") {
		t.Errorf("scrolled to the end, the open question is not in view:\n%s", got)
	}
	tall := NewLesson(ctx)
	tall.SetSize(40, 24)
	ctx.State = &view.State{Lesson: ls}
	tall.View()
	tall.SetSize(40, 60)
	ctx.State = &view.State{Lesson: &ls2}
	got = strings.Join(strings.Fields(tall.View()), " ")
	for _, want := range []string{"✗ You said 25", "Answer with a number.", "Your turn: type a number"} {
		if !strings.Contains(got, want) {
			t.Errorf("a tall pane lacks %q:\n%s", want, tall.View())
		}
	}
}

// A learner who read down to the open task after a reveal and types a
// command of their choice keeps the task in view: the foot growing by a
// row does not send the pane back up to the reveal.
func TestLessonPaneKeepsTheTaskInViewWhileTyping(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.Focus = LessonID
	pr := &view.Prediction{Question: "How many times has the queue handed it out?", Numeric: true, Chosen: -1, Answer: -1}
	long := strings.Repeat("An SQS consumer that knows its work is slow pushes its message's deadline out a little at a time. ", 6)
	task := &view.Task{Text: "Start two workers, w1 and w2, with an extend= of your choosing.", Decide: "how far ahead a worker keeps its receipt hidden"}
	ls := &view.Lesson{Title: "Work queues", Step: 2, Steps: 3, StepTitle: "Work longer than the timeout", Status: lessons.StatusPredict, Prediction: pr,
		Blocks: []view.LessonBlock{{Kind: view.BlockText, Text: "Receipt 881 once more."}, {Kind: view.BlockPrediction, Prediction: pr}}}
	ctx.State = &view.State{Lesson: ls}
	p := NewLesson(ctx)
	p.SetSize(40, 24)
	p.View()
	// Answered: the step plays on to the task.
	done := *pr
	done.Chosen, done.Answer, done.Given, done.Right, done.Why = 0, 0, "2", "4 deliveries (exact)", "No ack ever carries the newest handle."
	ls2 := *ls
	ls2.Status, ls2.Prediction = lessons.StatusTask, &done
	ls2.Blocks = []view.LessonBlock{ls.Blocks[0], {Kind: view.BlockPrediction, Prediction: &done}, {Kind: view.BlockText, Text: long}, {Kind: view.BlockTask, Task: task}}
	ls2.Tasks = []view.Task{*task}
	ctx.State = &view.State{Lesson: &ls2}
	if got := p.View(); !strings.Contains(got, "You said 2; it was 4") {
		t.Fatalf("the reveal is not in view once the step plays on:\n%s", got)
	}
	for range 40 {
		p.Scroll(1)
	}
	if got := p.View(); !strings.Contains(got, "Start two workers") {
		t.Fatalf("scrolled to the end, the task is not in view:\n%s", got)
	}
	for _, typed := range [][]string{{"worker start w1 queue=receipts work=5s extend=1s"}, {"worker start w1 queue=receipts work=5s extend=1s", "worker start w2 queue=receipts work=5s extend=1s"}} {
		t2 := *task
		t2.Acted, t2.Chosen = true, typed
		ls3 := ls2
		ls3.Blocks = append(ls2.Blocks[:3:3], view.LessonBlock{Kind: view.BlockTask, Task: &t2})
		ls3.Tasks = []view.Task{t2}
		ctx.State = &view.State{Lesson: &ls3}
		got := p.View()
		if !strings.Contains(got, "Start two workers") || !strings.Contains(got, "extend=1s") {
			t.Errorf("after typing %d commands the task is out of view:\n%s", len(typed), got)
		}
		if strings.Contains(got, "You said 2") {
			t.Errorf("after typing %d commands the pane jumped back to the reveal:\n%s", len(typed), got)
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
		got := TaskLine(st, ls, 80)
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
	if got := TaskLine(st, ls, 100); strings.Contains(got, "heal") || !strings.Contains(got, "(t: a hint)") {
		t.Errorf("before the hint is asked for: %q", got)
	}
	ls.Tasks[0].HintShown = true
	if got := TaskLine(st, ls, 100); !strings.Contains(got, "key: h · or type: heal") {
		t.Errorf("after the hint is asked for: %q", got)
	}
	num := &view.Lesson{Step: 1, Steps: 6, Status: lessons.StatusPredict, Prediction: &view.Prediction{Question: "How many orders wait?", Numeric: true, Chosen: -1, Answer: -1}}
	if got := TaskLine(st, num, 100); !strings.Contains(got, "How many orders wait? (a number)") {
		t.Errorf("a numeric question: %q", got)
	}
}

// On a teacher's screen the class's tally of a numeric question is read
// to its median, wrapped rather than cut, also after a reveal in which
// the teacher gave no number of their own.
func TestLessonPaneClassTallyWraps(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	pr := &view.Prediction{Question: "How many orders a second does billing fall behind by?", Numeric: true,
		Chosen: -1, Answer: 0, Right: "600 a second (± 60)",
		Class: &view.ClassTally{Numeric: true, Answered: 12, Following: 14, Numbers: []float64{0, 40, 600, 600, 6000}}}
	ls := &view.Lesson{Title: "The flash sale", Step: 3, Steps: 6, Status: lessons.StatusPlaying, Prediction: pr,
		Blocks: []view.LessonBlock{{Kind: view.BlockPrediction, Prediction: pr}}}
	ctx.State = &view.State{Lesson: ls}
	p := NewLesson(ctx)
	p.SetSize(38, 20) // the lesson pane of a 100x30 screen
	got := strings.Join(strings.Fields(p.View()), " ")
	for _, want := range []string{"class: 12 of 14 answered — from 0 to 6,000, median 600", "The answer: 600 a second (± 60)."} {
		if !strings.Contains(strings.ReplaceAll(got, "┃", ""), want) {
			t.Errorf("the pane does not read %q:\n%s", want, p.View())
		}
	}
}

// An open task below the rows in view is pointed to downwards: the last
// row does not send the learner up to a task they have not reached.
func TestLessonPanePointsDownToATaskBelow(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	long := strings.Repeat("The checkout sends both charges in one command; the reply is lost on the way back. ", 6)
	ls := &view.Lesson{Title: "FIFO queues", Step: 3, Steps: 4, StepTitle: "A charge sent twice", Status: lessons.StatusTask,
		Blocks: []view.LessonBlock{
			{Kind: view.BlockText, Text: long},
			{Kind: view.BlockTask, Task: &view.Task{Text: "Send the charges with deduplication ids of your choosing.", Decide: "the deduplication ids"}},
		}}
	ls.Tasks = []view.Task{*ls.Blocks[1].Task}
	for _, c := range []struct {
		h    int
		want string
	}{
		{12, "Your choice, in the task below (↓): the deduplication ids, then n"},
		{40, "Your choice: the deduplication ids, then n — t for a hint"},
	} {
		ctx.State = &view.State{Lesson: ls}
		p := NewLesson(ctx)
		p.SetSize(60, c.h)
		got := p.View()
		if flat := strings.Join(strings.Fields(got), " "); !strings.Contains(flat, c.want) {
			t.Errorf("%d rows: %q not in\n%s", c.h, c.want, got)
		}
	}
}

// A command the lesson ran is shown whole however narrow the pane: its
// words wrap onto rows indented past its "$ ", and the commands of a
// choice that wait for n show under their decision the same way.
func TestLessonPaneWrapsCommands(t *testing.T) {
	cmd := `produce orders key=881 value="order 881 shipped" acks=all idempotent=true as=checkout`
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &view.State{Lesson: &view.Lesson{Title: "Failover", Step: 4, Steps: 4, StepTitle: "A reply that never arrives", Status: lessons.StatusTask,
		Blocks: []view.LessonBlock{
			{Kind: view.BlockCommands, Commands: []view.CommandLine{{Text: "drop next reply to producer", OK: true}, {Text: cmd, OK: true}}},
			{Kind: view.BlockTask, Task: &view.Task{Text: "Send it once.", Decide: "acks", Acted: true, Chosen: []string{"load orders rate=1/s for=1s key=881 acks=0 as=checkout"}}},
		}}}
	p := NewLesson(ctx)
	p.SetSize(40, 24)
	rows := lines(p.View())
	text := strings.Join(rows, "\n")
	var shown []string
	at := -1
	for i, r := range rows {
		if strings.HasPrefix(r, "$ produce") {
			at = i
		}
		if at >= 0 && i >= at && (i == at || strings.HasPrefix(r, "    ") && strings.TrimSpace(r) != "") {
			shown = append(shown, strings.TrimSpace(strings.TrimPrefix(r, "$ ")))
		} else if at >= 0 && i > at {
			break
		}
	}
	if got := strings.Join(shown, " "); got != cmd {
		t.Errorf("the command reads %q across its rows, want all of it:\n%s", got, text)
	}
	if !strings.Contains(text, "your choice, run at n:") || !strings.Contains(text, "$ load orders rate=1/s") || !strings.Contains(text, "as=checkout") {
		t.Errorf("the waiting choice is not shown whole under its task:\n%s", text)
	}
	for i, l := range rows {
		if draw.Width(l) != 40 {
			t.Errorf("row %d is %d wide", i, draw.Width(l))
		}
	}
}

// What a look into the files found shows under its command, so a question
// that rests on a file's size has it on screen; a line too wide for the
// pane wraps at words, its columns closed up.
func TestLessonPaneShowsWhatFilesHold(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &view.State{Lesson: &view.Lesson{Title: "The log", Step: 2, Steps: 13, StepTitle: "The folder", Blocks: []view.LessonBlock{
		{Kind: view.BlockCommands, Commands: []view.CommandLine{{Text: "log files events/0 on n1", OK: true, Found: []string{
			"n1's copy of events/0: n1/events-0/",
			"00000000000000000020.log           555 B  offsets 20–24, 5 batches, active",
		}}}},
	}}}
	p := NewLesson(ctx)
	p.SetSize(40, 12)
	out := ansi.Strip(p.View())
	for _, want := range []string{"$ log files events/0 on n1", "n1's copy of events/0", "00000000000000000020.log 555 B offsets", "20–24, 5 batches, active"} {
		if !strings.Contains(out, want) {
			t.Errorf("the lesson pane lacks %q:\n%s", want, out)
		}
	}
}

// A task names topics and options in code; without colour they keep
// their backticks there too, as in the narrative.
func TestLessonPaneTaskKeepsInlineCode(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	task := &view.Task{Text: "Start consumers on `orders`, as many as you judge right.", Decide: "how many consumers"}
	ctx.State = &view.State{Lesson: &view.Lesson{Title: "Partitions", Step: 1, Steps: 3, Status: lessons.StatusTask,
		Blocks: []view.LessonBlock{{Kind: view.BlockTask, Task: task}}, Tasks: []view.Task{*task}}}
	p := NewLesson(ctx)
	p.SetSize(60, 12)
	if got := p.View(); !strings.Contains(got, "[ ] Start consumers on `orders`, as many as you judge right.") {
		t.Errorf("the task lost its inline code:\n%s", got)
	}
}

// An expectation in the lesson's own words shows the values read with
// their thousands grouped, as the lesson writes its numbers; a bare
// condition keeps its values as the condition has them.
func TestLessonPaneExpectationNumbers(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &view.State{Lesson: &view.Lesson{Title: "The flash sale", Step: 2, Steps: 5, Status: lessons.StatusStepDone,
		Blocks: []view.LessonBlock{{Kind: view.BlockExpect, Expectations: []view.Expectation{
			{Text: "lag(billing) == 36000 ± 3600", Label: "60 s × 600", Checked: true, OK: true, Got: "lag(billing) is 36042"},
			{Text: "lag(billing) >= 6000", Checked: true, OK: true, Got: "lag(billing) is 6054"},
		}}}}}
	p := NewLesson(ctx)
	p.SetSize(60, 12)
	got := p.View()
	for _, want := range []string{"lag(billing) is 36,042", "lag(billing) >= 6000 (lag(billing) is 6054)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q not in\n%s", want, got)
		}
	}
}

// A service's rows, read by the lesson's sql command, show under it, so
// that "the balance above" is on screen: a grid where the columns fit,
// one record a row where they do not.
func TestLessonPaneShowsTablesRead(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &view.State{Lesson: &view.Lesson{Title: "Idempotency keys", Step: 2, Steps: 3, StepTitle: "Worker B", Blocks: []view.LessonBlock{
		{Kind: view.BlockCommands, Commands: []view.CommandLine{
			{Text: `sql wallet "SELECT user_id, balance, version FROM wallets"`, OK: true,
				Found: []string{"user_id | balance | version", "------- | ------- | -------", "42      | 150     | 4", "(1 row)"}},
			{Text: `sql payments "SELECT id, idempotency_key, order_id, amount, status, repeats FROM charges"`, OK: true,
				Found: []string{"id | idempotency_key | order_id | amount | status    | repeats", "-- | --------------- | -------- | ------ | --------- | -------",
					"1  | 881             | 881      | 450    | succeeded | 1", "2  | 882             | 882      | 300    | succeeded | 0", "(2 rows)"}},
		}},
	}}}
	p := NewLesson(ctx)
	p.SetSize(40, 40)
	out := p.View()
	for _, want := range []string{"user_id │ balance │ version", "42 │     150 │       4", "(1 row)",
		"id 1", "idempotency_key: 881", "repeats: 1", "id 2", "amount: 300", "(2 rows)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the pane lacks %q:\n%s", want, out)
		}
	}
	for i, l := range lines(out) {
		if draw.Width(l) != 40 {
			t.Errorf("row %d is %d wide", i, draw.Width(l))
		}
	}
}

// The small screen's task line styles inline code as the pane does: its
// marks are not shown raw in colour, and kept where there is none.
func TestTaskLineStylesInlineCode(t *testing.T) {
	ls := &view.Lesson{Step: 1, Steps: 6, Status: lessons.StatusPredict, Prediction: &view.Prediction{
		Question: "What will `retry_peak` read **this** time?", Numeric: true, Chosen: -1, Answer: -1}}
	for _, c := range []struct {
		profile termenv.Profile
		want    string
	}{
		{termenv.TrueColor, "Predict: What will retry_peak read this time? (a number)"},
		{termenv.Ascii, "Predict: What will `retry_peak` read this time? (a number)"},
	} {
		r := lipgloss.NewRenderer(io.Discard)
		r.SetColorProfile(c.profile)
		got := ansi.Strip(TaskLine(draw.NewStylesFor(draw.DefaultTheme, r), ls, 100))
		if !strings.Contains(got, c.want) {
			t.Errorf("profile %v: %q, want %q in it", c.profile, got, c.want)
		}
	}
}

// A task whose goal was reached by a way that broke what its step checks
// shows ✗, not ✓: the learner's box must not read done beside the failed
// checks under it. The box of a task before it stays as it was.
func TestTaskBeforeAFailedCheckIsNotTicked(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ls := &view.Lesson{Title: "Work queues", Step: 2, Steps: 3, Status: lessons.StatusFailed,
		Blocks: []view.LessonBlock{
			{Kind: view.BlockTask, Task: &view.Task{Text: "Send receipt 881.", Done: true}},
			{Kind: view.BlockExpect, Expectations: []view.Expectation{{Text: "depth(receipts) == 1", Label: "it waits", Checked: true, OK: true}}},
			{Kind: view.BlockTask, Task: &view.Task{Text: "Start two workers with an extend= of your choosing.", Done: true}},
			{Kind: view.BlockExpect, Expectations: []view.Expectation{{Text: "delivered(receipts) == 1", Label: "handed out once", Checked: true, OK: false, Got: "delivered(receipts) is 3"}}},
		}}
	ctx.State = &view.State{Lesson: ls}
	p := NewLesson(ctx)
	p.SetSize(60, 30)
	got := ansi.Strip(p.View())
	if !strings.Contains(got, "["+draw.SymOK+"] Send receipt 881.") {
		t.Errorf("the task before the passing check lost its ✓:\n%s", got)
	}
	if !strings.Contains(got, "["+draw.SymFail+"] Start two workers") || strings.Contains(got, "["+draw.SymOK+"] Start two workers") {
		t.Errorf("the task before the failed check reads done:\n%s", got)
	}
}
