package lessons

import (
	"strings"
	"testing"
	"time"
)

// A teacher's reveal shows a numeric question's answer and plays on,
// keeping nothing as the teacher's own prediction; with no question open
// it says so.
func TestRevealWithoutAnswering(t *testing.T) {
	playsALab(t)
	ctx := ctxFor(t, time.Minute)
	les := loadLesson(t, "testdata/runner/number.md")
	store, err := OpenStore(t.TempDir() + "/progress.json")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := newTestPlayer(t, les, PlayerOptions{Progress: store})
	if _, err := p.Reveal(ctx); err == nil || !strings.Contains(err.Error(), "no question is open") {
		t.Errorf("reveal before the question: %v", err)
	}
	if _, err := p.Goto(ctx, 0); err != nil {
		t.Fatal(err)
	}
	out, err := p.Reveal(ctx)
	if err != nil || out != "the answer is 20 records (± 10 %)" {
		t.Fatalf("reveal: %q, %v", out, err)
	}
	var got *PlayedPrediction
	for _, b := range p.State().Blocks {
		if b.Kind == KindPredict {
			got = b.Prediction
		}
	}
	if got == nil || got.Answer < 0 || got.Chosen >= 0 || got.Given != "" || got.Right != "20 records (± 10 %)" {
		t.Errorf("the revealed question is %+v; want its answer and no one's number", got)
	}
	if p.State().Status == StatusPredict {
		t.Error("the lesson still waits for an answer after the reveal")
	}
	if lp, err := store.Lesson(les.ID); err != nil || len(lp.Answers) != 0 {
		t.Errorf("the reveal kept an answer: %+v, %v", lp.Answers, err)
	}
}
