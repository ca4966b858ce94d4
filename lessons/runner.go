package lessons

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/command"
)

// Errors a Runner's caller branches on.
var (
	// ErrTaskPending: a task waits for DoTask or AwaitTask before the step
	// goes on.
	ErrTaskPending = errors.New("a task is waiting to be done")
	// ErrPredictionPending: a prediction waits for Answer before the
	// reveal.
	ErrPredictionPending = errors.New("a prediction is waiting for an answer")
	// ErrStepNotDone: NextStep was asked before the step's last block.
	ErrStepNotDone = errors.New("the step has blocks left to play")
	// ErrEnd: NextStep after the last step; the lesson is finished.
	ErrEnd = errors.New("the lesson is over")
	// ErrBroken: a command of the step failed; Goto (or ResetStep) starts
	// the step again on a fresh cluster.
	ErrBroken = errors.New("a command of this step failed; reset the step")
)

// Options configure a Runner.
type Options struct {
	// Timing is the raft timing preset of the lab the runner makes: "fast"
	// (the default) or "classroom".
	Timing string
	// Lab, when set, is the lab to play on (the TUI's); the runner does
	// not close it. Call Goto(ctx, step) first to start on a fresh cluster.
	Lab *lab.Lab
	// Nodes is the cluster size a reset starts with (default 3); a
	// lesson's own cluster command decides after that.
	Nodes int
	// Progress, when set, keeps the current step, the answers and whether
	// the lesson was finished. Nil keeps nothing (headless runs, tests).
	Progress *Store
	// Kafka, when set, puts the Kafka protocol on the lab's nodes.
	Kafka *command.KafkaListen
	// SQS, when set, puts Amazon SQS's API on the lab's nodes.
	SQS *command.SQSListen
	// FailFast ends a headless run with the first step whose expectation
	// failed, instead of playing the rest.
	FailFast bool
	// Alternate does each task that has also: lines their way (all of them,
	// in turn) instead of its do: lines, to show that way meets the goal too.
	Alternate bool
	// Reading makes Audit play as a screen does, holds included, and
	// wait this much wall time at every question, task and step's end
	// before it answers, acts or moves on, as a person reading would.
	Reading time.Duration
	// taskReach bounds, in wall time, how long a reading audit waits for
	// a task's goal after it typed the task's commands: taskReach when
	// zero (tests shorten it).
	taskReach time.Duration
	// transcript, when set, is where a reading audit writes the
	// transcript PlayHeadless would, as it plays (tests read it).
	transcript io.Writer
}

// Event is what one block did when Runner.Next played it.
type Event struct {
	Step  int // index in Lesson.Steps
	Block int // index in the step's Blocks; len(Blocks) for KindStepEnd
	Kind  Kind
	// Text is the narrative (KindText), the task's instruction (KindTask)
	// or the question (KindPredict), as Markdown with placeholders filled.
	Text     string
	Choices  []string        // KindPredict, placeholders filled
	Commands []CommandResult // KindLab; KindTask after DoTask: its do and wait lines
	Task     *Task
	Predict  *Predict
	Expects  []ExpectResult // KindExpect
}

// CommandResult is one command of a lab block or a task, and what it said.
type CommandResult struct {
	Line  int
	Text  string   // as written
	Lines []string // what the command said (lab.Result.Lines)
	Err   error    // nil, a failed expect (*lab.ExpectationError) or why it could not run
}

// ExpectResult is one expectation and what the lab showed.
type ExpectResult struct {
	Line     int
	Cond     string // as written
	Label    string
	Held     bool
	Observed string // the values read: "lost is 1"
}

func (e ExpectResult) String() string {
	mark := "✓"
	if !e.Held {
		mark = "✗"
	}
	s := fmt.Sprintf("%s %s (%s)", mark, e.Cond, e.Observed)
	if e.Label != "" {
		s += " — " + e.Label
	}
	return s
}

// Reveal is a prediction's answer, given after the learner chose.
type Reveal struct {
	Predict *Predict
	Choice  int      // what the learner chose; -1 when nobody answered (headless) or for a number
	Number  *float64 // a numeric prediction's answer, when one was given
	Correct bool     // Choice is the answer, or Number is within its tolerance
	Answer  string
	Why     string // placeholders filled
}

// FailedError lists the expectations that did not hold.
type FailedError struct {
	Failed []ExpectResult
}

func (e *FailedError) Error() string {
	lines := make([]string, len(e.Failed))
	for i, f := range e.Failed {
		lines[i] = fmt.Sprintf("line %d: %s", f.Line, f)
	}
	return fmt.Sprintf("%d expectation(s) failed:\n%s", len(e.Failed), strings.Join(lines, "\n"))
}

// CommandError is a command of the lesson that could not run (a wait that
// timed out, a node that was already down): the step cannot go on.
type CommandError struct {
	Line int
	Text string
	Err  error
}

func (e *CommandError) Error() string { return fmt.Sprintf("line %d: %s: %v", e.Line, e.Text, e.Err) }
func (e *CommandError) Unwrap() error { return e.Err }

// Runner plays a lesson on a lab, one block at a time, so that a screen can
// show each block as it happens and stop where the learner must act:
//
//	for {
//		ev, err := r.Next(ctx)      // plays text, lab, expect; stops at task and predict
//		switch ev.Kind {
//		case KindTask:    r.AwaitTask(ctx) (the learner acts) or r.DoTask(ctx) (headless)
//		case KindPredict: r.Answer(ctx, choice)
//		case KindStepEnd: r.NextStep(ctx, false)
//		}
//	}
//
// Goto moves to any step: the lab gets a fresh cluster and the lesson's
// commands up to that step run again, since a live cluster cannot be
// rewound. A Runner is driven from one goroutine at a time; its lab may be
// used from others meanwhile (a key that kills a node while AwaitTask waits).
type Runner struct {
	les   *Lesson
	opts  Options
	lab   *lab.Lab
	owned bool

	step, block int
	pending     *Block // a task or prediction waiting
	// passedFailing counts expectations that failed in steps the sandbox
	// let the learner pass: the score's expectations not held.
	passedFailing int
	kept          map[string]string
	failed        []ExpectResult // this step's expectations that did not hold
	broken        error
	used          bool // the lab has run something of this lesson
	progressErr   error
}

// NewRunner prepares a lesson at its first step. Without opts.Lab it
// starts a lab of its own, which Close closes.
func NewRunner(les *Lesson, opts Options) (*Runner, error) {
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	if opts.Timing == "" {
		opts.Timing = "fast"
	}
	r := &Runner{les: les, opts: opts, lab: opts.Lab, kept: map[string]string{}}
	if r.lab == nil {
		l, err := lab.New(lab.Options{Nodes: opts.Nodes, Timing: opts.Timing, Kafka: opts.Kafka, SQS: opts.SQS})
		if err != nil {
			return nil, err
		}
		r.lab, r.owned = l, true
	}
	return r, nil
}

// Close closes the lab if the runner made it.
func (r *Runner) Close() error {
	if r.owned {
		return r.lab.Close()
	}
	return nil
}

// Lesson returns the lesson played.
func (r *Runner) Lesson() *Lesson { return r.les }

// Lab returns the lab the lesson plays on. It stays the same lab for the
// runner's life; Goto gives it a fresh cluster.
func (r *Runner) Lab() *lab.Lab { return r.lab }

// Step returns the index of the current step.
func (r *Runner) Step() int { return r.step }

// Position returns the current step and the index of the next block to play.
func (r *Runner) Position() (step, block int) { return r.step, r.block }

// Failed returns the current step's expectations that did not hold.
func (r *Runner) Failed() []ExpectResult { return append([]ExpectResult(nil), r.failed...) }

// ProgressError returns the last error from the progress store, if any:
// progress is kept on a best-effort basis and never stops a lesson.
func (r *Runner) ProgressError() error { return r.progressErr }

// Next plays the current step's next block and says what it did. At a
// task or a prediction it returns the block without waiting: the caller
// then calls DoTask or AwaitTask, or Answer. After the step's last block
// it returns a KindStepEnd event (again on every call) until NextStep.
func (r *Runner) Next(ctx context.Context) (Event, error) {
	if r.broken != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrBroken, r.broken)
	}
	if r.pending != nil {
		if r.pending.Kind == KindTask {
			return Event{}, ErrTaskPending
		}
		return Event{}, ErrPredictionPending
	}
	steps := r.les.Steps
	if r.step >= len(steps) {
		return Event{}, ErrEnd
	}
	blocks := steps[r.step].Blocks
	ev := Event{Step: r.step, Block: r.block}
	if r.block >= len(blocks) {
		ev.Kind = KindStepEnd
		return ev, nil
	}
	b := &blocks[r.block]
	r.block++
	ev.Kind = b.Kind
	switch b.Kind {
	case KindText:
		ev.Text = r.Render(ctx, b.Text)
	case KindLab:
		res, err := r.run(ctx, b.Commands)
		ev.Commands = res
		if err != nil {
			r.broken = err
			return ev, err
		}
	case KindTask:
		ev.Task = b.Task
		ev.Text = r.Render(ctx, b.Task.Text)
		r.pending = b
	case KindPredict:
		ev.Predict = b.Predict
		ev.Text = r.Render(ctx, b.Predict.Question)
		for _, c := range b.Predict.Choices {
			ev.Choices = append(ev.Choices, r.Render(ctx, c))
		}
		r.pending = b
	case KindExpect:
		ev.Expects = r.expect(ctx, b.Expects)
	}
	return ev, nil
}

// run runs commands in order; an expect that does not hold is recorded
// and the block goes on; any other failure stops it.
func (r *Runner) run(ctx context.Context, lines []command.Line) ([]CommandResult, error) {
	r.used = true
	var out []CommandResult
	var stop error
	filled := make([]command.Line, len(lines))
	for i, l := range lines {
		filled[i], _ = r.recall(l)
	}
	r.lab.RunScript(ctx, filled, func(line command.Line, res lab.Result, err error) {
		out = append(out, CommandResult{Line: line.Num, Text: line.Text, Lines: res.Lines, Err: err})
		var ee *lab.ExpectationError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			r.failed = append(r.failed, ExpectResult{Line: line.Num, Cond: ee.Cond, Observed: ee.Got})
		default:
			stop = &CommandError{Line: line.Num, Text: line.Text, Err: err}
		}
	})
	if stop == nil && ctx.Err() != nil {
		stop = ctx.Err()
	}
	return out, stop
}

func (r *Runner) expect(ctx context.Context, exps []Expectation) []ExpectResult {
	r.used = true
	out := make([]ExpectResult, 0, len(exps))
	for _, e := range exps {
		er := ExpectResult{Line: e.Line, Cond: e.Text, Label: e.Label}
		line, used := r.recall(command.Line{Num: e.Line, Text: "expect " + e.Text, Cmd: command.Expect{Cond: e.Cond}})
		r.lab.RunScript(ctx, []command.Line{line}, func(_ command.Line, res lab.Result, err error) {
			var ee *lab.ExpectationError
			switch {
			case err == nil:
				er.Held = true
				er.Observed = res.Observed
			case errors.As(err, &ee):
				er.Observed = ee.Got
			default:
				er.Observed = err.Error()
			}
		})
		if len(used) > 0 {
			er.Observed = strings.TrimPrefix(er.Observed+", "+strings.Join(used, ", "), ", ")
		}
		if !er.Held {
			r.failed = append(r.failed, er)
		}
		out = append(out, er)
	}
	return out
}

// DoTask does the pending task as the learner would have: it runs its do
// commands, then waits for its conditions with their timeouts. Headless
// runs and a "show me" key use it.
func (r *Runner) DoTask(ctx context.Context) (Event, error) {
	b := r.pending
	if b == nil || b.Kind != KindTask {
		return Event{}, errors.New("no task is waiting")
	}
	ev := Event{Step: r.step, Block: r.block - 1, Kind: KindTask, Task: b.Task, Text: r.Render(ctx, b.Task.Text)}
	do := b.Task.Do
	if r.opts.Alternate && len(b.Task.Also) > 0 {
		do = b.Task.Also
	}
	res, err := r.run(ctx, append(append([]command.Line(nil), do...), b.Task.Wait...))
	ev.Commands = res
	if err != nil {
		r.broken = err
		return ev, err
	}
	r.pending = nil
	return ev, nil
}

// LearnerWait is how long AwaitTask waits for one condition.
const LearnerWait = 24 * time.Hour

// AwaitTask waits until the pending task's conditions hold, whoever made
// them hold: the learner's key or typed command. It returns early when ctx
// ends (the task stays pending), or with an error when the lab is replaced
// under it; ResetStep starts the step again.
func (r *Runner) AwaitTask(ctx context.Context) error {
	b := r.pending
	if b == nil || b.Kind != KindTask {
		return errors.New("no task is waiting")
	}
	for _, w := range b.Task.Wait {
		c := w.Cmd.(command.Wait)
		c.Timeout = LearnerWait
		line, _ := r.recall(command.Line{Num: w.Num, Text: w.Text, Cmd: c})
		if err := r.readable(ctx, c.Cond); err != nil {
			return err
		}
		if failed := r.lab.RunScript(ctx, []command.Line{line}, nil); len(failed) > 0 {
			return failed[0]
		}
	}
	r.pending = nil
	return nil
}

// readable waits until the lab can read both sides of cond: a task may
// wait on a topic or queue that the learner's own command creates (topic
// create orders partitions=6, with wait: logstart(orders/0) == 0), and
// until then the value names nothing, which is no reason to give up on
// the learner. It returns early when ctx ends.
func (r *Runner) readable(ctx context.Context, cond command.Condition) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok := true
		for _, e := range []command.Expr{cond.Left, cond.Right} {
			if e.Value.Kind != command.ValLab {
				continue
			}
			if _, err := r.lab.Value(ctx, e); err != nil {
				ok = false
			}
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Answer answers the pending prediction (choice is an index into Choices;
// -1 reveals without an answer) and returns the reveal. ctx bounds reading
// the values the explanation shows.
func (r *Runner) Answer(ctx context.Context, choice int) (Reveal, error) {
	b := r.pending
	if b == nil || b.Kind != KindPredict {
		return Reveal{}, errors.New("no prediction is waiting")
	}
	p := b.Predict
	if choice < -1 || choice >= len(p.Choices) {
		return Reveal{}, fmt.Errorf("choice %d: there are %d choices", choice, len(p.Choices))
	}
	if p.Number != nil && choice >= 0 {
		return Reveal{}, errors.New("this question asks for a number, not a choice")
	}
	r.pending = nil
	rv := Reveal{Predict: p, Choice: choice, Correct: Said{Choice: choice}.Right(p.Answer, nil), Why: r.Render(ctx, p.Why)}
	if p.Number != nil {
		rv.Answer = p.Number.String()
	} else {
		rv.Answer = r.Render(ctx, p.Choices[p.Answer])
	}
	if choice >= 0 && r.opts.Progress != nil {
		r.noteProgress(r.opts.Progress.Answer(r.les.ID, p.ID, choice, rv.Correct))
	}
	return rv, nil
}

// AnswerNumber answers the pending numeric prediction with x.
func (r *Runner) AnswerNumber(ctx context.Context, x float64) (Reveal, error) {
	b := r.pending
	if b == nil || b.Kind != KindPredict {
		return Reveal{}, errors.New("no prediction is waiting")
	}
	p := b.Predict
	if p.Number == nil {
		return Reveal{}, errors.New("this question asks for a choice, not a number")
	}
	r.pending = nil
	rv := Reveal{Predict: p, Choice: -1, Number: &x, Correct: Said{Choice: -1, Number: x, Numeric: true}.Right(-1, p.Number), Answer: p.Number.String(), Why: r.Render(ctx, p.Why)}
	if r.opts.Progress != nil {
		r.noteProgress(r.opts.Progress.AnswerNumber(r.les.ID, p.ID, x, rv.Correct))
	}
	return rv, nil
}

// NextStep moves to the next step once the current one has played to its
// end. While one of its expectations failed it refuses with *FailedError,
// unless force (the sandbox, headless runs). After the last step it marks
// the lesson finished and returns ErrEnd.
func (r *Runner) NextStep(ctx context.Context, force bool) error {
	if r.step >= len(r.les.Steps) {
		return ErrEnd
	}
	if r.broken != nil && !force {
		return fmt.Errorf("%w: %v", ErrBroken, r.broken)
	}
	if r.block < len(r.les.Steps[r.step].Blocks) || r.pending != nil {
		if !force {
			return ErrStepNotDone
		}
	}
	if len(r.failed) > 0 && !force {
		return &FailedError{Failed: r.Failed()}
	}
	r.passedFailing += len(r.failed) // the sandbox passed over them
	r.step++
	r.block, r.pending, r.failed, r.broken = 0, nil, nil, nil
	if r.step >= len(r.les.Steps) {
		if r.opts.Progress != nil {
			r.noteProgress(r.opts.Progress.Finish(r.les, r.les.ExpectationCount()-r.passedFailing))
		}
		return ErrEnd
	}
	if r.opts.Progress != nil {
		r.noteProgress(r.opts.Progress.SetStep(r.les.ID, r.step))
	}
	return nil
}

// Goto starts step again on a fresh cluster: it resets the lab and replays
// every earlier step (its commands, its tasks done as the learner would,
// its placeholders kept; predictions and expectations are skipped). The
// replay runs raft on the fast preset's timeouts (lab.Hurry): the learner
// has seen those steps, and a classroom election in each would keep them
// waiting seconds for the step they asked for, which plays at the lab's
// own pace.
func (r *Runner) Goto(ctx context.Context, step int) (err error) {
	if step < 0 || step >= len(r.les.Steps) {
		return fmt.Errorf("step %d: the lesson has steps 1 to %d", step+1, len(r.les.Steps))
	}
	if err := r.lab.Hurry(true); err != nil {
		return err
	}
	defer func() {
		if herr := r.lab.Hurry(false); err == nil && herr != nil {
			err = fmt.Errorf("after replaying up to step %d: %w", step+1, herr)
		}
	}()
	if err := r.reset(ctx); err != nil {
		return err
	}
	for r.step < step {
		for r.block < len(r.les.Steps[r.step].Blocks) {
			b := &r.les.Steps[r.step].Blocks[r.block]
			switch b.Kind {
			case KindText, KindLab, KindTask, KindPredict:
				ev, err := r.Next(ctx)
				if err != nil {
					return fmt.Errorf("replaying step %d: %w", r.step+1, err)
				}
				switch ev.Kind {
				case KindTask:
					if _, err := r.DoTask(ctx); err != nil {
						return fmt.Errorf("replaying step %d: %w", r.step+1, err)
					}
				case KindPredict:
					r.pending = nil
				}
			default:
				r.block++ // expectations change nothing
			}
		}
		r.step++
		r.block, r.failed = 0, nil
	}
	if r.opts.Progress != nil {
		r.noteProgress(r.opts.Progress.SetStep(r.les.ID, r.step))
	}
	return nil
}

// ResetStep starts the current step again on a fresh cluster.
func (r *Runner) ResetStep(ctx context.Context) error { return r.Goto(ctx, r.step) }

// reset puts the runner at the first step of a fresh cluster at 1x.
func (r *Runner) reset(ctx context.Context) error {
	r.step, r.block, r.pending, r.failed, r.broken = 0, 0, nil, nil, nil
	r.kept = map[string]string{}
	clock := r.lab.Clock()
	clock.SetSpeed(1)
	clock.Resume()
	if !r.used && r.owned {
		return nil
	}
	r.used = false
	if first := r.firstCommand(); first != nil {
		if _, ok := first.(command.Cluster); ok {
			return nil // the lesson starts a cluster of its own
		}
	}
	if _, err := r.lab.ExecCommand(ctx, command.Cluster{Nodes: r.opts.Nodes}); err != nil {
		return fmt.Errorf("a fresh cluster: %w", err)
	}
	return nil
}

// firstCommand is the first command the lesson runs, if any.
func (r *Runner) firstCommand() command.Command {
	for _, s := range r.les.Steps {
		for _, b := range s.Blocks {
			switch {
			case b.Kind == KindLab && len(b.Commands) > 0:
				return b.Commands[0].Cmd
			case b.Kind == KindTask && len(b.Task.Do) > 0:
				return b.Task.Do[0].Cmd
			case b.Kind == KindExpect:
				return command.Expect{}
			}
		}
	}
	return nil
}

// Render fills a text's placeholders with what the lab shows now, and
// keeps the values that {{… as NAME}} asks to keep. A value that cannot be
// read shows as ‹?› with the reason.
func (r *Runner) Render(ctx context.Context, text string) string {
	phs, errs := placeholders(text)
	if len(phs) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for i, ph := range phs {
		b.WriteString(text[last:ph.start])
		last = ph.end
		var val string
		switch {
		case errs[i] != nil:
			val = "‹?: " + errs[i].Error() + "›"
		case ph.recall != "":
			v, ok := r.kept[ph.recall]
			if !ok {
				v = "‹?: nothing kept as " + ph.recall + "›"
			}
			val = v
		default:
			v, err := readExpr(ctx, r.lab, ph.expr)
			if err != nil {
				v = "‹?: " + err.Error() + "›"
			} else if ph.as != "" {
				r.kept[ph.as] = v
			}
			val = v
		}
		b.WriteString(shown(val))
	}
	b.WriteString(text[last:])
	return b.String()
}

func (r *Runner) noteProgress(err error) {
	if err != nil {
		r.progressErr = err
	}
}
