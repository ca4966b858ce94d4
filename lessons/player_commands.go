package lessons

// The player's commands: a learner's line or key (Exec, ExecCommand),
// lesson next, prev, reset and goto N, which move the runner from step to
// step, and predict, which answers the open question; and what each says
// back, with the lesson's end and the progress kept. A task's hint and a
// decision's choice are in player_decide.go.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mqlab/mqlab/lab/command"
)

// The lesson commands a Player adds to the lab's language.
const (
	CmdLessonNext  = "lesson next"  // the next step, once this one played and held
	CmdLessonPrev  = "lesson prev"  // the step before, re-running the lesson up to it
	CmdLessonReset = "lesson reset" // start the current step again on a fresh cluster
	CmdLessonGoto  = "lesson goto"  // "lesson goto 3": start step 3, replaying steps 1–2
	CmdPredict     = "predict"      // "predict b": answer the open question
	CmdLessonHint  = "lesson hint"  // one way to meet the open task's goal
)

// Commands are the lesson commands, for a prompt's completion.
var Commands = []string{CmdLessonNext, CmdLessonPrev, CmdLessonReset, CmdLessonGoto, CmdLessonHint, CmdPredict}

// commandsHelp is what help adds about the lesson commands.
const commandsHelp = "The lesson:\n" +
	"  lesson next      the next step (n), once this one played and held\n" +
	"  lesson prev      the step before (p): the lab re-runs the lesson up to it\n" +
	"  lesson reset     start this step again on a fresh cluster\n" +
	"  lesson goto N    start step N, re-running the lesson up to it\n" +
	"  lesson hint      one way to meet the task's goal (t)\n" +
	"  predict a        answer the open question (a–d), or predict 20 when it asks for a number"

// isCommand reports whether line is a lesson command (lesson …, predict
// …) rather than a lab command.
func isCommand(line string) bool {
	if _, ok := PredictAnswer(line); ok {
		return true
	}
	f := strings.Fields(line)
	return len(f) > 0 && f[0] == "lesson"
}

// PredictAnswer reads a "predict b" line: ok says whether the line is the
// predict command, said is its one answer ("" when it has none, or more
// than one). It is the one place the predict command is recognised; the
// answer is read with ParseAnswer.
func PredictAnswer(line string) (said string, ok bool) {
	f := strings.Fields(line)
	if len(f) == 0 || f[0] != CmdPredict {
		return "", false
	}
	if len(f) == 2 {
		said = f[1]
	}
	return said, true
}

// Exec runs a learner's line: a lesson command (lesson next, predict b, …)
// on the player, any other as a lab command (see ExecCommand).
func (p *Player) Exec(ctx context.Context, line string) (string, error) {
	if isCommand(line) {
		return p.command(ctx, line)
	}
	cmd, err := command.Parse(line)
	if err != nil {
		return "", err
	}
	return p.ExecCommand(ctx, cmd)
}

// ExecCommand runs a learner's lab command, a key's or a typed line's,
// on the lab: unless the lesson refuses it now, noted first for the
// task it may meet; help adds the lesson commands'.
func (p *Player) ExecCommand(ctx context.Context, cmd command.Command) (string, error) {
	if err := p.refuses(cmd); err != nil {
		return "", fmt.Errorf("%s: %w", cmd.Name(), err)
	}
	if h, ok := cmd.(command.Help); ok && h.Topic == "" {
		out, err := p.execLab(ctx, cmd)
		if err == nil {
			out += "\n\n" + commandsHelp
		}
		return out, err
	}
	if p.choosing(cmd) {
		return p.addToChoice(ctx, cmd)
	}
	if err := p.resumeDecides(ctx, cmd); err != nil {
		return "", err
	}
	p.actedOnHold(ctx, cmd)
	p.noteLearner(ctx, cmd)
	out, err := p.execLab(ctx, cmd)
	if err == nil {
		p.pausedToDecide(cmd)
	}
	return out, err
}

// execLab runs cmd on the lab and returns what it said.
func (p *Player) execLab(ctx context.Context, cmd command.Command) (string, error) {
	res, err := p.Lab().ExecCommand(ctx, cmd)
	return strings.Join(res.Lines, "\n"), err
}

// command runs a lesson command and says what it did.
func (p *Player) command(ctx context.Context, line string) (string, error) {
	if said, ok := PredictAnswer(line); ok {
		if said == "" {
			return "", errors.New("predict takes one letter, or for a question that asks for a number, one number: predict b, predict 1600")
		}
		return p.Predict(ctx, said)
	}
	f := strings.Fields(line)
	usage := errors.New("lesson next, lesson prev, lesson reset, lesson hint or lesson goto N")
	if len(f) < 2 || f[0] != "lesson" {
		return "", usage
	}
	args := f[1:]
	switch {
	case args[0] == "next" && len(args) == 1:
		return p.Next(ctx)
	case args[0] == "prev" && len(args) == 1:
		return p.Prev(ctx)
	case args[0] == "reset" && len(args) == 1:
		return p.Reset(ctx)
	case args[0] == "hint" && len(args) == 1:
		return p.ShowHint()
	case args[0] == "goto" && len(args) == 2:
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 || n > len(p.les.Steps) {
			return "", fmt.Errorf("lesson goto takes a step from 1 to %d, not %q", len(p.les.Steps), args[1])
		}
		return p.Goto(ctx, n-1)
	}
	return "", usage
}

// turn holds the player for one command: commands take turns, and one
// ends when the player closes.
func (p *Player) turn(ctx context.Context) (context.Context, func(), error) {
	p.cmd.Lock()
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(p.base, cancel)
	done := func() { stop(); cancel(); p.cmd.Unlock() }
	if p.base.Err() != nil {
		done()
		return nil, nil, errors.New("the lesson is closed")
	}
	return ctx, done, nil
}

// refuses says why a learner's command may not run now, or nil. While a
// question waits for its answer, lab time waits with it: speed, pause and
// resume are refused until the answer.
func (p *Player) refuses(cmd command.Command) error {
	if st, _ := p.state(); st.held == holdQuestion && command.Clock(cmd) {
		return errors.New("lab time waits for your answer: answer the question first, and it runs on")
	}
	return nil
}

// settledTurn takes the player's turn and waits until the step stops
// playing on its own, so the command sees where it stopped.
func (p *Player) settledTurn(ctx context.Context) (context.Context, func(), playerState, error) {
	ctx, done, err := p.turn(ctx)
	if err != nil {
		return nil, nil, playerState{}, err
	}
	st, err := p.settle(ctx)
	if err != nil {
		done()
		return nil, nil, playerState{}, err
	}
	return ctx, done, st, nil
}

// Prev starts the step before on a fresh cluster.
func (p *Player) Prev(ctx context.Context) (string, error) {
	st, _ := p.state()
	switch {
	case st.step >= len(p.les.Steps):
		return p.Goto(ctx, len(p.les.Steps)-1)
	case st.step == 0:
		return "", errors.New("this is the first step: :lesson reset starts it again")
	}
	return p.Goto(ctx, st.step-1)
}

// Reset starts the current step again on a fresh cluster.
func (p *Player) Reset(ctx context.Context) (string, error) {
	st, _ := p.state()
	return p.gotoStep(ctx, min(st.step, len(p.les.Steps)-1), true)
}

// Goto starts step (from 0) on a fresh cluster: the runner replays the
// lesson's commands up to it.
func (p *Player) Goto(ctx context.Context, step int) (string, error) {
	if step < 0 || step >= len(p.les.Steps) {
		return "", fmt.Errorf("step %d: the lesson has steps 1 to %d", step+1, len(p.les.Steps))
	}
	return p.gotoStep(ctx, step, false)
}

func (p *Player) gotoStep(ctx context.Context, step int, reset bool) (string, error) {
	ctx, done, err := p.turn(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	p.stopPlaying()
	p.releaseTime(ctx)
	notice := fmt.Sprintf("Starting step %d on a fresh cluster…", step+1)
	if step > 0 {
		notice = fmt.Sprintf("Starting step %d: a live cluster cannot be rewound, so the lab starts a fresh one "+
			"and re-runs the lesson's commands of %s…", step+1, stepsUpTo(step))
	}
	preview := openingText(p.les.Steps[step])
	p.update(func(st *playerState) {
		st.open(step, StatusStarting, notice)
		st.preview = preview
	})
	if err := p.run.Goto(ctx, step); err != nil {
		p.update(func(st *playerState) {
			st.status = StatusBroken
			st.err = err
			st.notice = fmt.Sprintf("Step %d could not start: %v. :lesson reset tries again.", step+1, err)
		})
		return "", fmt.Errorf("step %d could not start: %w", step+1, err)
	}
	p.update(func(st *playerState) { st.status, st.notice = StatusPlaying, "" })
	p.observe(Note{Kind: NoteStep, Step: step})
	if err := p.playOn(ctx); err != nil {
		return "", err
	}
	out := p.stepWords(step)
	switch {
	case reset:
		out += " — started again on a fresh cluster"
	case step > 0:
		out += fmt.Sprintf(" — the lab re-ran the lesson's commands of %s on a fresh cluster", stepsUpTo(step))
	}
	return out, p.progressErr()
}

// Next moves to the next step once this one has played and held (in the
// sandbox, at any time).
func (p *Player) Next(ctx context.Context) (string, error) {
	ctx, done, st, err := p.settledTurn(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	sandbox := p.opts.Sandbox
	switch st.status {
	case StatusStarting:
		return "", errors.New("the step has not started: :lesson reset starts it")
	case StatusFinished:
		return "", errors.New("this was the last step: the lesson is finished")
	case StatusTask:
		// A decision's n says the choice is in; in the sandbox, too,
		// once the learner has made one (before that, n passes over it).
		if st.task != nil && st.task.Decide != "" && (!sandbox || p.chose(st)) {
			return p.decided(ctx, st)
		}
		if !sandbox {
			return "", fmt.Errorf("first the task: %s (%s)", flatten(PlainInline(st.task.Text)), st.task.Hint())
		}
		p.stopPlaying()
	case StatusPredict:
		if !sandbox {
			for i := len(st.blocks) - 1; i >= 0; i-- {
				if pp := st.blocks[i].Prediction; st.blocks[i].Kind == KindPredict && pp != nil && pp.Numeric {
					return "", errors.New("first the question: type your number and press enter")
				}
			}
			return "", errors.New("first the question: answer it with its letter")
		}
	case StatusBroken:
		if !sandbox {
			return "", errors.New("this step could not go on: :lesson reset starts it again")
		}
	}
	p.releaseTime(ctx) // a question passed over in the sandbox holds time no longer
	err = p.run.NextStep(ctx, sandbox)
	var fe *FailedError
	switch {
	case errors.As(err, &fe):
		f := fe.Failed[0]
		return "", fmt.Errorf("%s does not hold (%s): a step cannot be passed while an expectation fails; :lesson reset starts it again",
			f.Cond, f.Observed)
	case errors.Is(err, ErrEnd):
		end := Played{Kind: KindText, Text: p.endWords()}
		p.update(func(st *playerState) {
			st.open(len(p.les.Steps), StatusFinished, "")
			st.blocks = []Played{end}
		})
		return "the lesson is finished ✓", p.progressErr()
	case err != nil:
		return "", err
	}
	step := p.run.Step()
	p.update(func(st *playerState) { st.open(step, StatusPlaying, "") })
	p.observe(Note{Kind: NoteStep, Step: step})
	if err := p.playOn(ctx); err != nil {
		return "", err
	}
	return p.stepWords(step), p.progressErr()
}

// Predict answers the open question with what the learner said (its
// letter, or a number) and plays on.
func (p *Player) Predict(ctx context.Context, said string) (string, error) {
	ctx, done, st, err := p.settledTurn(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	if st.status != StatusPredict {
		return "", errors.New("no question is open now")
	}
	var pred *PlayedPrediction
	for i := len(st.blocks) - 1; i >= 0; i-- {
		if st.blocks[i].Kind == KindPredict {
			pred = st.blocks[i].Prediction
			break
		}
	}
	a, err := ParseAnswer(said, len(pred.Choices), pred.Numeric)
	if err != nil {
		return "", err
	}
	if a.Numeric {
		return p.predictNumber(ctx, a.Number)
	}
	choice := a.Choice
	rv, err := p.run.Answer(ctx, pred.file(choice))
	if err != nil {
		return "", err
	}
	p.releaseTime(ctx)
	p.revealed(choice, rv)
	out := "you predicted it"
	if !rv.Correct {
		out = fmt.Sprintf("the answer is %c) %s", 'a'+pred.shown(rv.Predict.Answer), flatten(PlainInline(rv.Answer)))
	}
	if err := p.playOn(ctx); err != nil {
		return out, err
	}
	return out, p.progressErr()
}

// Reveal shows the open question's answer without an answer of the
// learner's, and plays on: a teacher reveals it to a class that answered
// on screens of its own. Nothing is kept as the teacher's prediction.
func (p *Player) Reveal(ctx context.Context) (string, error) {
	ctx, done, st, err := p.settledTurn(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	if st.status != StatusPredict {
		return "", errors.New("no question is open now")
	}
	var pred *PlayedPrediction
	for i := len(st.blocks) - 1; i >= 0 && pred == nil; i-- {
		if st.blocks[i].Kind == KindPredict {
			pred = st.blocks[i].Prediction
		}
	}
	rv, err := p.run.Answer(ctx, -1)
	if err != nil {
		return "", err
	}
	p.releaseTime(ctx)
	p.revealed(-1, rv)
	out := "the answer is " + rv.Answer
	if rv.Predict.Number == nil && pred != nil {
		out = fmt.Sprintf("the answer is %c) %s", 'a'+pred.shown(rv.Predict.Answer), flatten(PlainInline(rv.Answer)))
	}
	if err := p.playOn(ctx); err != nil {
		return out, err
	}
	return out, p.progressErr()
}

// predictNumber answers the open numeric question with the number the
// learner gave, and plays on. The caller holds the turn.
func (p *Player) predictNumber(ctx context.Context, x float64) (string, error) {
	rv, err := p.run.AnswerNumber(ctx, x)
	if err != nil {
		return "", err
	}
	p.releaseTime(ctx)
	p.revealed(0, rv)
	out := "you predicted it: " + rv.Answer
	if !rv.Correct {
		out = "the answer is " + rv.Answer
	}
	if err := p.playOn(ctx); err != nil {
		return out, err
	}
	return out, p.progressErr()
}

// endWords is what the pane says when the lesson is over: what it showed,
// and how the learner's predictions went.
func (p *Player) endWords() string {
	var b strings.Builder
	b.WriteString("**You finished this lesson.**")
	if len(p.les.Concepts) > 0 {
		b.WriteString(" It showed you, on a live cluster: " + strings.Join(p.les.Concepts, ", ") + ".")
	}
	if store := p.opts.Progress; store != nil {
		if lp, err := store.Lesson(p.les.ID); err == nil && lp.Score != nil {
			sc := lp.Score
			if sc.Predictions > 0 {
				fmt.Fprintf(&b, " You predicted %d of %d right", sc.Right, sc.Predictions)
			} else {
				b.WriteString(" It asked you nothing")
			}
			fmt.Fprintf(&b, ", and %d of its %d expectations held.", sc.Held, sc.Expectations)
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

func (p *Player) stepWords(step int) string {
	return fmt.Sprintf("step %d of %d: %s", step+1, len(p.les.Steps), p.les.Steps[step].Title)
}

func (p *Player) progressErr() error {
	if err := p.run.ProgressError(); err != nil {
		return fmt.Errorf("progress is not being saved: %w", err)
	}
	return nil
}

// StartStep is the step to open a lesson at: where the learner left it
// (from 1), or 1.
func StartStep(les *Lesson, store *Store) int {
	if store == nil {
		return 1
	}
	lp, err := store.Lesson(les.ID)
	if err != nil || lp.Finished && lp.Step == 0 {
		return 1
	}
	return min(max(lp.Step, 0), len(les.Steps)-1) + 1
}

// openingText is the narrative a step opens with, before its first block
// that runs or asks anything, with "…" for values the lab has yet to give.
func openingText(step Step) string {
	var parts []string
	for _, b := range step.Blocks {
		if b.Kind != KindText {
			break
		}
		if t := strings.TrimSpace(b.Text); t != "" {
			parts = append(parts, placeholderRE.ReplaceAllString(t, "…"))
		}
	}
	return strings.Join(parts, "\n\n")
}
