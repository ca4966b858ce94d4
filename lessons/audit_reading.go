package lessons

// Audit at reading pace: the lesson played as a screen plays it, with a
// person's pause at every question, task and step's end. A headless play
// answers at machine speed, so it cannot see what moves while someone
// reads: a question whose answer arrives on screen during the pause
// before it (an election runs on raft's own timers, whatever the lab
// clock does), or a task whose goal slips out of reach while its text is
// read.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/mqlab/mqlab/lab/command"
	"sync"
	"time"
)

// taskReach bounds, in wall time, how long a reading audit waits for a
// task's goal after it typed the task's commands, unless Options says.
const taskReach = 30 * time.Second

// readingAudit plays a lesson on a Player and keeps what it finds. The
// player's goroutine reports blocks through note; the audit's own loop
// answers, acts and moves on.
type readingAudit struct {
	p       *Player
	reading time.Duration
	reach   time.Duration // see taskReach

	mu     sync.Mutex
	found  []Finding
	blocks []Block
	asked  map[int]askedAt // revealing expect block → readings when its question was shown
	ask    int             // the open question's block, -1 when none
	task   *Task           // the open task, nil when none
	// done counts the tasks the player has marked done: a task that
	// follows another with only an expect between them opens before the
	// audit looks again, so the status alone cannot tell them apart.
	done int
}

func (a *readingAudit) add(line int, format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.found = append(a.found, Finding{Line: line, Text: fmt.Sprintf(format, args...)})
}

// auditReading plays les as Audit does, but on a Player as the screen
// plays it, holds included, pausing opts.Reading of wall time at every
// question (before its answer), task (before its commands) and step's end
// (before the next step). It reports with line numbers a question whose
// answer was on screen when it was asked, an expectation that did not
// hold, and a task whose goal is not met within taskReach of its
// commands. An expect block that held before its step began is --play's
// to find, at machine speed: at reading pace a machine slow to catch up
// while the clock stands still shows rates that a lesson cannot vouch for.
func auditReading(ctx context.Context, les *Lesson, opts Options) ([]Finding, error) {
	a := &readingAudit{reading: opts.Reading, reach: cmp.Or(opts.taskReach, taskReach), ask: -1}
	observe, t := transcribing(les, opts.transcript, a.note)
	p, err := NewPlayer(les, PlayerOptions{Timing: opts.Timing, Nodes: opts.Nodes, Sandbox: true, Observe: observe})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	defer t.start(p)()
	a.p = p
	if _, err := p.Goto(ctx, 0); err != nil {
		return a.found, err
	}
	for {
		st := p.State()
		var err error
		switch st.Status {
		case StatusPredict:
			err = a.answer(ctx)
		case StatusTask:
			err = a.doTask(ctx)
		case StatusStepDone, StatusFailed:
			for _, f := range st.Failed {
				a.add(f.Line, "the expectation did not hold when played at reading pace: %s (%s)", f.Cond, f.Observed)
			}
			if err = a.pause(ctx); err == nil {
				_, err = p.Next(ctx)
			}
		case StatusBroken:
			return a.found, fmt.Errorf("step %d: %v", st.Step+1, st.Err)
		case StatusFinished:
			return a.found, nil
		default: // playing on its own: a task's goal being met
			err = a.settle(ctx)
		}
		if err != nil {
			return a.found, err
		}
	}
}

// pause is a person reading: wall time passes, the lab does whatever it
// does meanwhile.
func (a *readingAudit) pause(ctx context.Context) error {
	select {
	case <-time.After(a.reading):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// settle waits until the player stops playing on its own.
func (a *readingAudit) settle(ctx context.Context) error {
	for {
		switch a.p.State().Status {
		case StatusPlaying, StatusStarting:
		default:
			return nil
		}
		select {
		case <-a.p.Changes():
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// answer reads what the question's revealing block reads once the
// question has been read, then answers it.
func (a *readingAudit) answer(ctx context.Context) error {
	if err := a.pause(ctx); err != nil {
		return err
	}
	a.mu.Lock()
	ask, blocks := a.ask, a.blocks
	a.mu.Unlock()
	said := "a"
	if ask >= 0 && ask < len(blocks) {
		pr := blocks[ask].Predict
		if pr != nil && pr.Number != nil {
			said = FormatNumber(pr.Number.Value)
		}
		if i := nextExpect(blocks, ask); i >= 0 {
			rs := readNow(ctx, a.p.run, blocks[i].Expects)
			a.mu.Lock()
			a.asked[i] = askedAt{line: pr.Line, readings: rs}
			a.mu.Unlock()
		}
	}
	_, err := a.p.Exec(ctx, CmdPredict+" "+said)
	return err
}

// doTask types the open task's commands once it has been read, and waits
// for its goal.
func (a *readingAudit) doTask(ctx context.Context) error {
	if err := a.pause(ctx); err != nil {
		return err
	}
	a.mu.Lock()
	task, done := a.task, a.done
	a.mu.Unlock()
	if task == nil || a.p.State().Status != StatusTask {
		return nil
	}
	for _, d := range task.Do {
		line, _ := a.p.run.recall(d)
		if _, err := a.p.ExecCommand(ctx, line.Cmd); err != nil {
			return fmt.Errorf("line %d: %s: %w", d.Num, d.Text, err)
		}
	}
	if task.Decide != "" && !endsWithResume(task.Do) {
		// The choice is complete: say so, as a learner presses n (a
		// resume typed last has said so already).
		if _, err := a.p.Next(ctx); err != nil {
			return fmt.Errorf("line %d: n after the decision's commands: %w", task.Line, err)
		}
	}
	deadline := time.Now().Add(a.reach)
	for {
		a.mu.Lock()
		finished := a.done > done
		a.mu.Unlock()
		st := a.p.State()
		if finished || st.Status != StatusTask {
			return nil
		}
		if time.Now().After(deadline) {
			waiting := "its goal"
			if t := lastOpenTask(st.Blocks); t != nil && t.Waiting != "" {
				waiting = t.Waiting
			}
			a.add(task.Line, "at reading pace the task's goal was not met within %v of its commands: %s", a.reach, waiting)
			return errors.New("a task could not be done: the rest of the lesson cannot play")
		}
		select {
		case <-a.p.Changes():
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// endsWithResume says whether a task's lines start the clock last.
func endsWithResume(do []command.Line) bool {
	if len(do) == 0 {
		return false
	}
	_, ok := do[len(do)-1].Cmd.(command.Resume)
	return ok
}

// note hears of the player's steps and blocks, on the goroutine that
// plays them: it notes the open question and task, and compares each
// revealing expect block with what it read when its question was asked.
func (a *readingAudit) note(n Note) {
	switch n.Kind {
	case NoteStep:
		a.mu.Lock()
		a.blocks, a.ask, a.task = a.p.les.Steps[n.Step].Blocks, -1, nil
		a.asked = map[int]askedAt{}
		a.mu.Unlock()
	case NoteTaskDone:
		a.mu.Lock()
		a.done++
		a.mu.Unlock()
	case NoteBlock:
		ev := n.Event
		a.mu.Lock()
		defer a.mu.Unlock()
		switch ev.Kind {
		case KindPredict:
			a.ask = ev.Block
		case KindTask:
			a.task = ev.Task
		case KindExpect:
			q, asked := a.asked[ev.Block]
			if !asked {
				return
			}
			b := a.blocks[ev.Block]
			if now := readNow(a.p.base, a.p.run, b.Expects); sameReadings(q.readings, now) {
				a.found = append(a.found, Finding{Line: q.line, Text: fmt.Sprintf("at reading pace the answer was on screen when the question was asked: the expect block at line %d read the same then (%s)", b.Line, shownOf(q.readings))})
			}
		}
	}
}
