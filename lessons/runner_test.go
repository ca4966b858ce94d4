package lessons

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mqlab/mqlab/internal/parallel"
	"github.com/mqlab/mqlab/lab/command"
)

// Raft's leadership transfer runs goroutines it does not track; they end
// within an election timeout on their own (as in package lab's tests).
func TestMain(m *testing.M) {
	if !raceEnabled {
		// The curriculum's plays wait on lab time, and take turns of
		// their own (playTurns, readingTurns), the longest first: every
		// play must be able to ask for its turn at once.
		parallel.Raise("100")
	}
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*Raft).leadershipTransfer"),
		goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*Raft).leaderLoop.func2"),
	)
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func loadLesson(t *testing.T, path string) *Lesson {
	t.Helper()
	les, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return les
}

func newRunner(t *testing.T, les *Lesson, opts Options) *Runner {
	t.Helper()
	r, err := NewRunner(les, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// playStep plays the current step to its end, doing tasks and revealing
// predictions as a headless run does.
func playStep(t *testing.T, ctx context.Context, r *Runner) []Event {
	t.Helper()
	var evs []Event
	for {
		ev, err := r.Next(ctx)
		if err != nil {
			t.Fatalf("step %d: %v", r.Step()+1, err)
		}
		evs = append(evs, ev)
		switch ev.Kind {
		case KindStepEnd:
			return evs
		case KindTask:
			if _, err := r.DoTask(ctx); err != nil {
				t.Fatal(err)
			}
		case KindPredict:
			if _, err := r.Answer(ctx, -1); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func value(t *testing.T, ctx context.Context, r *Runner, expr string) string {
	t.Helper()
	return r.Render(ctx, "{{"+expr+"}}")
}

// Going back a step replays the lesson's commands on a fresh cluster: the
// node the later step killed is up again, and a value kept by a step not
// yet replayed is not there; going forward again brings both back.
func TestGotoReplaysOnAFreshCluster(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	r := newRunner(t, loadLesson(t, "testdata/runner/back.md"), Options{})
	playStep(t, ctx, r)
	if err := r.NextStep(ctx, false); err != nil {
		t.Fatal(err)
	}
	evs := playStep(t, ctx, r)
	if got := value(t, ctx, r, "state(n1)"); got != "down" {
		t.Fatalf("after the task n1 is %s", got)
	}
	var text string
	for _, ev := range evs {
		if ev.Kind == KindText {
			text = ev.Text
		}
	}
	if !strings.HasPrefix(text, "The mark is 3 under n") {
		t.Errorf("placeholders: %q", text)
	}
	if err := r.NextStep(ctx, false); err != nil {
		t.Fatal(err)
	}
	evs = playStep(t, ctx, r)
	if evs[0].Text != "We kept 3." {
		t.Errorf("a kept value: %q", evs[0].Text)
	}

	if err := r.Goto(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if s, b := r.Position(); s != 1 || b != 0 {
		t.Fatalf("position %d/%d after Goto(1)", s, b)
	}
	if got := value(t, ctx, r, "state(n1)"); got != "up" {
		t.Errorf("after going back n1 is %s, want up on the fresh cluster", got)
	}
	if got := value(t, ctx, r, "hwm(orders/0)"); got != "3" {
		t.Errorf("after going back the mark is %s, want the first step's 3", got)
	}
	if got := value(t, ctx, r, "kept"); !strings.HasPrefix(got, "‹?") {
		t.Errorf("a value kept by step 2 survived going back to it: %q", got)
	}

	if err := r.Goto(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if got := value(t, ctx, r, "state(n1)"); got != "down" {
		t.Errorf("replaying step 2 left n1 %s, want down", got)
	}
	if got := value(t, ctx, r, "kept"); got != "3" {
		t.Errorf("replaying step 2 kept %q, want 3", got)
	}
}

// AwaitTask waits for whoever makes the condition hold: here the test
// plays the learner and kills n1 through the lab, as a key would.
func TestAwaitTaskWaitsForTheLearner(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	store, err := OpenStore(t.TempDir() + "/progress.json")
	if err != nil {
		t.Fatal(err)
	}
	les := loadLesson(t, "testdata/runner/back.md")
	r := newRunner(t, les, Options{Progress: store})
	playStep(t, ctx, r)
	if err := r.NextStep(ctx, false); err != nil {
		t.Fatal(err)
	}

	ev, err := r.Next(ctx)
	if err != nil || ev.Kind != KindPredict {
		t.Fatalf("want the prediction, got %v %v", ev.Kind, err)
	}
	if _, err := r.Next(ctx); !errors.Is(err, ErrPredictionPending) {
		t.Fatalf("Next before the answer: %v", err)
	}
	rv, err := r.Answer(ctx, 1)
	if err != nil || !rv.Correct || rv.Why != "n1 is down; the mark was 3." {
		t.Fatalf("answer: %+v %v", rv, err)
	}

	ev, err = r.Next(ctx)
	if err != nil || ev.Kind != KindTask || ev.Text != "Kill n1." {
		t.Fatalf("want the task, got %+v %v", ev, err)
	}
	if _, err := r.Next(ctx); !errors.Is(err, ErrTaskPending) {
		t.Fatalf("Next before the task is done: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- r.AwaitTask(ctx) }()
	if _, err := r.Lab().Exec(ctx, "kill n1"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("AwaitTask: %v", err)
	}
	playStep(t, ctx, r)
	if err := r.NextStep(ctx, false); err != nil {
		t.Fatal(err)
	}
	playStep(t, ctx, r)
	if err := r.NextStep(ctx, false); !errors.Is(err, ErrEnd) {
		t.Fatalf("after the last step: %v", err)
	}

	lp, err := store.Lesson(les.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !lp.Finished || lp.Answers["s2.p1"] != (Answer{Choice: 1, Correct: true}) {
		t.Errorf("progress: %+v", lp)
	}
	if r.ProgressError() != nil {
		t.Errorf("progress error: %v", r.ProgressError())
	}
}

// A step whose expectation failed cannot be passed, except by force.
func TestNextStepRefusesAFailedExpectation(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	r := newRunner(t, loadLesson(t, "testdata/runner/failing.md"), Options{})
	if err := r.NextStep(ctx, false); !errors.Is(err, ErrStepNotDone) {
		t.Fatalf("NextStep before playing: %v", err)
	}
	evs := playStep(t, ctx, r)
	var exp []ExpectResult
	for _, ev := range evs {
		exp = append(exp, ev.Expects...)
	}
	if len(exp) != 2 || exp[0].Held || !exp[1].Held || exp[0].Observed != "hwm(orders/0) is 1" || exp[0].Label != "wrong on purpose" {
		t.Fatalf("expectations: %+v", exp)
	}
	var fe *FailedError
	if err := r.NextStep(ctx, false); !errors.As(err, &fe) || len(fe.Failed) != 1 || fe.Failed[0].Line != 22 {
		t.Fatalf("NextStep over a failed expectation: %v", err)
	}
	if err := r.NextStep(ctx, true); err != nil {
		t.Fatalf("forced: %v", err)
	}
	if r.Step() != 1 {
		t.Fatalf("step %d", r.Step())
	}
}

func TestPlayHeadlessFailsOnAFailedExpectation(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	var out strings.Builder
	err := PlayHeadless(ctx, loadLesson(t, "testdata/runner/failing.md"), &out, Options{})
	var fe *FailedError
	if !errors.As(err, &fe) || len(fe.Failed) != 1 {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{
		"✗ hwm(orders/0) == 2 (hwm(orders/0) is 1) — wrong on purpose",
		"✓ hwm(orders/0) == 1 (hwm(orders/0) is 1)",
		"? Predict: What is the mark?",
		"Answer: a) 1",
		"✗ 1 of 2 expectations failed",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("transcript lacks %q:\n%s", want, out.String())
		}
	}
}

// FailFast ends the run with the step whose expectation failed.
func TestPlayHeadlessFailFast(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	var out strings.Builder
	err := PlayHeadless(ctx, loadLesson(t, "testdata/runner/failing.md"), &out, Options{FailFast: true})
	var fe *FailedError
	if !errors.As(err, &fe) || len(fe.Failed) != 1 {
		t.Fatalf("got %v", err)
	}
	if s := out.String(); !strings.Contains(s, "✗ 1 of 2 expectations failed") || strings.Contains(s, "Step 2 of") {
		t.Errorf("want the run to end after step 1:\n%s", s)
	}
}

// A task may wait on a queue the learner's own command creates: until it
// exists the wait keeps waiting, as it would for any other goal.
func TestAwaitTaskWaitsForWhatTheLearnerCreates(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	les, err := Parse("create.md", []byte("---\nid: create\ntitle: Create\nconcepts: [queue]\n---\n\n## Make it\n\n"+
		"```lab\ncluster nodes=1\n```\n\n"+
		"```predict\nHow many messages will the new queue hold?\nanswer: 0 ± 0.5 messages\nwhy: Nobody sends.\n```\n\n"+
		"```task\nCreate the queue jobs, with a timeout of your choosing.\n"+
		"decide: the visibility timeout\ndo: queue create jobs visibility=2s\nalso: queue create jobs visibility=3s\n"+
		"wait: depth(jobs) == 0\n```\n\n```expect\ndepth(jobs) == 0\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, les, Options{})
	for {
		ev, err := r.Next(ctx)
		if errors.Is(err, ErrPredictionPending) || (err == nil && ev.Kind == KindPredict) {
			if _, err := r.Answer(ctx, -1); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == KindTask {
			break
		}
	}
	cond := r.pending.Task.Wait[0].Cmd.(command.Wait).Cond
	short, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	defer cancel()
	if err := r.readable(short, cond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("before the queue exists the goal should still be waited for, got %v", err)
	}
	if _, err := r.Lab().Exec(ctx, "queue create jobs visibility=2s"); err != nil {
		t.Fatal(err)
	}
	if err := r.AwaitTask(ctx); err != nil {
		t.Fatalf("AwaitTask: %v", err)
	}
}
