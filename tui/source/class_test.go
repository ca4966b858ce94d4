package source

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/view"
)

// A question that asks for a number takes numbers from the class: the
// teacher's tally gives their range and median, a letter is refused, and
// once the teacher reveals the answer each follower's number is graded
// against its tolerance.
func TestClassNumericAnswers(t *testing.T) {
	ctx := context.Background()
	open := &view.Prediction{Question: "How many cashbacks a second?", Numeric: true, Chosen: -1, Answer: -1}
	v := view.State{Lesson: &view.Lesson{ID: "back-pressure", Title: "t", Step: 6, Steps: 7, Status: lessons.StatusPredict,
		Prediction: open, Blocks: []view.LessonBlock{{Kind: view.BlockPrediction, Prediction: open}}}}
	src := &stillSource{state: v}
	class := NewClass()
	teacher := class.Share(src)
	defer teacher.Close()
	teacher.View() // shares the open question
	ada, bob, cy := class.Follow("ada", "ada"), class.Follow("bob", "bob"), class.Follow("cy", "cy")
	defer ada.Close()
	defer bob.Close()
	defer cy.Close()
	if _, err := ada.Exec(ctx, order("predict b")); err == nil || !strings.Contains(err.Error(), "a number") {
		t.Errorf("a letter for a number: %v", err)
	}
	for _, a := range []struct {
		f    *Follower
		said string
	}{{ada, "40"}, {bob, "21"}, {cy, "1,600"}} {
		if out, err := a.f.Exec(ctx, order("predict "+a.said)); err != nil || !strings.Contains(out, "you said "+a.said) {
			t.Fatalf("%s: %q, %v", a.said, out, err)
		}
	}
	tally := teacher.View().Lesson.Prediction.Class
	if want := "class: 3 of 3 answered — from 21 to 1,600, median 40"; tally == nil || tally.String() != want {
		t.Errorf("the tally reads %v; want %q", tally, want)
	}

	revealed := *open
	revealed.Chosen, revealed.Answer, revealed.Given, revealed.Right, revealed.Correct = 0, 0, "20", "20 a second (± 4)", true
	revealed.Number = &lessons.Number{Value: 20, Tol: 4, Unit: "a second"}
	src.mu.Lock()
	src.state.Lesson = &view.Lesson{ID: "back-pressure", Title: "t", Step: 6, Steps: 7, Status: lessons.StatusPlaying,
		Prediction: &revealed, Blocks: []view.LessonBlock{{Kind: view.BlockPrediction, Prediction: &revealed}}}
	src.mu.Unlock()
	teacher.View()
	for _, c := range []struct {
		f       *Follower
		given   string
		correct bool
	}{{ada, "40", false}, {bob, "21", true}, {cy, "1,600", false}} {
		pr := c.f.View().Lesson.Prediction
		if pr.Given != c.given || pr.Correct != c.correct {
			t.Errorf("%s's screen says they gave %q, right %v; want %q, %v", c.f.seat.name, pr.Given, pr.Correct, c.given, c.correct)
		}
	}
}

// stillSource is a teacher's source showing the state the test sets.
type stillSource struct {
	mu    sync.Mutex
	state view.State
}

func (s *stillSource) View() view.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

func (s *stillSource) Exec(context.Context, view.Order) (string, error) { return "done", nil }

func (s *stillSource) Changes() <-chan struct{} { return nil }

// A follower's help says what a follower can do, and explains the
// teacher's commands without running them.
func TestFollowerHelp(t *testing.T) {
	ctx := context.Background()
	class := NewClass()
	f := class.Follow("ada", "ada")
	defer f.Close()
	out, err := f.Exec(ctx, order("help"))
	if err != nil || !strings.Contains(out, "a–d, or predict b") || strings.Contains(out, "kill NODE") {
		t.Errorf("help: %q, %v; want a follower's own help", out, err)
	}
	if out, err := f.Exec(ctx, order("help kill")); err != nil || !strings.Contains(out, "kill") || !strings.Contains(out, "Only the teacher runs it") {
		t.Errorf("help kill: %q, %v", out, err)
	}
	if _, err := f.Exec(ctx, order("kill n1")); !errors.Is(err, ErrReadOnly) {
		t.Errorf("kill n1 from a follower: %v; want it refused as read-only", err)
	}
}

// A question the teacher asks again, after its reveal, takes new answers:
// the locked ones were for the last asking.
func TestClassQuestionAskedAgain(t *testing.T) {
	ctx := context.Background()
	open := func() view.State {
		p := &view.Prediction{Question: "Which epoch?", Choices: []string{"same", "higher"}, Chosen: -1, Answer: -1}
		return view.State{Lesson: &view.Lesson{ID: "failover", Step: 2, Steps: 4, Status: lessons.StatusPredict, Prediction: p,
			Blocks: []view.LessonBlock{{Kind: view.BlockPrediction, Prediction: p}}}}
	}
	src := &stillSource{state: open()}
	class := NewClass()
	teacher := class.Share(src)
	defer teacher.Close()
	teacher.View()
	ada := class.Follow("ada", "ada")
	defer ada.Close()
	if _, err := ada.Exec(ctx, order("predict a")); err != nil {
		t.Fatal(err)
	}
	if _, err := ada.Exec(ctx, order("predict b")); err == nil || !strings.Contains(err.Error(), "you answered a) already") {
		t.Errorf("a second answer: %v; want it refused", err)
	}
	revealed := open()
	revealed.Lesson.Prediction.Answer = 1
	src.mu.Lock()
	src.state = revealed
	src.mu.Unlock()
	teacher.View()
	src.mu.Lock()
	src.state = open()
	src.mu.Unlock()
	teacher.View()
	if _, err := ada.Exec(ctx, order("predict b")); err != nil {
		t.Errorf("an answer to the question asked again: %v", err)
	}
	if got := teacher.View().Lesson.Prediction.Class.String(); got != "class: 1 of 1 answered — a 0 · b 1" {
		t.Errorf("the tally reads %q", got)
	}
}
