package lessons

// The player's goroutine: it plays the step through the runner, turning
// each block into the step as it has played, and stops at a prediction or
// waits at a task.

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/mqlab/mqlab/lab/command"
)

// settle waits while the step is playing on its own (the goroutine runs
// the blocks after a task), so a command sees where it stopped.
func (p *Player) settle(ctx context.Context) (playerState, error) {
	for {
		st, changed := p.state()
		if st.status != StatusPlaying {
			return st, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return st, fmt.Errorf("the step is still running its commands: %w", ctx.Err())
		}
	}
}

// playOn starts the goroutine and waits until the step stops for the
// learner, ends or breaks. When ctx ends first (esc), the step stops part-
// way.
func (p *Player) playOn(ctx context.Context) error {
	bg := p.startPlaying()
	for {
		st, changed := p.state()
		if st.status != StatusPlaying {
			return nil
		}
		select {
		case <-changed:
		case <-bg.done:
			return nil
		case <-ctx.Done():
			p.stopPlaying()
			err := stoppedError{ctx.Err()}
			p.update(func(st *playerState) {
				st.status = StatusBroken
				st.err = err
				st.notice = "The step was stopped part-way through its commands. :lesson reset starts it again."
			})
			return err
		}
	}
}

// stoppedError is a step the learner stopped (esc) while its commands
// ran: it says so in their words, and unwraps to the context's error.
type stoppedError struct{ cause error }

func (e stoppedError) Error() string {
	if errors.Is(e.cause, context.DeadlineExceeded) {
		return "stopped part-way: it ran out of time"
	}
	return "stopped part-way: you pressed esc"
}

func (e stoppedError) Unwrap() error { return e.cause }

func (p *Player) startPlaying() *playing {
	ctx, cancel := context.WithCancel(p.base)
	bg := &playing{cancel: cancel, done: make(chan struct{})}
	p.mu.Lock()
	p.bg = bg
	p.mu.Unlock()
	go func() {
		defer close(bg.done)
		defer cancel()
		p.play(ctx)
	}()
	return bg
}

// stopPlaying stops the goroutine, if one runs, and waits for it: a task
// it waited for stays pending.
func (p *Player) stopPlaying() {
	p.mu.Lock()
	bg := p.bg
	p.bg = nil
	p.mu.Unlock()
	if bg != nil {
		bg.cancel()
		<-bg.done
	}
}

// play runs the step's blocks until one waits for an answer, the step
// ends, or something fails. At a task it waits for the learner (or, with
// Auto, does it), then goes on.
func (p *Player) play(ctx context.Context) {
	for {
		ev, err := p.run.Next(ctx)
		switch {
		case errors.Is(err, ErrTaskPending):
			if !p.await(ctx, ev) {
				return
			}
			continue
		case errors.Is(err, ErrPredictionPending):
			p.update(func(st *playerState) { st.status = StatusPredict })
			return
		}
		if ev.Kind == KindLab && len(ev.Commands) > 0 {
			p.add(Played{Kind: KindLab, Commands: ev.Commands})
		}
		if err != nil {
			if ctx.Err() != nil {
				return // stopped: whoever stopped it says what happens next
			}
			p.broke(ev, err, "A command of this step could not run: "+err.Error()+".")
			return
		}
		switch ev.Kind {
		case KindText:
			if strings.TrimSpace(ev.Text) != "" {
				p.add(Played{Kind: KindText, Text: ev.Text})
			}
		case KindLab:
		case KindExpect:
			p.add(Played{Kind: KindExpect, Expects: ev.Expects})
		case KindPredict:
			p.holdTime(ctx, holdQuestion) // before the question shows: the world stays as it was asked about
			pp := &PlayedPrediction{Question: ev.Text, Chosen: -1, Answer: -1, Numeric: ev.Predict.Number != nil, order: p.choiceOrder(ev.Predict, len(ev.Choices))}
			for _, i := range pp.order {
				pp.Choices = append(pp.Choices, ev.Choices[i])
			}
			p.update(func(st *playerState) {
				st.blocks = append(st.blocks, Played{Kind: KindPredict, Prediction: pp})
				if !p.opts.Auto { // with Auto the step plays on: a command waiting for it waits on
					st.status = StatusPredict
				}
			})
			p.observe(Note{Kind: NoteBlock, Step: ev.Step, Event: ev})
			if !p.opts.Auto {
				return
			}
			rv, err := p.run.Answer(ctx, -1)
			if err != nil {
				p.broke(ev, err, err.Error())
				return
			}
			p.revealed(-1, rv)
		case KindTask:
			if ev.Task.Decide != "" {
				// A choice may take several commands: time stands still
				// until the learner says it is complete.
				p.holdTime(ctx, holdDecision)
			} else {
				p.holdTime(ctx, holdTask) // until the learner acts: what the task needs waits for them
			}
			p.update(func(st *playerState) {
				st.blocks = append(st.blocks, Played{Kind: KindTask, Task: &PlayedTask{Text: ev.Text, Hint: ev.Task.Hint(), Decide: ev.Task.Decide}})
				st.task = ev.Task
				st.taskFrom, st.decided = len(st.learner), false
				st.outsideFrom = p.Lab().OutsideActions()
			})
			p.observe(Note{Kind: NoteBlock, Step: ev.Step, Event: ev})
			if !p.await(ctx, ev) {
				return
			}
		case KindStepEnd:
			p.holdTime(ctx, holdReading) // while the step is read
			failed := p.run.Failed()
			p.update(func(st *playerState) {
				st.status = StatusStepDone
				st.failed = failed
				if len(failed) > 0 {
					st.status = StatusFailed
					var b strings.Builder
					for i, f := range failed {
						if i > 0 {
							b.WriteString("; ")
						}
						b.WriteString(f.Cond + " (" + f.Observed + ")")
					}
					st.notice = whatHappened(st, "This step did not go as the lesson expects: "+b.String()+" does not hold.")
				}
			})
			return
		}
		if ev.Kind != KindTask && ev.Kind != KindPredict {
			p.observe(Note{Kind: NoteBlock, Step: ev.Step, Event: ev})
		}
	}
}

// await waits for the pending task (with Auto, does it) and marks it
// done; false when the wait ended without it.
func (p *Player) await(ctx context.Context, ev Event) bool {
	since := 0
	if !p.opts.Auto { // with Auto the step plays on: a command waiting for it waits on
		p.update(func(st *playerState) { st.status, since = StatusTask, len(st.learner) })
	}
	var err error
	done := Event{Step: ev.Step, Block: ev.Block, Kind: KindTask, Task: ev.Task}
	if p.opts.Auto {
		done, err = p.run.DoTask(ctx)
	} else {
		// A task is the learner's to do: it is done only once they have
		// acted, even when its goal held before it was set. Acting may be
		// their own client's request in another terminal.
		if !p.awaitAction(ctx, since, p.Lab().OutsideActions()) {
			return false
		}
		if ev.Task.Decide != "" {
			if st, _ := p.state(); len(st.learner) == since {
				// Their own client acted before any command of theirs
				// here: the choice is in its settings, and it runs
				// already. The lab plays it out, rather than stand still
				// under a client that works in wall time.
				p.update(func(st *playerState) { st.decided = true })
			} else if !p.awaitDecided(ctx) {
				return false
			}
			// The choice is made: the lab plays it out, also when the
			// lesson had stopped the clock itself before the decision (its
			// goal needs lab time, and n is the learner's word to go on).
			p.releaseTime(ctx)
			if _, paused := p.Lab().Clock().Speed(); paused {
				p.Lab().ExecCommand(ctx, command.Resume{})
			}
		}
		err = p.run.AwaitTask(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return false // stopped: the task stays pending
		}
		p.broke(done, err, "This task can no longer be done here: "+err.Error()+".")
		return false
	}
	p.update(func(st *playerState) {
		if t := lastOpenTask(st.blocks); t != nil {
			t.Done = true // State hands out copies: this one is the player's own
		}
		st.task, st.notice, st.offTrack, st.status = nil, "", "", StatusPlaying
	})
	p.observe(Note{Kind: NoteTaskDone, Step: ev.Step, Event: done})
	return true
}

// broke marks the step broken with the reason the learner reads.
func (p *Player) broke(ev Event, err error, what string) {
	p.update(func(st *playerState) {
		st.status = StatusBroken
		st.err = err
		st.notice = whatHappened(st, what)
	})
	p.observe(Note{Kind: NoteBroken, Step: ev.Step, Event: ev, Err: err})
}

// holdTime pauses lab time for why (see hold), unless the play is
// headless or the clock is stopped already (by the lesson's own pause or
// the learner's): loads, clients and timers that follow lab time stop,
// so nothing happens that the screen has not asked about or shown yet. A
// hold already in place takes the new reason. A decision holds a stopped
// clock too, without owning its pause: the commands of the choice wait
// for the learner's word whoever stopped it, and the clock stays stopped
// once the choice is made.
func (p *Player) holdTime(ctx context.Context, why hold) {
	if p.opts.Auto {
		return
	}
	if st, _ := p.state(); st.held != "" {
		p.update(func(st *playerState) { st.held = why })
		return
	}
	if _, paused := p.Lab().Clock().Speed(); paused {
		if why == holdDecision {
			p.update(func(st *playerState) { st.held, st.paused = why, false })
		}
		return
	}
	if _, err := p.Lab().ExecCommand(ctx, command.Pause{}); err == nil {
		p.update(func(st *playerState) { st.held, st.paused = why, true })
	}
}

// releaseTime lets go of the hold, and lets lab time run again if
// holdTime stopped it.
func (p *Player) releaseTime(ctx context.Context) {
	st, _ := p.state()
	if st.held == "" {
		return
	}
	p.update(func(st *playerState) { st.held, st.paused = "", false })
	if st.paused {
		p.Lab().ExecCommand(ctx, command.Resume{})
	}
}

// awaitDecided waits until the learner says their choice for the open
// decision task is complete (Next); false when ctx ended first.
func (p *Player) awaitDecided(ctx context.Context) bool {
	for {
		st, changed := p.state()
		if st.decided {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// actedOnHold lets lab time run before a learner's command that changes
// the lab, while the player holds it for a task or for reading: the
// learner has acted, and the lab goes on from where they read it. Their
// own pause or resume makes the clock theirs. Commands that only look
// leave the hold as it is, and so does anything while a question is open.
func (p *Player) actedOnHold(ctx context.Context, cmd command.Command) {
	st, _ := p.state()
	if st.held == "" || st.held == holdQuestion {
		return
	}
	if st.held == holdDecision {
		if _, ok := cmd.(command.Resume); ok {
			p.update(func(st *playerState) { st.held, st.paused = "", false }) // the clock is theirs from here
		}
		return // a choice is made of several commands: time waits for n
	}
	switch cmd.(type) {
	case command.Pause, command.Resume:
		p.update(func(st *playerState) { st.held, st.paused = "", false })
	default:
		if !command.ReadOnly(cmd) {
			p.releaseTime(ctx)
		}
	}
}

// revealed records the answer to the open question.
func (p *Player) revealed(choice int, rv Reveal) {
	p.update(func(st *playerState) {
		for i := len(st.blocks) - 1; i >= 0; i-- {
			if b := &st.blocks[i]; b.Kind == KindPredict {
				pp := b.Prediction
				pp.Chosen, pp.Why = choice, rv.Why
				if pp.Numeric {
					pp.Answer, pp.Right, pp.Correct, pp.Number = 0, rv.Answer, rv.Correct, rv.Predict.Number
					if rv.Number != nil {
						pp.Given = FormatNumber(*rv.Number)
					}
				} else {
					pp.Answer, pp.Correct = pp.shown(rv.Predict.Answer), rv.Correct
				}
				break
			}
		}
		st.status = StatusPlaying
	})
	p.observe(Note{Kind: NoteReveal, Step: p.stepNow(), Reveal: rv})
}

func (p *Player) stepNow() int {
	st, _ := p.state()
	return st.step
}

func (p *Player) add(b Played) {
	p.update(func(st *playerState) { st.blocks = append(st.blocks, b) })
}

// whatHappened adds to a failure what the learner did during the step,
// and the way back.
func whatHappened(st *playerState, what string) string {
	var b strings.Builder
	b.WriteString(what)
	if len(st.learner) > 0 {
		b.WriteString(" During this step you ran: " + strings.Join(st.learner, ", ") + ".")
	}
	b.WriteString(" :lesson reset starts the step again on a fresh cluster.")
	return b.String()
}

// choiceOrder is the order a prediction's n choices are shown in: the
// file's for a run without a learner (headless, tests), else a shuffle
// seeded by the learner, the lesson and the question, so the same learner
// sees the same order each time and the right answer's place in the file
// tells nobody anything.
func (p *Player) choiceOrder(pr *Predict, n int) []int {
	if learner := p.learnerName(); learner != "" && pr != nil && n > 1 {
		return ShownOrder(learner, p.les.ID, pr.ID, n)
	}
	return identity(n)
}

// learnerName is the progress store's learner, read once; "" without a
// store, or when it cannot be read.
func (p *Player) learnerName() string {
	if p.opts.Progress == nil {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.learner == "" {
		p.learner, _ = p.opts.Progress.Learner()
	}
	return p.learner
}

// ShownOrder is the order a learner sees a prediction's n choices in:
// shown choice i is the file's choice ShownOrder(…)[i].
func ShownOrder(learner, lesson, predict string, n int) []int {
	order := identity(n)
	h := fnv.New64a()
	h.Write([]byte(learner + "\x00" + lesson + "\x00" + predict))
	rnd := rand.New(rand.NewPCG(h.Sum64(), 0x63686f696365))
	rnd.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	return order
}

func identity(n int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	return order
}

// shown is where the file's choice i is shown.
func (pp *PlayedPrediction) shown(i int) int {
	for k, o := range pp.order {
		if o == i {
			return k
		}
	}
	return i
}

// file is the file's index of shown choice i.
func (pp *PlayedPrediction) file(i int) int {
	if i < len(pp.order) {
		return pp.order[i]
	}
	return i
}

// awaitAction waits until the learner has run a command that changes the
// lab since they had run since of them this step, or until their own
// clients have done more than outside (Lab.OutsideActions); false when
// ctx ended.
func (p *Player) awaitAction(ctx context.Context, since, outside int) bool {
	t := time.NewTicker(outsideEvery)
	defer t.Stop()
	for {
		p.mu.Lock()
		n, ch := len(p.st.learner), p.changed
		p.mu.Unlock()
		if n > since {
			return true
		}
		if p.Lab().OutsideActions() > outside {
			// Their client reached the lab: it goes on from where they
			// read it, as after a command of theirs.
			if st, _ := p.state(); st.held == holdTask || st.held == holdReading {
				p.releaseTime(ctx)
			}
			return true
		}
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			return false
		}
	}
}

// outsideEvery is how often a waiting task looks for the requests of the
// learner's own clients (see Lab.OutsideActions).
const outsideEvery = 100 * time.Millisecond
