package source

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/internal/labtest"
	"github.com/mqlab/mqlab/tui/view"
)

var testLesson = labtest.Lesson

// newLessonSource plays the test lesson on a fast lab; everything is
// closed, and checked for leaks, when the test ends.
func newLessonSource(t *testing.T, opts LessonOptions) *LessonSource {
	t.Helper()
	checkLeaks(t)
	_, labSrc := newTestLab(t)
	src, err := NewLessonSource(testLesson(t), labSrc, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	return src
}

func execErr(t *testing.T, src view.Source, line, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := src.Exec(ctx, order(line))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%s: error %v, want one saying %q", line, err, want)
	}
}

func lessonIn(t *testing.T, src view.Source, what string, cond func(ls *view.Lesson) bool) *view.Lesson {
	t.Helper()
	return eventually(t, src, what, func(v view.State) bool { return v.Lesson != nil && cond(v.Lesson) }).Lesson
}

func blockKinds(ls *view.Lesson) []view.LessonBlockKind {
	var ks []view.LessonBlockKind
	for _, b := range ls.Blocks {
		ks = append(ks, b.Kind)
	}
	return ks
}

func textOf(ls *view.Lesson) string {
	var b strings.Builder
	for _, bl := range ls.Blocks {
		if bl.Kind == view.BlockText {
			b.WriteString(bl.Text + "\n")
		}
	}
	return b.String()
}

// A learner plays the lesson through: each step's blocks show in order
// with the values the lab measured; a question waits for its letter; a
// task is done by the learner's own command, also one that names the node
// another way; the lesson refuses to move on while something waits.
func TestLessonSourcePlaysALesson(t *testing.T) {
	store, err := lessons.OpenStore(filepath.Join(t.TempDir(), "progress.json"))
	if err != nil {
		t.Fatal(err)
	}
	src := newLessonSource(t, LessonOptions{Progress: store})
	if ls := src.View().Lesson; ls == nil || ls.Status != lessons.StatusStarting || ls.Step != 1 || ls.Steps != 3 {
		t.Fatalf("before it starts: %+v", ls)
	}
	execErr(t, src, CmdLessonNext, "has not started")

	if out := mustExec(t, src, "lesson goto 1"); out != "step 1 of 3: Three committed orders" {
		t.Errorf("lesson goto 1 said %q", out)
	}
	ls := src.View().Lesson
	if ls.Status != lessons.StatusStepDone || ls.StepTitle != "Three committed orders" {
		t.Fatalf("step 1: status %v, title %q", ls.Status, ls.StepTitle)
	}
	if got, want := blockKinds(ls), []view.LessonBlockKind{view.BlockCommands, view.BlockText, view.BlockExpect}; !equalKinds(got, want) {
		t.Fatalf("step 1 blocks %v, want %v", got, want)
	}
	if c := ls.Blocks[0].Commands; len(c) != 4 || c[2].Text != "elect n1 orders/0" || !c[2].OK {
		t.Errorf("the lab's commands: %+v", c)
	}
	if txt := textOf(ls); !strings.Contains(txt, "offsets 0\nto 2 are **committed**") || strings.Contains(txt, "{{") {
		t.Errorf("the narrative, with its values filled: %q", txt)
	}
	if e := ls.Expectations; len(e) != 1 || !e[0].OK || e[0].Label != "three orders are committed" || e[0].Got != "hwm(orders/0) is 3" {
		t.Errorf("expectations %+v", e)
	}
	execErr(t, src, "predict a", "no question is open")

	// Step 2: a question, then a task.
	if out := mustExec(t, src, CmdLessonNext); out != "step 2 of 3: Kill the leader" {
		t.Errorf("lesson next said %q", out)
	}
	ls = src.View().Lesson
	if ls.Status != lessons.StatusPredict || ls.Prediction == nil || ls.Prediction.Chosen != -1 || len(ls.Prediction.Choices) != 2 {
		t.Fatalf("step 2 opens on its question: %+v %+v", ls.Status, ls.Prediction)
	}
	if len(ls.Blocks) != 1 {
		t.Errorf("step 2 shows only its first block so far: %v", blockKinds(ls))
	}
	execErr(t, src, CmdLessonNext, "first the question")
	execErr(t, src, "predict c", "from a to b")
	// The choices are shuffled for this learner: answer by the right one's text.
	right := slices.Index(ls.Prediction.Choices, "a higher one")
	if right < 0 {
		t.Fatalf("the choices %q lack the right one", ls.Prediction.Choices)
	}
	if out := mustExec(t, src, fmt.Sprintf("predict %c", 'a'+right)); out != "you predicted it" {
		t.Errorf("predict %c said %q", 'a'+right, out)
	}
	ls = src.View().Lesson
	p := ls.Blocks[0].Prediction
	if p.Chosen != right || p.Answer != right || !strings.Contains(p.Why, "new term") {
		t.Errorf("the reveal: %+v", p)
	}
	if ls.Status != lessons.StatusTask || len(ls.Tasks) != 1 || ls.Tasks[0].Done ||
		ls.Tasks[0].Hint != "key: select n1 and press k · or type: kill leader(orders/0)" {
		t.Fatalf("the task: %v %+v", ls.Status, ls.Tasks)
	}
	execErr(t, src, CmdLessonNext, "first the task: Kill the leader, n1.")
	if w := src.View().Lesson.Blocks[1].Task.Waiting; w != "state(n1) == down (now up)" {
		t.Errorf("the task waits for %q", w)
	}

	// Something the task does not ask for: the lesson says so.
	mustExec(t, src, "slow n2 10ms")
	if n := src.View().Lesson.Notice; !strings.Contains(n, "You ran slow n2 10ms. The task waits for state(n1) == down (now up); t (or :lesson hint) shows one way there.") {
		t.Errorf("notice after an unasked command: %q", n)
	}
	if out := mustExec(t, src, CmdLessonHint); out != "hint: key: select n1 and press k · or type: kill leader(orders/0)" {
		t.Errorf("lesson hint said %q", out)
	}
	if !src.View().Lesson.Tasks[0].HintShown {
		t.Error("the hint asked for is not shown")
	}
	mustExec(t, src, "slow n2 10ms")
	if n := src.View().Lesson.Notice; !strings.Contains(n, "You ran slow n2 10ms; the hint for this task is to select n1 and press k (or type kill leader(orders/0))") {
		t.Errorf("notice after an unasked command, with the hint shown: %q", n)
	}
	mustExec(t, src, "slow n2 off")

	// The learner's own kill n1 is the task's kill leader(orders/0).
	mustExec(t, src, "kill n1")
	ls = lessonIn(t, src, "the task done and the step played to its end", func(ls *view.Lesson) bool {
		return ls.Status == lessons.StatusStepDone
	})
	if !ls.Tasks[0].Done || ls.Notice != "" {
		t.Errorf("after the task: tasks %+v, notice %q", ls.Tasks, ls.Notice)
	}
	before, after := epochsIn(t, textOf(ls))
	if after <= before {
		t.Errorf("the narrative says epoch %d, then %d: %q", before, after, textOf(ls))
	}
	for _, e := range ls.Expectations {
		if !e.OK {
			t.Errorf("expectation %+v", e)
		}
	}
	if lp, _ := store.Lesson("test-kill-the-leader"); lp.Step != 1 || lp.Answers["s2.p1"].Choice != 1 || !lp.Answers["s2.p1"].Correct {
		t.Errorf("progress after step 2: %+v", lp)
	}

	// Step 3: the task restarts the node that is down; no warning for that.
	mustExec(t, src, CmdLessonNext)
	ls = lessonIn(t, src, "step 3's task", func(ls *view.Lesson) bool { return ls.Status == lessons.StatusTask })
	if ls.Notice != "" {
		t.Errorf("step 3 notice %q", ls.Notice)
	}
	mustExec(t, src, "restart n1")
	lessonIn(t, src, "step 3 done", func(ls *view.Lesson) bool { return ls.Status == lessons.StatusStepDone })

	if out := mustExec(t, src, CmdLessonNext); !strings.Contains(out, "finished") {
		t.Errorf("the last lesson next said %q", out)
	}
	if ls := src.View().Lesson; ls.Status != lessons.StatusFinished || ls.Step != 3 || !strings.Contains(textOf(ls), "You predicted 1 of 1 right, and 4 of its 4 expectations held.") {
		t.Errorf("finished: %v step %d, %q", ls.Status, ls.Step, textOf(ls))
	}
	execErr(t, src, CmdLessonNext, "the lesson is finished")
	if lp, _ := store.Lesson("test-kill-the-leader"); !lp.Finished {
		t.Errorf("progress after the end: %+v", lp)
	}
	if StartStep(testLesson(t), store) != 1 {
		t.Error("a finished lesson does not start again at step 1")
	}

	// Back from the end: the last step again, the lesson replayed up to it.
	out := mustExec(t, src, CmdLessonPrev)
	if !strings.Contains(out, "step 3 of 3") || !strings.Contains(out, "re-ran the lesson's commands of steps 1–2") {
		t.Errorf("lesson prev said %q", out)
	}
	if ls := src.View().Lesson; ls.Status != lessons.StatusTask || ls.Step != 3 {
		t.Errorf("after lesson prev: %v step %d", ls.Status, ls.Step)
	}
	if StartStep(testLesson(t), store) != 3 {
		t.Errorf("the lesson would open at step %d, not where the learner is", StartStep(testLesson(t), store))
	}
}

func equalKinds(a, b []view.LessonBlockKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// epochsIn reads "at epoch N (it was M)" from the narrative.
func epochsIn(t *testing.T, text string) (before, after uint64) {
	t.Helper()
	_, rest, ok := strings.Cut(text, "at epoch ")
	if !ok {
		t.Fatalf("no epoch in %q", text)
	}
	a, rest, _ := strings.Cut(rest, " ")
	_, rest, _ = strings.Cut(rest, "was ")
	b, _, _ := strings.Cut(rest, ")")
	an, err1 := strconv.ParseUint(a, 10, 64)
	bn, err2 := strconv.ParseUint(b, 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("epochs %q, %q in %q", a, b, text)
	}
	return bn, an
}

// When the learner's own commands make an expectation fail, the step
// says what happened and cannot be passed; lesson reset starts it again
// on a fresh cluster. A sandbox lets the learner pass anyway.
func TestLessonSourceFailsAndResets(t *testing.T) {
	src := newLessonSource(t, LessonOptions{})
	mustExec(t, src, "lesson goto 2") // the lab replays step 1 first
	lessonIn(t, src, "step 2's question", func(ls *view.Lesson) bool { return ls.Status == lessons.StatusPredict && ls.Step == 2 })

	mustExec(t, src, "produce orders count=2 acks=all") // not part of the lesson
	mustExec(t, src, "predict a")
	mustExec(t, src, "kill n1")
	ls := lessonIn(t, src, "the step to end", func(ls *view.Lesson) bool { return ls.Status == lessons.StatusFailed })
	if !strings.Contains(ls.Notice, "hwm(orders/0) == 3 (hwm(orders/0) is 5) does not hold") ||
		!strings.Contains(ls.Notice, "During this step you ran: produce orders") ||
		!strings.Contains(ls.Notice, ":lesson reset") {
		t.Errorf("notice %q", ls.Notice)
	}
	execErr(t, src, CmdLessonNext, "hwm(orders/0) == 3 does not hold (hwm(orders/0) is 5)")

	out := mustExec(t, src, CmdLessonReset)
	if !strings.Contains(out, "step 2 of 3") || !strings.Contains(out, "started again") {
		t.Errorf("lesson reset said %q", out)
	}
	ls = src.View().Lesson
	if ls.Status != lessons.StatusPredict || ls.Notice != "" || len(ls.Blocks) != 1 {
		t.Errorf("after the reset: %v, notice %q, blocks %v", ls.Status, ls.Notice, blockKinds(ls))
	}
	if p := partitionOf(src.View(), "orders/0"); p == nil || p.Replicas[0].HWM != 3 {
		t.Errorf("a fresh cluster replayed to step 2 holds 3 orders: %+v", p)
	}
	execErr(t, src, "lesson goto 4", "from 1 to 3")
	execErr(t, src, "lesson sideways", "lesson next, lesson prev")
}

func TestLessonSourceSandboxPassesAnyway(t *testing.T) {
	src := newLessonSource(t, LessonOptions{Sandbox: true})
	mustExec(t, src, "lesson goto 2")
	lessonIn(t, src, "step 2's question", func(ls *view.Lesson) bool { return ls.Status == lessons.StatusPredict })
	// The question and the task are skipped.
	if out := mustExec(t, src, CmdLessonNext); !strings.Contains(out, "step 3 of 3") {
		t.Errorf("lesson next in a sandbox said %q", out)
	}
}

// Closing the source stops a step in the middle of its commands and a
// task that waits, and leaves no goroutine behind.
func TestLessonSourceCloses(t *testing.T) {
	src := newLessonSource(t, LessonOptions{})
	mustExec(t, src, "lesson goto 2")
	mustExec(t, src, "predict b")
	lessonIn(t, src, "the task", func(ls *view.Lesson) bool { return ls.Status == lessons.StatusTask })

	done := make(chan error, 1)
	go func() {
		_, err := src.Exec(context.Background(), order("lesson goto 3"))
		done <- err
	}()
	src.Close()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a lesson command outlived Close")
	}
	execErr(t, src, CmdLessonNext, "closed")
}

// A lesson's look into the files or a service's tables keeps what it
// found for the lesson pane; a wait's or an expect's words stay in the
// timeline.
func TestCommandLinesKeepWhatFilesHold(t *testing.T) {
	got := commandLines([]lessons.CommandResult{
		{Text: "log files events/0 on n1", Lines: []string{"n1's copy of events/0", "00000000000000000020.log  555 B"}},
		{Text: "log dump n1/events-0/00000000000000000020.index", Lines: []string{"offset: 21 position: 111"}},
		{Text: "wait logstart(events/0) == 20", Lines: []string{"held after 0.6s"}},
		{Text: `sql wallet "SELECT user_id, balance FROM wallets"`, Lines: []string{"user_id | balance", "------- | -------", "42      | 150", "(1 row)"}},
	})
	if len(got[0].Found) != 2 || len(got[1].Found) != 1 || len(got[3].Found) != 4 {
		t.Errorf("log files, log dump or sql lost what they found: %+v", got)
	}
	if got[2].Found != nil {
		t.Errorf("a wait shows %q under it; only looks into the files do", got[2].Found)
	}
}

// While a question is open in a lab the lesson paused itself, the header
// does not offer space to run time on: the answer could change.
func TestHeldWordsAtAQuestion(t *testing.T) {
	if got := heldWords("", true, lessons.StatusPredict); got != "the lesson stopped it — answer the question" {
		t.Errorf("at a question: %q", got)
	}
	if got := heldWords("", true, lessons.StatusStepDone); got != "the lesson stopped it — space resumes" {
		t.Errorf("at a step's end: %q", got)
	}
	if got := heldWords("reading — any command resumes", true, lessons.StatusPredict); got != "reading — any command resumes" {
		t.Errorf("the player's own hold: %q", got)
	}
	if got := heldWords("", false, lessons.StatusPredict); got != "" {
		t.Errorf("a running clock: %q", got)
	}
}
