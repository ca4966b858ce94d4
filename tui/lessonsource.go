package tui

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mqlab/mqlab/lab/command"
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

// readOnlyCommands change nothing in the cluster, and repairs put it
// back: a learner may run them at any time without leaving the lesson's
// path.
var (
	readOnlyCommands = []string{"help", "check", "expect", "wait", "sql", "pause", "resume", "speed"}
	repairCommands   = []string{"restart", "heal"}
)

// noteLearner remembers a command the learner ran during the step and,
// while a task waits, says so when it is not what the task asks for: the
// lab may no longer get where the task waits for it to go.
func (s *LessonSource) noteLearner(line string) {
	cmd, err := command.Parse(line)
	if err != nil || slices.Contains(readOnlyCommands, cmd.Name()) {
		return
	}
	st, _ := s.state()
	if st.status == LessonStarting {
		return
	}
	var off string
	tried := false
	if st.status == LessonTask && st.task != nil {
		tried = s.onTrack(cmd, st.task)
		if !tried && !slices.Contains(repairCommands, cmd.Name()) {
			off = fmt.Sprintf("You ran %s; this task asks you to %s.", cmd.String(), taskHow(st.task))
		}
	}
	s.update(func(st *lessonState) {
		st.learner = append(st.learner, cmd.String())
		if st.status == LessonTask {
			st.offTrack = off
			st.tried = st.tried || tried
		}
	})
}

// taskHow is what a task asks, in words: "press h (or type heal)".
func taskHow(t *lessons.Task) string {
	var cmds []string
	for _, d := range t.Do {
		cmds = append(cmds, d.Cmd.String())
	}
	typed := "type " + strings.Join(cmds, ", then ")
	switch {
	case t.Key == "":
		return typed
	case !strings.Contains(t.Key, " "):
		return "press " + t.Key + " (or " + typed + ")"
	}
	return t.Key + " (or " + typed + ")"
}

// taskBlocked says when a task waits on a node that is down — a replica's
// value, hwm(orders/0@n1), or state(n1) == up — since the wait cannot hold
// until the node runs again; "" otherwise.
func taskBlocked(v *ViewState, t *lessons.Task) string {
	down := map[string]bool{}
	for _, n := range v.Nodes {
		down[n.ID] = !n.Up
	}
	for _, w := range t.Wait {
		c, ok := w.Cmd.(command.Wait)
		if !ok {
			continue
		}
		for _, e := range []command.Expr{c.Cond.Left, c.Cond.Right} {
			val := e.Value
			node := val.Node
			if val.Func == "state" {
				if words := c.Cond.String(); strings.Contains(words, "down") || strings.Contains(words, "crashed") {
					continue // the task waits for it to go down
				}
				node = val.Arg
			}
			if node != "" && down[node] && !restarts(t, node) {
				return fmt.Sprintf("%s is down, and this task waits for %s, which needs %s running: "+
					"select %s and press r.", node, c.Cond.String(), node, node)
			}
		}
	}
	return ""
}

// restarts says whether a task's own commands restart a node: then its
// being down is the task, not a trap.
func restarts(t *lessons.Task, node string) bool {
	for _, d := range t.Do {
		if r, ok := d.Cmd.(command.Restart); ok && r.Node.Kind == command.RefNode && r.Node.Node == node {
			return true
		}
	}
	return false
}

// waiting is the first of a task's conditions that does not hold yet, with
// the values the screen shows now: "hwm(orders/0@n1) == 2000 (now 1500)".
// The runner's wait decides; this only says what it waits for.
func waiting(v *ViewState, t *lessons.Task) string {
	for _, w := range t.Wait {
		c, ok := w.Cmd.(command.Wait)
		if !ok {
			continue
		}
		l, lok := viewValue(v, c.Cond.Left)
		r, rok := viewValue(v, c.Cond.Right)
		if !lok || !rok {
			return c.Cond.String()
		}
		if command.Holds(c.Cond.Op, l, r) {
			continue
		}
		var now []string
		for _, side := range []struct {
			e   command.Expr
			val any
		}{{c.Cond.Left, l}, {c.Cond.Right, r}} {
			if side.e.Value.Kind == command.ValLab {
				now = append(now, valueWord(side.val))
			}
		}
		return c.Cond.String() + " (now " + strings.Join(now, " and ") + ")"
	}
	return ""
}

func valueWord(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// viewValue reads one side of a condition from the view, for the values
// a task's wait names most: a number or word, leader, epoch, hwm, leo and
// logstart of a partition or one of its replicas, and a node's state.
func viewValue(v *ViewState, e command.Expr) (any, bool) {
	val := e.Value
	switch val.Kind {
	case command.ValNumber:
		return val.Num + e.Offset, true
	case command.ValWord:
		return val.Word, true
	case command.ValLab:
	default:
		return nil, false
	}
	if val.Func == "state" {
		for _, n := range v.Nodes {
			if n.ID == val.Arg {
				if n.Up {
					return "up", true
				}
				return "down", true
			}
		}
		return nil, false
	}
	if !val.Target.IsPartition {
		return nil, false
	}
	var p *Partition
	for i := range v.Partitions {
		if v.Partitions[i].Name == val.Target.String() {
			p = &v.Partitions[i]
		}
	}
	if p == nil {
		return nil, false
	}
	if val.Func == "leader" {
		if p.Leader == "" {
			return "none", true
		}
		return p.Leader, true
	}
	// The replica asked for, or the leader's (the highest epoch's without one).
	var rep *Replica
	for i := range p.Replicas {
		r := &p.Replicas[i]
		switch {
		case val.Node != "":
			if r.Node == val.Node {
				rep = r
			}
		case p.Leader != "":
			if r.Node == p.Leader {
				rep = r
			}
		case r.Role != "down" && (rep == nil || r.Epoch > rep.Epoch):
			rep = r
		}
	}
	if rep == nil || rep.Role == "down" { // a stopped replica has no value to show
		return nil, false
	}
	var n float64
	switch val.Func {
	case "epoch":
		n = float64(rep.Epoch)
		if val.Node == "" {
			n = float64(p.Epoch)
		}
	case "hwm":
		n = float64(rep.HWM)
	case "leo":
		n = float64(rep.LEO)
	case "logstart":
		n = float64(rep.LogStart)
	default:
		return nil, false
	}
	return n + e.Offset, true
}

// joinNotes joins the notes that are not empty.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return strings.Join(out, " ")
}

// onTrack says whether cmd is one of the task's commands: the same verb,
// on the same node once leader(…) and follower(…) are resolved.
func (s *LessonSource) onTrack(cmd command.Command, t *lessons.Task) bool {
	node, hasNode := cmdNode(cmd)
	var v *ViewState
	for _, d := range t.Do {
		if d.Cmd.Name() != cmd.Name() {
			continue
		}
		want, ok := cmdNode(d.Cmd)
		if !ok || !hasNode {
			return true
		}
		if v == nil {
			vs := s.lab.View()
			v = &vs
		}
		if resolveNode(v, node) == resolveNode(v, want) {
			return true
		}
	}
	return false
}

func cmdNode(c command.Command) (command.NodeRef, bool) {
	switch c := c.(type) {
	case command.Kill:
		return c.Node, true
	case command.Restart:
		return c.Node, true
	case command.Isolate:
		return c.Node, true
	case command.Slow:
		return c.Node, true
	case command.Elect:
		return c.Node, true
	}
	return command.NodeRef{}, false
}

// resolveNode names the node a reference means now, as the lab would.
func resolveNode(v *ViewState, ref command.NodeRef) string {
	if ref.Kind == command.RefNode {
		return ref.Node
	}
	name := ref.Of.String()
	for _, p := range v.Partitions {
		if p.Name != name {
			continue
		}
		if ref.Kind == command.RefLeader {
			return p.Leader
		}
		var fs []string
		for _, r := range p.Replicas {
			if r.Role == "follower" {
				fs = append(fs, r.Node)
			}
		}
		slices.Sort(fs)
		if len(fs) > 0 {
			return fs[0]
		}
	}
	for _, q := range v.Queues {
		if q.Name == name && ref.Kind == command.RefLeader {
			return q.Leader
		}
	}
	return ref.String()
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
