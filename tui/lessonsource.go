package tui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/mqlab/mqlab/lessons"
)

// The lesson commands a LessonSource adds to the lab's language, beside
// CmdLessonNext, CmdLessonPrev and CmdPredict.
const (
	CmdLessonReset = "lesson reset" // start the current step again on a fresh cluster
	CmdLessonGoto  = "lesson goto"  // "lesson goto 3": start step 3, replaying steps 1–2
)

// LessonCommands are the lesson commands for the prompt's completion.
var LessonCommands = []string{CmdLessonNext, CmdLessonPrev, CmdLessonReset, CmdLessonGoto, CmdPredict}

// LessonOptions configure a LessonSource.
type LessonOptions struct {
	// Progress keeps the step, the answers and whether the lesson was
	// finished. Nil keeps nothing.
	Progress *lessons.Store
	// Sandbox lets the learner pass a step although an expectation fails,
	// a task waits or a question is open. A lesson normally holds them to
	// it.
	Sandbox bool
}

// LessonSource plays a lesson on the lab screen. It wraps a LabSource over
// the runner's lab: View adds the Lesson (the step as it has played so far,
// in order), and Exec takes the lesson commands — lesson next, lesson prev,
// lesson reset, lesson goto N, predict X — and passes every other line to
// the lab.
//
// The step plays in a goroutine the source owns (the player): it runs the
// step's blocks in order, stops at a prediction until Exec answers it, and
// at a task waits until the learner's key or typed command makes the task's
// conditions hold, then plays on. Lesson commands run one at a time; one
// that must move the runner stops the player first. Close stops it.
type LessonSource struct {
	lab  *LabSource
	run  *lessons.Runner
	les  *lessons.Lesson
	opts LessonOptions

	base   context.Context
	cancel context.CancelFunc

	// cmd is held by a lesson command for its whole run: they take turns.
	// The runner is driven by the command holding cmd while no player
	// runs, or by the player.
	cmd sync.Mutex

	mu      sync.Mutex
	st      lessonState
	player  *player
	changed chan struct{} // closed and replaced on every change of st
	closed  bool

	ch   chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// player is the goroutine playing the step.
type player struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// lessonState is what the pane shows, kept by the source as the step
// plays.
type lessonState struct {
	step   int // the step meant to be open, from 0
	status LessonStatus
	blocks []LessonBlock
	notice string
	// what the learner ran during this step, for "what happened"
	learner []string
	// the pending task as the lesson wrote it, while one waits
	task *lessons.Task
	// offTrack says what the learner ran that the task does not ask for
	offTrack string
	// tried: the learner ran what the task asks; the lab is getting there
	tried bool
	// preview is the step's opening text, shown while the lab replays the
	// lesson up to the step, so the learner can read on meanwhile
	preview string
}

// open starts the state of a step afresh.
func (st *lessonState) open(step int, status LessonStatus, notice string) {
	*st = lessonState{step: step, status: status, notice: notice}
}

// NewLessonSource plays les on the lab of a LabSource it makes: the
// runner replays the lesson on that lab (Goto gives it a fresh cluster).
// Nothing plays until a lesson command: the screen opens it with
// "lesson goto N". Close it before closing the lab.
func NewLessonSource(les *lessons.Lesson, labSrc *LabSource, opts LessonOptions) (*LessonSource, error) {
	run, err := lessons.NewRunner(les, lessons.Options{Lab: labSrc.Lab(), Progress: opts.Progress})
	if err != nil {
		return nil, err
	}
	s := &LessonSource{
		lab:     labSrc,
		run:     run,
		les:     les,
		opts:    opts,
		changed: make(chan struct{}),
		ch:      make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	s.base, s.cancel = context.WithCancel(context.Background())
	s.st.status = LessonStarting
	go s.forward()
	return s, nil
}

// StartStep is the step to open a lesson at: where the learner left it
// (from 1), or 1.
func StartStep(les *lessons.Lesson, store *lessons.Store) int {
	if store == nil {
		return 1
	}
	lp, err := store.Lesson(les.ID)
	if err != nil || lp.Finished && lp.Step == 0 {
		return 1
	}
	return min(max(lp.Step, 0), len(les.Steps)-1) + 1
}

// Lab returns the LabSource the lesson plays on.
func (s *LessonSource) Lab() *LabSource { return s.lab }

// forward passes the lab's signals on as the source's.
func (s *LessonSource) forward() {
	defer close(s.done)
	labCh := s.lab.Changes()
	for {
		select {
		case _, ok := <-labCh:
			if !ok {
				labCh = nil
				continue
			}
			s.signal()
		case <-s.stop:
			return
		}
	}
}

func (s *LessonSource) signal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signalLocked()
}

func (s *LessonSource) signalLocked() {
	if s.closed {
		return
	}
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

// Changes signals, coalesced, that the lab or the lesson moved.
func (s *LessonSource) Changes() <-chan struct{} { return s.ch }

// Close stops the player and any lesson command, and returns when they
// are gone. It does not close the LabSource or the lab.
func (s *LessonSource) Close() {
	s.once.Do(func() {
		s.cancel()
		s.stopPlayer()
		s.cmd.Lock() // a command that was running has seen the cancel and returned
		//nolint:staticcheck // an empty critical section: waiting is the point
		s.cmd.Unlock()
		close(s.stop)
		<-s.done
		s.mu.Lock()
		s.closed = true
		close(s.ch)
		s.mu.Unlock()
	})
}

// update changes the state under the lock and tells the screen.
func (s *LessonSource) update(fn func(st *lessonState)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(&s.st)
	close(s.changed)
	s.changed = make(chan struct{})
	s.signalLocked()
}

func (s *LessonSource) state() (lessonState, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st, s.changed
}

// View is the lab's state with the lesson's.
func (s *LessonSource) View() ViewState {
	v := s.lab.View()
	s.mu.Lock()
	v.Lesson = s.lessonView()
	if s.st.status == LessonTask && s.st.task != nil {
		if w := waiting(&v, s.st.task); w != "" {
			for i := len(v.Lesson.Blocks) - 1; i >= 0; i-- {
				if b := v.Lesson.Blocks[i]; b.Kind == BlockTask && !b.Task.Done {
					b.Task.Waiting, b.Task.Tried = w, s.st.tried
					break
				}
			}
		}
		if blocked := taskBlocked(&v, s.st.task); blocked != "" || s.st.offTrack != "" {
			how := "If the lab can no longer get there, :lesson reset starts the step again."
			if blocked != "" {
				how = ":lesson reset starts the step again."
			}
			v.Lesson.Notice = joinNotes(s.st.offTrack, blocked, how)
		}
	}
	s.mu.Unlock()
	return v
}

// lessonView copies the state into a Lesson that shares nothing with it.
func (s *LessonSource) lessonView() *Lesson {
	st := &s.st
	steps := len(s.les.Steps)
	ls := &Lesson{ID: s.les.ID, Title: s.les.Title, Step: min(st.step+1, steps), Steps: steps,
		Status: st.status, Notice: st.notice}
	if st.step < steps {
		ls.StepTitle = s.les.Steps[st.step].Title
	} else {
		ls.StepTitle = "Finished"
	}
	ls.Blocks = make([]LessonBlock, len(st.blocks))
	if st.status == LessonStarting && len(st.blocks) == 0 && st.preview != "" {
		ls.Blocks = []LessonBlock{{Kind: BlockText, Text: st.preview}}
	}
	for i, b := range st.blocks {
		c := LessonBlock{Kind: b.Kind, Text: b.Text}
		switch b.Kind {
		case BlockCommands:
			c.Commands = slices.Clone(b.Commands)
		case BlockTask:
			t := *b.Task
			c.Task = &t
			ls.Tasks = append(ls.Tasks, t)
		case BlockPrediction:
			p := *b.Prediction
			p.Choices = slices.Clone(p.Choices)
			c.Prediction = &p
			if ls.Prediction == nil || ls.Prediction.Chosen >= 0 {
				ls.Prediction = &p
			}
		case BlockExpect:
			c.Expectations = slices.Clone(b.Expectations)
			ls.Expectations = append(ls.Expectations, b.Expectations...)
		}
		ls.Blocks[i] = c
	}
	return ls
}

// Exec runs one line: a lesson command, or a lab command (the learner's
// key or typed line) passed to the lab.
func (s *LessonSource) Exec(ctx context.Context, line string) (string, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return s.lab.Exec(ctx, line)
	}
	switch f[0] {
	case "lesson":
		return s.lessonCommand(ctx, f[1:])
	case CmdPredict:
		if len(f) != 2 {
			return "", errors.New("predict takes one letter: predict b")
		}
		return s.predict(ctx, f[1])
	case "help":
		out, err := s.lab.Exec(ctx, line)
		if err == nil && len(f) == 1 {
			out += "\n\nThe lesson:\n" +
				"  lesson next      the next step (n), once this one played and held\n" +
				"  lesson prev      the step before (p): the lab re-runs the lesson up to it\n" +
				"  lesson reset     start this step again on a fresh cluster\n" +
				"  lesson goto N    start step N, re-running the lesson up to it\n" +
				"  predict a        answer the open question (a–d)"
		}
		return out, err
	}
	s.noteLearner(line)
	return s.lab.Exec(ctx, line)
}

// commandCtx is ctx, also ended when the source closes.
func (s *LessonSource) commandCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.base, cancel)
	return ctx, func() { stop(); cancel() }
}
