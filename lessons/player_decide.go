package lessons

// The learner's part in a task: a hint on request, and a decision's
// choice, whose commands wait while the lab holds still for it until the
// learner says it is complete (n, or a resume after them), then run in
// order.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mqlab/mqlab/lab/command"
)

// choosing says whether cmd is part of the learner's choice for the open
// decision while the lab holds still for it: a command that changes the
// lab waits until the choice is complete. Run at once, a produce or a
// load would write while the screen says the lab waits, and the first
// commands of a choice made of several would play out before the rest.
// Commands that only look, and the clock's, run at once.
func (p *Player) choosing(cmd command.Command) bool {
	if command.ReadOnly(cmd) || command.Clock(cmd) {
		return false
	}
	st, _ := p.state()
	return st.held == holdDecision && st.status == StatusTask && st.task != nil && st.task.Decide != "" && !st.decided
}

// pausedToDecide holds the open decision again when the learner stops
// the clock during it, after their resume had let the hold go: while a
// decision waits and the clock stands still, the commands of the choice
// wait for n, whoever stopped it (the player, the lesson or the learner).
// Run at once, they would play out under a header that says the clock is
// stopped.
func (p *Player) pausedToDecide(cmd command.Command) {
	if _, ok := cmd.(command.Pause); !ok || p.opts.Auto {
		return
	}
	if _, paused := p.Lab().Clock().Speed(); !paused {
		return
	}
	p.update(func(st *playerState) {
		if st.held == "" && st.status == StatusTask && st.task != nil && st.task.Decide != "" && !st.decided {
			st.held, st.paused = holdDecision, false
		}
	})
}

// completeChoice runs the commands of the learner's choice and takes it
// as complete: the player's goroutine then lets the lab play it out. A
// command added while the others ran runs too, before the choice counts
// as complete.
func (p *Player) completeChoice(ctx context.Context) error {
	for {
		if err := p.runChoice(ctx); err != nil {
			return err
		}
		done := false
		p.update(func(st *playerState) {
			if len(st.chosen) == 0 && st.status == StatusTask && st.task != nil && st.task.Decide != "" {
				st.decided, done = true, true
			}
		})
		if done {
			return nil
		}
		if st, _ := p.state(); st.status != StatusTask {
			return nil // the task is no longer open: nothing to decide
		}
	}
}

// addToChoice keeps cmd for the open decision until the learner says the
// choice is complete; it counts as their acting on the task meanwhile.
func (p *Player) addToChoice(ctx context.Context, cmd command.Command) (string, error) {
	p.note(ctx, cmd, "chose")
	n := 0
	p.update(func(st *playerState) {
		st.chosen = append(slices.Clip(st.chosen), cmd)
		n = len(st.chosen)
		if t := lastOpenTask(st.blocks); t != nil {
			t.Chosen = append(slices.Clip(t.Chosen), cmd.String())
		}
	})
	if n > 1 {
		return fmt.Sprintf("waits with the %d before it until your choice is complete: n (or space) runs them", n-1), nil
	}
	return "waits until your choice is complete: n (or space) runs it", nil
}

// runChoice runs the commands of the learner's choice, in order, when
// they say it is complete. One that cannot run is named and dropped; the
// ones after it wait on, for n again.
func (p *Player) runChoice(ctx context.Context) error {
	for {
		var cmd command.Command
		p.update(func(st *playerState) {
			if len(st.chosen) == 0 {
				return
			}
			cmd, st.chosen = st.chosen[0], slices.Clone(st.chosen[1:])
			if t := lastOpenTask(st.blocks); t != nil && len(t.Chosen) > 0 {
				t.Chosen = slices.Clone(t.Chosen[1:])
			}
		})
		if cmd == nil {
			return nil
		}
		if _, err := p.execLab(ctx, cmd); err != nil {
			rest := ""
			if st, _ := p.state(); len(st.chosen) > 0 {
				rest = "; the rest of your choice still waits"
			}
			return fmt.Errorf("%s could not run, so your choice is not complete: %w%s", cmd.String(), err, rest)
		}
	}
}

// resumeDecides takes a learner's resume, after the commands of their
// choice for an open decision task, as their word that it is complete,
// as n is: the commands of the choice run, and the clock they start
// plays it out.
func (p *Player) resumeDecides(ctx context.Context, cmd command.Command) error {
	if _, ok := cmd.(command.Resume); !ok {
		return nil
	}
	if st, _ := p.state(); st.status != StatusTask || st.task == nil || st.task.Decide == "" || len(st.learner) <= st.taskFrom {
		return nil
	}
	return p.completeChoice(ctx)
}

// decided takes the learner's word that their choice for the open
// decision task is complete, once they have made one: the lab then plays
// it out and the lesson grades what comes of it.
func (p *Player) decided(ctx context.Context, st playerState) (string, error) {
	if !p.chose(st) {
		return "", fmt.Errorf("first your choice: %s — then n (t shows one way)", st.task.Decide)
	}
	if err := p.completeChoice(ctx); err != nil {
		return "", err
	}
	return "your choice is in: the lab plays it out", nil
}

// chose says whether the learner has acted since the open task opened:
// a lab command of theirs, or an outside client's action.
func (p *Player) chose(st playerState) bool {
	return len(st.learner) > st.taskFrom || p.Lab().OutsideActions() > st.outsideFrom
}

// ShowHint shows one way to meet the open task's goal: the task says what
// to achieve, and its commands stay hidden until the learner asks.
func (p *Player) ShowHint() (string, error) {
	var hint string
	p.update(func(st *playerState) {
		if t := lastOpenTask(st.blocks); t != nil && st.status == StatusTask {
			t.HintShown, hint = true, t.Hint
		}
	})
	if hint == "" {
		return "", errors.New("no task is open now: a hint is for a task's goal")
	}
	return "hint: " + hint, nil
}
