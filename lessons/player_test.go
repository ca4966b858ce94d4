package lessons

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/command"
)

// newTestPlayer plays les with opts (a store, the sandbox) on a
// fast-timing lab of its own; both close at the end of the test.
func newTestPlayer(t *testing.T, les *Lesson, opts PlayerOptions) (*Player, *lab.Lab) {
	t.Helper()
	l, err := lab.New(lab.Options{Nodes: 3, Timing: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	opts.Lab = l
	p, err := NewPlayer(les, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, l
}

func script(t *testing.T, src string) []command.Line {
	t.Helper()
	ls, err := command.ParseScript(src)
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

// A task says what it waits for, with the values the lab shows; one that
// waits on a node the learner has killed cannot finish: the notice names
// the node and the key that brings it back, unless bringing it back is the
// task.
func TestTaskNotes(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	l, err := lab.New(lab.Options{Nodes: 3, Timing: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if failed := l.RunScript(ctx, script(t, "topic create orders partitions=1\nwait leader(orders/0) != none\n"+
		"produce orders count=3\nwait hwm(orders/0@n1) == 3\nkill n1"), nil); len(failed) > 0 {
		t.Fatal(failed[0])
	}
	p := &Player{run: &Runner{lab: l}}
	heal := &Task{Do: script(t, "heal"), Wait: script(t, "wait hwm(orders/0@n1) == 2000")}
	if got := p.blocked(ctx, heal); got != "n1 is down, and this task waits for hwm(orders/0@n1) == 2000, which needs n1 running: select n1 and press r." {
		t.Errorf("heal: %q", got)
	}
	if got := p.waiting(ctx, heal); got != "hwm(orders/0@n1) == 2000" {
		t.Errorf("on a stopped replica, heal waits for %q: it has no value to show", got)
	}
	for name, task := range map[string]*Task{
		"a task that kills it":        {Do: script(t, "kill n1"), Wait: script(t, "wait state(n1) == down")},
		"a task that restarts it":     {Do: script(t, "restart n1"), Wait: script(t, "wait state(n1) == up\nwait hwm(orders/0@n1) == 3")},
		"a task on a node that is up": {Do: script(t, "heal"), Wait: script(t, "wait hwm(orders/0@n2) == 3")},
	} {
		if got := p.blocked(ctx, task); got != "" {
			t.Errorf("%s: %q", name, got)
		}
	}
	if failed := l.RunScript(ctx, script(t, "restart n1\nwait hwm(orders/0@n1) == 3"), nil); len(failed) > 0 {
		t.Fatal(failed[0])
	}
	if got := p.waiting(ctx, heal); got != "hwm(orders/0@n1) == 2000 (now 3)" {
		t.Errorf("heal waits for %q", got)
	}
	if got := p.waiting(ctx, &Task{Wait: script(t, "wait hwm(orders/0@n1) == 3")}); got != "" {
		t.Errorf("a goal that holds waits for %q", got)
	}
	// Under load the restart can cost an election: the first condition
	// must hold for the note to name the second.
	if failed := l.RunScript(ctx, script(t, "wait leader(orders/0) != none"), nil); len(failed) > 0 {
		t.Fatal(failed[0])
	}
	both := &Task{Wait: script(t, "wait leader(orders/0) != none\nwait epoch(orders/0) > epoch(orders/0@n1) + 1")}
	cond := both.Wait[1].Cmd.(command.Wait).Cond
	left, err := l.Value(ctx, cond.Left)
	if err != nil {
		t.Fatal(err)
	}
	right, err := l.Value(ctx, cond.Right)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.waiting(ctx, both), "epoch(orders/0) > epoch(orders/0@n1) + 1 (now "+left+" and "+right+")"; got != want {
		t.Errorf("two lab values: %q, want %q", got, want)
	}
}

// While the lab replays a lesson up to a step, the pane shows the step's
// opening text, its values still to come as "…".
func TestStartingStepShowsItsOpeningText(t *testing.T) {
	les, err := Parse("preview.md", []byte("---\nid: preview\ntitle: Preview\nconcepts: [acks]\n---\n\n"+
		"## One\n\nFirst words.\n\n```lab\ncluster nodes=3\n```\n\n```expect\nconcept: acks\nlost == 0\n```\n\n"+
		"```predict\nconcept: acks\nWhich?\n- [x] this\n- [ ] that\nwhy: because\n```\n\n"+
		"## Two\n\nThe log holds {{lost}} orders.\n\nStill reading.\n\n```lab\ntopic create orders partitions=1\n```\n\nAfter the commands.\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := "The log holds … orders.\n\nStill reading."
	if got := openingText(les.Steps[1]); got != want {
		t.Fatalf("opening text %q, want %q", got, want)
	}
	p := &Player{les: les}
	p.st = playerState{step: 1, status: StatusStarting, preview: want}
	if st := p.State(); len(st.Blocks) != 1 || st.Blocks[0].Text != want {
		t.Errorf("starting: blocks %+v", st.Blocks)
	}
	p.st.status = StatusPlaying
	if st := p.State(); len(st.Blocks) != 0 {
		t.Errorf("once the step plays, its own blocks show, not the preview: %+v", st.Blocks)
	}
}

// While a question waits for its answer, lab time stands still and the
// learner cannot start it again; the answer lets it run on. A headless
// run answers at once and never stops the clock.
func TestQuestionHoldsLabTime(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	les := loadLesson(t, "testdata/runner/back.md")
	p, l := newTestPlayer(t, les, PlayerOptions{})
	if _, err := p.Goto(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if st := p.State(); st.Status != StatusPredict {
		t.Fatalf("step 2 stopped at %v, not at its question", st.Status)
	}
	if _, paused := l.Clock().Speed(); !paused {
		t.Fatal("lab time runs while the question waits")
	}
	before := l.Clock().Now()
	if err := p.refuses(command.Resume{}); err == nil || !strings.Contains(err.Error(), "answer the question first") {
		t.Errorf("resume while the question waits: %v", err)
	}
	if err := p.refuses(command.Kill{Node: command.NodeRef{Kind: command.RefNode, Node: "n1"}}); err != nil {
		t.Errorf("a kill while the question waits is refused: %v", err)
	}
	if now := l.Clock().Now(); !now.Equal(before) {
		t.Errorf("lab time moved from %v to %v while the question waited", before, now)
	}
	if _, err := p.Predict(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	// The question's hold gives way to the task's that follows it: time
	// waits for the learner to act, but the clock is theirs again.
	if st := p.State(); st.Status != StatusTask || !strings.Contains(st.Held, "your turn") {
		t.Errorf("after the answer the step is %v, held %q; want the task open and holding for the learner", st.Status, st.Held)
	}
	if err := p.refuses(command.Resume{}); err != nil {
		t.Errorf("resume after the answer: %v", err)
	}

	var out strings.Builder
	if err := PlayHeadless(ctx, les, &out, Options{Timing: "fast"}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "lab time paused") {
		t.Errorf("a headless run paused lab time for a question:\n%s", out.String())
	}
}

// A value kept in narrative can be compared with in an expect block and a
// wait, plus or minus a number, and the expectation shows what it was;
// comparing with a name kept nowhere before is a problem at its line.
func TestSavedValuesInConditions(t *testing.T) {
	playsALab(t)
	les := loadLesson(t, "testdata/runner/saved.md")
	var out strings.Builder
	if err := PlayHeadless(ctxFor(t, time.Minute), les, &out, Options{Timing: "fast"}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"✓ epoch(orders/0) > before (epoch(orders/0) is", ", before is ", "✓ epoch(orders/0) >= before + 1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the transcript lacks %q:\n%s", want, out.String())
		}
	}
	src := []byte(`---
id: early
title: Used before kept
concepts: [epoch]
---

## One

` + "```lab\ncluster nodes=3\ntopic create orders partitions=1\n```" + `

` + "```expect\nepoch(orders/0) >= before\n```" + `

Epoch {{epoch(orders/0) as before}}.

` + "```predict\nWhich?\n- [x] this\n- [ ] that\nwhy: because\n```\n")
	ps := Check("early.md", src)
	if len(ps) != 1 || ps[0].Line != 15 || !strings.Contains(ps[0].Msg, "no earlier placeholder keeps a value as before") {
		t.Errorf("a name used before it is kept: %v", ps)
	}
}

// A task is the learner's to do: one whose goal already holds is not done
// until the learner has acted, and is done once they have.
func TestTaskWaitsForTheLearner(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	les, err := Parse("held.md", []byte("---\nid: held\ntitle: Held\nconcepts: [acks]\n---\n\n"+
		"## The only step\n\n```lab\ncluster nodes=3\ntopic create orders partitions=1\nwait leader(orders/0) != none\n```\n\n"+
		"```task\nHeal every link.\ndo: heal\nwait: leader(orders/0) != none\n```\n\n"+
		"```predict\nconcept: acks\nWhat now?\n- [x] this\n- [ ] that\nwhy: because.\n```\n\n"+
		"```expect\nconcept: acks\nhwm(orders/0) == 0\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, l := newTestPlayer(t, les, PlayerOptions{})
	if _, err := p.Goto(ctx, 0); err != nil {
		t.Fatal(err)
	}
	// The goal holds from the start; for a while the task must stay open.
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if st := p.State(); st.Status != StatusTask {
			t.Fatalf("the task ended as %v before the learner did anything", st.Status)
		}
	}
	p.noteLearner(ctx, command.Heal{})
	if _, err := l.ExecCommand(ctx, command.Heal{}); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); p.State().Status == StatusTask; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the task did not end after the learner healed")
		}
	}
}

// A question can ask for a number: a letter is refused and says so, as
// is n before the number; a number within the stated tolerance is right, the reveal says the answer
// with its tolerance, progress keeps the number, and a headless run shows
// the answer.
func TestNumericPrediction(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	les := loadLesson(t, "testdata/runner/number.md")
	pr := les.Predictions()[0]
	if pr.Number == nil || pr.Number.Value != 20 || pr.Number.Tol != 10 || !pr.Number.Percent || pr.Number.Unit != "records" {
		t.Fatalf("parsed the answer as %+v", pr.Number)
	}
	for _, c := range []struct {
		said  string
		right bool
	}{{"18", true}, {"22", true}, {"17.9", false}, {"1,600", false}, {"20/s", true}} {
		x, err := ParseNumber(c.said)
		if err != nil {
			t.Fatalf("%q: %v", c.said, err)
		}
		if got := pr.Number.Within(x); got != c.right {
			t.Errorf("%q within 20 ± 10%%: %v, want %v", c.said, got, c.right)
		}
	}

	for _, tc := range []struct {
		said, out string
		correct   bool
	}{{"19", "you predicted it: 20 records (± 10 %)", true}, {"30", "the answer is 20 records (± 10 %)", false}} {
		store, err := OpenStore(t.TempDir() + "/progress.json")
		if err != nil {
			t.Fatal(err)
		}
		l, err := lab.New(lab.Options{Nodes: 3, Timing: "fast"})
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlayer(les, PlayerOptions{Lab: l, Progress: store})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Goto(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if st := p.State(); st.Status != StatusPredict {
			t.Fatalf("the step stopped at %v, not at its question", st.Status)
		}
		if _, err := p.Predict(ctx, "b"); err == nil || !strings.Contains(err.Error(), "a number, such as 20") {
			t.Errorf("a letter for a number: %v", err)
		}
		if _, err := p.Next(ctx); err == nil || !strings.Contains(err.Error(), "type your number") {
			t.Errorf("n before the number: %v; want it to ask for a number, not a letter", err)
		}
		out, err := p.Predict(ctx, tc.said)
		if err != nil {
			t.Fatal(err)
		}
		if out != tc.out {
			t.Errorf("predict %s said %q, want %q", tc.said, out, tc.out)
		}
		var got *PlayedPrediction
		for _, b := range p.State().Blocks {
			if b.Kind == KindPredict {
				got = b.Prediction
			}
		}
		if got == nil || !got.Numeric || got.Given != tc.said || got.Correct != tc.correct || got.Right != "20 records (± 10 %)" {
			t.Errorf("the played question is %+v", got)
		}
		lp, err := store.Lesson(les.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a := lp.Answers[pr.ID]; a.Number == nil || FormatNumber(*a.Number) != tc.said || a.Correct != tc.correct {
			t.Errorf("progress kept %+v", a)
		}
		p.Close()
		l.Close()
	}

	var out strings.Builder
	if err := PlayHeadless(ctx, les, &out, Options{Timing: "fast"}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Answer: 20 records (± 10 %)") {
		t.Errorf("the headless run does not give the answer:\n%s", out.String())
	}
}

// The lab holds still while a person reads: from the moment a task opens
// until the learner acts, and from a step's end until they act or move
// on. Commands that only look leave it still; the screen is told why it
// is paused.
func TestLabHoldsStillWhileRead(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	les, err := Parse("read.md", []byte("---\nid: read\ntitle: Read\nconcepts: [acks]\n---\n\n"+
		"## A load runs\n\n```lab\ncluster nodes=3\ntopic create orders partitions=1\nwait leader(orders/0) != none\nload orders rate=200/s for=60s\n```\n\n"+
		"```task\nStop n3.\ndo: kill n3\nwait: state(n3) == down\n```\n\n"+
		"```expect\nconcept: acks\nstate(n3) == down\n```\n\n"+
		"## Then\n\n```predict\nconcept: acks\nWhat now?\n- [x] this\n- [ ] that\nwhy: because.\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, l := newTestPlayer(t, les, PlayerOptions{})
	if _, err := p.Goto(ctx, 0); err != nil {
		t.Fatal(err)
	}
	still := func(why string) {
		t.Helper()
		st := p.State()
		if _, paused := l.Clock().Speed(); !paused || !strings.Contains(st.Held, why) {
			t.Fatalf("at %v the lab is paused: %v, held: %q; want it held, saying %q", st.Status, paused, st.Held, why)
		}
		before := l.Clock().Now()
		time.Sleep(50 * time.Millisecond) // time that must not pass in the lab
		if now := l.Clock().Now(); !now.Equal(before) {
			t.Fatalf("lab time moved from %v to %v while it was held", before, now)
		}
	}
	if st := p.State(); st.Status != StatusTask {
		t.Fatalf("the step stopped at %v, not at its task", st.Status)
	}
	still("your turn")
	// Looking changes nothing.
	if _, err := p.ExecCommand(ctx, command.Help{Topic: "kill"}); err != nil {
		t.Fatal(err)
	}
	still("your turn")
	// Acting lets the lab run on, and the step plays to its end.
	if _, err := p.ExecCommand(ctx, command.Kill{Node: command.NodeRef{Kind: command.RefNode, Node: "n3"}}); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); p.State().Status != StatusStepDone; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the step did not end after the task: %v", p.State().Status)
		}
	}
	still("reading")
	// A pause of the learner's own is theirs: the hold is gone, time stays still.
	if _, err := p.ExecCommand(ctx, command.Pause{}); err != nil {
		t.Fatal(err)
	}
	if st := p.State(); st.Held != "" {
		t.Errorf("after the learner's own pause, the player still says it holds time: %q", st.Held)
	}
	if _, err := p.ExecCommand(ctx, command.Resume{}); err != nil {
		t.Fatal(err)
	}
	if _, paused := l.Clock().Speed(); paused {
		t.Fatal("the learner's resume left lab time paused")
	}
	// The next step holds for its question, and moving on released the step's hold.
	if _, err := p.Next(ctx); err != nil {
		t.Fatal(err)
	}
	still("question")
}

// A learner who acts at the end of a step lets the lab run on.
func TestActingEndsTheReadingHold(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	les, err := Parse("act.md", []byte("---\nid: act\ntitle: Act\nconcepts: [acks]\n---\n\n"+
		"## One\n\n```lab\ncluster nodes=3\ntopic create orders partitions=1\nwait leader(orders/0) != none\n```\n\n"+
		"```expect\nconcept: acks\nhwm(orders/0) == 0\n```\n\n"+
		"```predict\nconcept: acks\nWhat now?\n- [x] this\n- [ ] that\nwhy: because.\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, l := newTestPlayer(t, les, PlayerOptions{})
	if _, err := p.Goto(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Predict(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if st := p.State(); st.Status != StatusStepDone || !strings.Contains(st.Held, "reading") {
		t.Fatalf("after the answer the step is %v, held %q; want it done and held for reading", st.Status, st.Held)
	}
	if _, err := p.ExecCommand(ctx, command.Heal{}); err != nil {
		t.Fatal(err)
	}
	if _, paused := l.Clock().Speed(); paused || p.State().Held != "" {
		t.Fatalf("after a command the lab is still held: paused %v, %q", paused, p.State().Held)
	}
}

// A learner's answer is read one way everywhere: a letter among the
// choices shown, or a number for a question that asks for one; and the
// predict command is told from the lab's language in one place.
func TestParseAnswer(t *testing.T) {
	for _, c := range []struct {
		said    string
		choices int
		numeric bool
		want    Said
		err     string
	}{
		{"b", 3, false, Said{Choice: 1}, ""},
		{"d", 3, false, Said{}, "a letter from a to c"},
		{"bb", 3, false, Said{}, "a letter from a to c"},
		{"1,600", 0, true, Said{Choice: -1, Number: 1600, Numeric: true}, ""},
		{"b", 0, true, Said{}, "the answer is a number"},
	} {
		got, err := ParseAnswer(c.said, c.choices, c.numeric)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v, want an error saying %q", c.said, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%q: %+v, %v; want %+v", c.said, got, err, c.want)
		}
	}
	for _, c := range []struct {
		n    Number
		want string
	}{
		{Number{Value: 7, Tol: 0.5, Unit: "records"}, "7 records (exact)"},
		{Number{Value: 2000, Tol: 0.5}, "2,000 (exact)"},
		{Number{Value: 2, Tol: 0.5, Unit: "s"}, "2 s (± 0.5)"},
		{Number{Value: 8, Tol: 1, Unit: "buyers"}, "8 buyers (± 1)"},
		{Number{Value: 1.8, Tol: 0.4, Unit: "s"}, "1.8 s (± 0.4)"},
		{Number{Value: 1600, Tol: 10, Percent: true}, "1,600 (± 10 %)"},
	} {
		if got := c.n.String(); got != c.want {
			t.Errorf("%+v reads %q; want %q", c.n, got, c.want)
		}
	}
	n := &Number{Value: 20, Tol: 10, Percent: true}
	if !(Said{Choice: -1, Number: 21, Numeric: true}).Right(-1, n) || (Said{Choice: 2}).Right(1, nil) || !(Said{Choice: 1}).Right(1, nil) {
		t.Error("Right grades a number by its tolerance and a choice by the right one")
	}
	for line, want := range map[string]string{"predict b": "b", "predict": "", "predict  20 ": "20", "predict a b": ""} {
		if said, ok := PredictAnswer(line); !ok || said != want {
			t.Errorf("PredictAnswer(%q) = %q, %v; want %q", line, said, ok, want)
		}
	}
	if _, ok := PredictAnswer("produce orders"); ok || isCommand("kill n1") || !isCommand("lesson next") || !isCommand("predict b") {
		t.Error("a lab command is taken for a lesson command, or the other way")
	}
}

// sqsReceive asks the lab's SQS endpoint for a message of receipts, as a
// learner's own client would, with the request's extra JSON fields, and
// returns the answer's body.
func sqsReceive(ctx context.Context, t *testing.T, endpoint, fields string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", endpoint+"/", strings.NewReader(`{"QueueUrl":"`+endpoint+`/000000000000/receipts"`+fields+`}`))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS.ReceiveMessage")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, body)
}

// openOutsideTask plays a one-step lesson whose lab block starts a
// cluster and goes on with rest (the block's other lines, then a task and
// what follows it): it returns once the task is open and holds the lab.
func openOutsideTask(ctx context.Context, t *testing.T, id, rest string) (*Player, *lab.Lab) {
	t.Helper()
	les, err := Parse(id+".md", []byte("---\nid: "+id+"\ntitle: Outside\nconcepts: [acks]\n---\n\n"+
		"## One\n\n```lab\ncluster nodes=3\n"+rest))
	if err != nil {
		t.Fatal(err)
	}
	p, l := newTestPlayer(t, les, PlayerOptions{})
	if _, err := p.Goto(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if st := p.State(); st.Status != StatusTask || st.Held == "" {
		t.Fatalf("the step is %v, held %q; want the task open and the lab held", st.Status, st.Held)
	}
	return p, l
}

// A task done with the learner's own client in another terminal ends the
// task as a command of theirs would, and lets lab time run again: an SQS
// client's receive is the learner acting.
func TestOutsideClientActs(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	p, l := openOutsideTask(ctx, t, "outside", "queue create receipts\nsqs listen port=0\nsend receipts value=\"receipt 881\"\n```\n\n"+
		"```task\nReceive receipt 881 with your own client.\ndo: worker start me queue=receipts crash=before-work\nwait: inflight(receipts) == 1\n```\n\n"+
		"```predict\nconcept: acks\nWhat now?\n- [x] this\n- [ ] that\nwhy: because.\n```\n\n"+
		"```expect\nconcept: acks\ninflight(receipts) == 1\n```\n")
	if answer := sqsReceive(ctx, t, l.Snapshot().SQS.Endpoint, `,"WaitTimeSeconds":5`); !strings.Contains(answer, "receipt 881") {
		t.Fatalf("the receive answered %s", answer)
	}
	for end := time.Now().Add(10 * time.Second); p.State().Status == StatusTask; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the task did not end after the learner's own client received the message")
		}
	}
	if _, paused := l.Clock().Speed(); paused && p.State().Held == "" {
		t.Fatal("the lab stayed paused after the learner's client acted")
	}
}

// A decision made in the learner's own client (its settings) is made
// when that client acts, before any lab command of theirs: the lab plays
// it out rather than stand still under a client that works in wall time.
func TestOutsideClientDecides(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	p, l := openOutsideTask(ctx, t, "outside-decides", "queue create receipts visibility=1s\nsqs listen port=0\nsend receipts value=\"receipt 881\"\n```\n\n"+
		"```task\nReceive receipt 881 with your own client, hiding it as long as you think right.\ndecide: how long your client hides it\n"+
		"do: worker start me queue=receipts crash=before-work\nalso: worker start me queue=receipts crash=after-work\nwait: delivered(receipts) >= 2\n```\n\n"+
		"```predict\nconcept: acks\nWhat now?\n- [x] this\n- [ ] that\nwhy: because.\n```\n\n"+
		"```expect\nconcept: acks\ndelivered(receipts) >= 2\n```\n")
	endpoint := l.Snapshot().SQS.Endpoint
	receive := func() string { return sqsReceive(ctx, t, endpoint, `,"VisibilityTimeout":1`) }
	if body := receive(); !strings.Contains(body, "receipt 881") {
		t.Fatalf("the first receive answered %s", body)
	}
	// The receipt comes back only once a second of lab time has passed:
	// the client's choice plays out only if the lab lets go.
	for end := time.Now().Add(20 * time.Second); p.State().Status == StatusTask; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			st := p.State()
			t.Fatalf("the decision stayed open (held %q) after the learner's own client acted", st.Held)
		}
		receive()
	}
}

// decideLesson asks the learner to decide how many orders to produce,
// then asks a question; it expects two orders at the step's end.
const decideLesson = "---\nid: decide\ntitle: Decide\nconcepts: [acks]\n---\n\n" +
	"## The only step\n\n```lab\ncluster nodes=3\ntopic create orders partitions=1\nwait leader(orders/0) != none\n```\n\n" +
	"```task\nProduce as many orders as you think right.\ndecide: how many orders\n" +
	"do: produce orders\nalso: produce orders count=2\nwait: hwm(orders/0) >= 1\n```\n\n" +
	"```predict\nconcept: acks\nWhat now?\n- [x] this\n- [ ] that\nwhy: because.\n```\n\n" +
	"```expect\nconcept: acks\nhwm(orders/0) >= 2\n```\n"

// openDecision plays src, a lesson like decideLesson, to its first step,
// and returns the player and a reader of orders/0's high-water mark.
func openDecision(t *testing.T, ctx context.Context, src string, opts PlayerOptions) (*Player, func() string) {
	t.Helper()
	les, err := Parse("decide.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p, l := newTestPlayer(t, les, opts)
	if _, err := p.Goto(ctx, 0); err != nil {
		t.Fatal(err)
	}
	return p, func() string {
		t.Helper()
		v, err := l.Value(ctx, script(t, "expect hwm(orders/0) == 0")[0].Cmd.(command.Expect).Cond.Left)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// A decision task stays open after a command that meets its goal, with
// lab time held across the learner's commands, until they say their
// choice is complete (n); n before any command is refused and says why.
func TestDecisionWaitsForTheLearnersWord(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	p, _ := openDecision(t, ctx, decideLesson, PlayerOptions{})
	if _, err := p.Next(ctx); err == nil || !strings.Contains(err.Error(), "first your choice: how many orders") {
		t.Fatalf("n before any command: %v", err)
	}
	for range 2 {
		if _, err := p.Exec(ctx, "produce orders"); err != nil {
			t.Fatal(err)
		}
	}
	// The task waits for the learner's word, time still held.
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		st := p.State()
		if st.Status != StatusTask {
			t.Fatalf("the decision ended as %v before the learner said it was complete", st.Status)
		}
		if _, paused := p.Lab().Clock().Speed(); !paused {
			t.Fatal("a command of the choice let lab time run")
		}
	}
	if out, err := p.Next(ctx); err != nil || !strings.Contains(out, "your choice is in") {
		t.Fatalf("n after the choice: %q %v", out, err)
	}
	for end := time.Now().Add(10 * time.Second); p.State().Status == StatusTask; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the decision did not end after n")
		}
	}
	if st := p.State(); st.Status != StatusPredict {
		t.Fatalf("after the decision the step is %v, want the question after it", st.Status)
	}
}

// In the sandbox (and so in the reading audit, which plays there), n on a
// decision the learner has acted on says the choice is in, as it does in a
// lesson: it must not pass over the rest of the step.
func TestSandboxDecisionPlaysOut(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	p, _ := openDecision(t, ctx, decideLesson, PlayerOptions{Sandbox: true})
	if _, err := p.Exec(ctx, "produce orders"); err != nil {
		t.Fatal(err)
	}
	if out, err := p.Next(ctx); err != nil || !strings.Contains(out, "your choice is in") {
		t.Fatalf("n after the choice in the sandbox: %q %v", out, err)
	}
	for end := time.Now().Add(10 * time.Second); p.State().Status == StatusTask; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the decision did not end after n")
		}
	}
	if st := p.State(); st.Status != StatusPredict {
		t.Fatalf("after the decision the step is %v, want the question after it", st.Status)
	}
}

// A decision holds the lab still: what the learner types for their choice
// waits, shown under the task, and runs in order when they say the choice
// is complete. A command that cannot run then is named, the rest of the
// choice waits on, and the decision stays open.
func TestDecisionCommandsWaitForTheChoice(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	p, hwm := openDecision(t, ctx, decideLesson, PlayerOptions{})
	chosen := func() []string {
		for _, b := range p.State().Blocks {
			if b.Kind == KindTask && !b.Task.Done {
				return b.Task.Chosen
			}
		}
		return nil
	}
	if st := p.State(); st.Status != StatusTask || !strings.Contains(st.Held, "wait") {
		t.Fatalf("at the decision: %v, held %q; want the task, saying commands wait", st.Status, st.Held)
	}
	out, err := p.Exec(ctx, "produce nosuch")
	if err != nil || !strings.Contains(out, "n (or space)") {
		t.Fatalf("a command of the choice: %q %v; want it kept until n", out, err)
	}
	if _, err := p.Next(ctx); err == nil || !strings.Contains(err.Error(), "produce nosuch") {
		t.Fatalf("n with a choice that cannot run: %v; want the command named", err)
	}
	if st := p.State(); st.Status != StatusTask || len(chosen()) != 0 {
		t.Fatalf("after a choice that could not run: %v, still waiting %q; want the task open, nothing waiting", st.Status, chosen())
	}
	for _, line := range []string{"produce orders count=2", "load orders rate=1/s for=1s"} {
		if _, err := p.Exec(ctx, line); err != nil {
			t.Fatal(err)
		}
	}
	if got := hwm(); got != "0" {
		t.Fatalf("the log ends at %s while the learner is still choosing; want 0", got)
	}
	if got := chosen(); len(got) != 2 || got[0] != "produce orders count=2" || !strings.HasPrefix(got[1], "load orders") {
		t.Fatalf("the task shows the choice as %q", got)
	}
	if out, err := p.Next(ctx); err != nil || !strings.Contains(out, "your choice is in") {
		t.Fatalf("n after the choice: %q %v", out, err)
	}
	for end := time.Now().Add(10 * time.Second); p.State().Status == StatusTask || hwm() != "3"; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("after n the step is %v and the log ends at %s; want the question, and 3 records", p.State().Status, hwm())
		}
	}
}

// A choice that needs lab time to play out (a load) is played out after
// n, also when the lesson had stopped the clock before the decision: the
// learner is not left to find out that space is needed too.
func TestDecisionPlaysOutAfterTheLessonsPause(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	src := strings.NewReplacer(
		"wait leader(orders/0) != none\n", "wait leader(orders/0) != none\npause\n",
		"do: produce orders\nalso: produce orders count=2\nwait: hwm(orders/0) >= 1\n",
		"do: load orders rate=20/s for=1s\nalso: load orders rate=40/s for=1s\nwait: hwm(orders/0) >= 20\n",
	).Replace(decideLesson)
	les, err := Parse("decide.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := newTestPlayer(t, les, PlayerOptions{})
	if _, err := p.Goto(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec(ctx, "load orders rate=20/s for=1s"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Next(ctx); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(20 * time.Second); p.State().Status == StatusTask; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("after n the load's goal was not met: the clock stayed as the lesson had stopped it (held %q)", p.State().Held)
		}
	}
}

// A decision that opens on a clock the lesson itself stopped (pause, or
// pause in=) holds the learner's commands as one on a running clock does:
// they wait, shown under the task, until n runs them; then lab time runs
// to play the choice out, as the prompt's "n runs it" says.
func TestDecisionAfterTheLessonsPause(t *testing.T) {
	for _, pause := range []string{"pause", "pause in=100ms"} {
		t.Run(pause, func(t *testing.T) {
			playsALab(t)
			ctx := ctxFor(t, time.Minute)
			src := strings.Replace(decideLesson, "wait leader(orders/0) != none\n", "wait leader(orders/0) != none\n"+pause+"\n", 1)
			p, hwm := openDecision(t, ctx, src, PlayerOptions{})
			choiceWaitsForN(t, ctx, p, hwm, "at the decision")
		})
	}
}

// A decision holds the same whoever stopped the clock: after the learner
// resumes during it, their commands run at once on the running lab, and
// once they stop the clock again, the commands of the choice wait for n
// as they did before, rather than run under a stopped clock.
func TestDecisionHoldsAfterTheLearnersOwnPause(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	p, hwm := openDecision(t, ctx, decideLesson, PlayerOptions{})
	if _, err := p.Exec(ctx, "resume"); err != nil {
		t.Fatal(err)
	}
	if st := p.State(); st.Status != StatusTask || st.Held != "" {
		t.Fatalf("after the learner's resume: %v, held %q; want the task open on a running clock", st.Status, st.Held)
	}
	if _, err := p.Exec(ctx, "pause"); err != nil {
		t.Fatal(err)
	}
	choiceWaitsForN(t, ctx, p, hwm, "after the learner's pause")
}

// choiceWaitsForN checks a decision open on a stopped clock: the task
// says the learner's commands wait, a command of the choice is kept and
// changes nothing, and n runs it and lets lab time play it out.
func choiceWaitsForN(t *testing.T, ctx context.Context, p *Player, hwm func() string, when string) {
	t.Helper()
	if st := p.State(); st.Status != StatusTask || !strings.Contains(st.Held, "your commands wait") {
		t.Fatalf("%s: %v, held %q; want the task, saying commands wait", when, st.Status, st.Held)
	}
	out, err := p.Exec(ctx, "produce orders count=2")
	if err != nil || !strings.Contains(out, "n (or space)") {
		t.Fatalf("a command of the choice: %q %v; want it kept until n", out, err)
	}
	if got := hwm(); got != "0" {
		t.Fatalf("the log ends at %s while the learner is still choosing; want 0", got)
	}
	if out, err := p.Next(ctx); err != nil || !strings.Contains(out, "your choice is in") {
		t.Fatalf("n after the choice: %q %v", out, err)
	}
	for end := time.Now().Add(10 * time.Second); p.State().Status == StatusTask || hwm() != "2"; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("after n the step is %v and the log ends at %s; want the question, and 2 records", p.State().Status, hwm())
		}
	}
}
