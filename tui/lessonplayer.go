package tui

// The player: the goroutine that plays a step through the runner, turning
// its events into the pane's blocks, and stops at a prediction or waits at
// a task.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/mqlab/mqlab/lessons"
)

// settle waits while the step is playing on its own (the player runs the
// commands after a task), so a command sees where it stopped.
func (s *LessonSource) settle(ctx context.Context) (lessonState, error) {
	for {
		st, changed := s.state()
		if st.status != LessonPlaying {
			return st, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return st, fmt.Errorf("the step is still running its commands: %w", ctx.Err())
		}
	}
}

// playOn starts the player and waits until the step stops for the
// learner, ends or fails. When ctx ends first (esc), the step stops part-
// way.
func (s *LessonSource) playOn(ctx context.Context) error {
	p := s.startPlayer()
	for {
		st, changed := s.state()
		if st.status != LessonPlaying {
			return nil
		}
		select {
		case <-changed:
		case <-p.done:
			return nil
		case <-ctx.Done():
			s.stopPlayer()
			s.update(func(st *lessonState) {
				st.status = LessonBroken
				st.notice = "The step was stopped part-way through its commands. :lesson reset starts it again."
			})
			return fmt.Errorf("stopped part-way: %w", ctx.Err())
		}
	}
}

func (s *LessonSource) startPlayer() *player {
	ctx, cancel := context.WithCancel(s.base)
	p := &player{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.player = p
	s.mu.Unlock()
	go func() {
		defer close(p.done)
		defer cancel()
		s.play(ctx)
	}()
	return p
}

// stopPlayer stops the player, if one runs, and waits for it: a task it
// waited for stays pending.
func (s *LessonSource) stopPlayer() {
	s.mu.Lock()
	p := s.player
	s.player = nil
	s.mu.Unlock()
	if p != nil {
		p.cancel()
		<-p.done
	}
}

// play runs the step's blocks until one waits for an answer, the step
// ends, or something fails. At a task it waits for the learner, then goes
// on.
func (s *LessonSource) play(ctx context.Context) {
	for {
		ev, err := s.run.Next(ctx)
		switch {
		case errors.Is(err, lessons.ErrTaskPending):
			if !s.await(ctx) {
				return
			}
			continue
		case errors.Is(err, lessons.ErrPredictionPending):
			s.update(func(st *lessonState) { st.status = LessonPredict })
			return
		}
		if ev.Kind == lessons.KindLab && len(ev.Commands) > 0 {
			s.addBlock(LessonBlock{Kind: BlockCommands, Commands: commandLines(ev.Commands)})
		}
		if err != nil {
			if ctx.Err() != nil {
				return // stopped: whoever stopped it says what happens next
			}
			s.update(func(st *lessonState) {
				st.status = LessonBroken
				st.notice = s.whatHappened(st, "A command of this step could not run: "+err.Error()+".")
			})
			return
		}
		switch ev.Kind {
		case lessons.KindText:
			if strings.TrimSpace(ev.Text) != "" {
				s.addBlock(LessonBlock{Kind: BlockText, Text: ev.Text})
			}
		case lessons.KindExpect:
			s.addBlock(LessonBlock{Kind: BlockExpect, Expectations: expectations(ev.Expects)})
		case lessons.KindPredict:
			s.update(func(st *lessonState) {
				st.blocks = append(st.blocks, LessonBlock{Kind: BlockPrediction, Prediction: &Prediction{
					Question: ev.Text, Choices: ev.Choices, Chosen: -1, Answer: -1}})
				st.status = LessonPredict
			})
			return
		case lessons.KindTask:
			s.update(func(st *lessonState) {
				st.blocks = append(st.blocks, LessonBlock{Kind: BlockTask, Task: &Task{Text: ev.Text, Hint: ev.Task.Hint()}})
				st.task = ev.Task
			})
			if !s.await(ctx) {
				return
			}
		case lessons.KindStepEnd:
			failed := s.run.Failed()
			s.update(func(st *lessonState) {
				st.status = LessonStepDone
				if len(failed) > 0 {
					st.status = LessonFailed
					var b strings.Builder
					for i, f := range failed {
						if i > 0 {
							b.WriteString("; ")
						}
						b.WriteString(f.Cond + " (" + f.Observed + ")")
					}
					st.notice = s.whatHappened(st, "This step did not go as the lesson expects: "+b.String()+" does not hold.")
				}
			})
			return
		}
	}
}

// await waits for the pending task and marks it done; false when the wait
// ended without it.
func (s *LessonSource) await(ctx context.Context) bool {
	s.update(func(st *lessonState) { st.status = LessonTask })
	if err := s.run.AwaitTask(ctx); err != nil {
		if ctx.Err() != nil {
			return false // stopped: the task stays pending
		}
		s.update(func(st *lessonState) {
			st.status = LessonBroken
			st.notice = s.whatHappened(st, "This task can no longer be done here: "+err.Error()+".")
		})
		return false
	}
	s.update(func(st *lessonState) {
		for i := len(st.blocks) - 1; i >= 0; i-- {
			if b := &st.blocks[i]; b.Kind == BlockTask && !b.Task.Done {
				t := *b.Task
				t.Done = true
				b.Task = &t
				break
			}
		}
		st.task, st.notice, st.offTrack, st.status = nil, "", "", LessonPlaying
	})
	return true
}

func (s *LessonSource) addBlock(b LessonBlock) {
	s.update(func(st *lessonState) { st.blocks = append(st.blocks, b) })
}

// whatHappened adds to a failure what the learner did during the step,
// and the way back.
func (s *LessonSource) whatHappened(st *lessonState, what string) string {
	var b strings.Builder
	b.WriteString(what)
	if len(st.learner) > 0 {
		b.WriteString(" During this step you ran: " + strings.Join(st.learner, ", ") + ".")
	}
	b.WriteString(" :lesson reset starts the step again on a fresh cluster.")
	return b.String()
}

func commandLines(rs []lessons.CommandResult) []CommandLine {
	out := make([]CommandLine, len(rs))
	for i, r := range rs {
		out[i] = CommandLine{Text: r.Text, OK: r.Err == nil}
		if r.Err != nil {
			out[i].Note = r.Err.Error()
		}
	}
	return out
}

func expectations(rs []lessons.ExpectResult) []Expectation {
	out := make([]Expectation, len(rs))
	for i, r := range rs {
		out[i] = Expectation{Text: r.Cond, Label: r.Label, Checked: true, OK: r.Held, Got: r.Observed}
	}
	return out
}

// oneLine joins a text's lines.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// placeholderRE finds a placeholder: {{lag(billing)}}, {{lost as lost0}}.
var placeholderRE = regexp.MustCompile(`\{\{[^{}]*\}\}`)

// openingText is the narrative a step opens with, before its first block
// that runs or asks anything, with "…" for values the lab has yet to give.
func openingText(step lessons.Step) string {
	var parts []string
	for _, b := range step.Blocks {
		if b.Kind != lessons.KindText {
			break
		}
		if t := strings.TrimSpace(b.Text); t != "" {
			parts = append(parts, placeholderRE.ReplaceAllString(t, "…"))
		}
	}
	return strings.Join(parts, "\n\n")
}
