package tui

// The lesson commands: lesson next, prev, reset and goto N, which move the
// runner from step to step, and predict, which answers the open question;
// and what each says back, with the lesson's end and the progress kept.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mqlab/mqlab/lessons"
)

func (s *LessonSource) lessonCommand(ctx context.Context, args []string) (string, error) {
	usage := errors.New("lesson next, lesson prev, lesson reset or lesson goto N")
	if len(args) == 0 {
		return "", usage
	}
	s.cmd.Lock()
	defer s.cmd.Unlock()
	ctx, cancel := s.commandCtx(ctx)
	defer cancel()
	if s.base.Err() != nil {
		return "", errors.New("the lesson is closed")
	}
	switch {
	case args[0] == "next" && len(args) == 1:
		return s.next(ctx)
	case args[0] == "prev" && len(args) == 1:
		st, _ := s.state()
		switch {
		case st.step >= len(s.les.Steps):
			return s.gotoStep(ctx, len(s.les.Steps)-1, "prev")
		case st.step == 0:
			return "", errors.New("this is the first step: :lesson reset starts it again")
		}
		return s.gotoStep(ctx, st.step-1, "prev")
	case args[0] == "reset" && len(args) == 1:
		st, _ := s.state()
		return s.gotoStep(ctx, min(st.step, len(s.les.Steps)-1), "reset")
	case args[0] == "goto" && len(args) == 2:
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 || n > len(s.les.Steps) {
			return "", fmt.Errorf("lesson goto takes a step from 1 to %d, not %q", len(s.les.Steps), args[1])
		}
		return s.gotoStep(ctx, n-1, "goto")
	}
	return "", usage
}

// next moves to the next step once this one has played and held.
func (s *LessonSource) next(ctx context.Context) (string, error) {
	st, err := s.settle(ctx)
	if err != nil {
		return "", err
	}
	sandbox := s.opts.Sandbox
	switch st.status {
	case LessonStarting:
		return "", errors.New("the step has not started: :lesson reset starts it")
	case LessonFinished:
		return "", errors.New("this was the last step: the lesson is finished")
	case LessonTask:
		if !sandbox {
			return "", fmt.Errorf("first the task: %s (%s)", oneLine(plainInline(st.task.Text)), st.task.Hint())
		}
		s.stopPlayer()
	case LessonPredict:
		if !sandbox {
			return "", errors.New("first the question: answer it with its letter")
		}
	case LessonBroken:
		if !sandbox {
			return "", errors.New("this step could not go on: :lesson reset starts it again")
		}
	}
	err = s.run.NextStep(ctx, sandbox)
	var fe *lessons.FailedError
	switch {
	case errors.As(err, &fe):
		f := fe.Failed[0]
		return "", fmt.Errorf("%s does not hold (%s): a step cannot be passed while an expectation fails; :lesson reset starts it again",
			f.Cond, f.Observed)
	case errors.Is(err, lessons.ErrEnd):
		end := LessonBlock{Kind: BlockText, Text: s.endWords()}
		s.update(func(st *lessonState) {
			st.open(len(s.les.Steps), LessonFinished, "")
			st.blocks = []LessonBlock{end}
		})
		return "the lesson is finished " + symOK, s.progressErr()
	case err != nil:
		return "", err
	}
	step := s.run.Step()
	s.update(func(st *lessonState) { st.open(step, LessonPlaying, "") })
	if err := s.playOn(ctx); err != nil {
		return "", err
	}
	return s.stepWords(step), s.progressErr()
}

// gotoStep starts a step on a fresh cluster: the runner replays the
// lesson's commands up to it.
func (s *LessonSource) gotoStep(ctx context.Context, step int, why string) (string, error) {
	s.stopPlayer()
	notice := fmt.Sprintf("Starting step %d on a fresh cluster…", step+1)
	if step > 0 {
		notice = fmt.Sprintf("Starting step %d: a live cluster cannot be rewound, so the lab starts a fresh one "+
			"and re-runs the lesson's commands of %s…", step+1, stepsUpTo(step))
	}
	preview := openingText(s.les.Steps[step])
	s.update(func(st *lessonState) {
		st.open(step, LessonStarting, notice)
		st.preview = preview
	})
	if err := s.run.Goto(ctx, step); err != nil {
		s.update(func(st *lessonState) {
			st.status = LessonBroken
			st.notice = fmt.Sprintf("Step %d could not start: %v. :lesson reset tries again.", step+1, err)
		})
		return "", fmt.Errorf("step %d could not start: %w", step+1, err)
	}
	s.update(func(st *lessonState) { st.status, st.notice = LessonPlaying, "" })
	if err := s.playOn(ctx); err != nil {
		return "", err
	}
	out := s.stepWords(step)
	switch {
	case why == "reset":
		out += " — started again on a fresh cluster"
	case step > 0:
		out += fmt.Sprintf(" — the lab re-ran the lesson's commands of %s on a fresh cluster", stepsUpTo(step))
	}
	return out, s.progressErr()
}

// endWords is what the pane says when the lesson is over: what it showed,
// and how the learner's predictions went.
func (s *LessonSource) endWords() string {
	var b strings.Builder
	b.WriteString("**You finished this lesson.**")
	if len(s.les.Concepts) > 0 {
		b.WriteString(" It showed you, on a live cluster: " + strings.Join(s.les.Concepts, ", ") + ".")
	}
	if store := s.opts.Progress; store != nil {
		if lp, err := store.Lesson(s.les.ID); err == nil {
			preds := s.les.Predictions()
			right := 0
			for _, p := range preds {
				if a, ok := lp.Answers[p.ID]; ok && a.Correct {
					right++
				}
			}
			if len(preds) > 0 {
				fmt.Fprintf(&b, " You predicted %d of %d right.", right, len(preds))
			}
		}
	}
	b.WriteString("\n\n:lesson prev plays the last step again; :lesson goto 1 starts over.")
	return b.String()
}

// stepsUpTo names the steps before step (from 0): "step 1", "steps 1–3".
func stepsUpTo(step int) string {
	if step == 1 {
		return "step 1"
	}
	return fmt.Sprintf("steps 1–%d", step)
}

func (s *LessonSource) stepWords(step int) string {
	return fmt.Sprintf("step %d of %d: %s", step+1, len(s.les.Steps), s.les.Steps[step].Title)
}

func (s *LessonSource) progressErr() error {
	if err := s.run.ProgressError(); err != nil {
		return fmt.Errorf("progress is not being saved: %w", err)
	}
	return nil
}

// predict answers the open question and plays on.
func (s *LessonSource) predict(ctx context.Context, arg string) (string, error) {
	s.cmd.Lock()
	defer s.cmd.Unlock()
	ctx, cancel := s.commandCtx(ctx)
	defer cancel()
	st, err := s.settle(ctx)
	if err != nil {
		return "", err
	}
	if st.status != LessonPredict {
		return "", errors.New("no question is open now")
	}
	var pred *Prediction
	for i := len(st.blocks) - 1; i >= 0; i-- {
		if st.blocks[i].Kind == BlockPrediction {
			pred = st.blocks[i].Prediction
			break
		}
	}
	n := len(pred.Choices)
	if len(arg) != 1 || arg[0] < 'a' || int(arg[0]-'a') >= n {
		return "", fmt.Errorf("predict takes a letter from a to %c, not %q", 'a'+n-1, arg)
	}
	choice := int(arg[0] - 'a')
	rv, err := s.run.Answer(ctx, choice)
	if err != nil {
		return "", err
	}
	s.update(func(st *lessonState) {
		for i := len(st.blocks) - 1; i >= 0; i-- {
			if b := &st.blocks[i]; b.Kind == BlockPrediction {
				p := *b.Prediction
				p.Chosen, p.Answer, p.Why = choice, rv.Predict.Answer, rv.Why
				b.Prediction = &p
				break
			}
		}
		st.status = LessonPlaying
	})
	out := "you predicted it"
	if !rv.Correct {
		out = fmt.Sprintf("the answer is %c) %s", 'a'+rv.Predict.Answer, oneLine(plainInline(rv.Answer)))
	}
	if err := s.playOn(ctx); err != nil {
		return out, err
	}
	return out, s.progressErr()
}
