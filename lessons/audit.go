package lessons

// Audit: playing a lesson to find what its file cannot show by reading —
// a question whose answer is on screen when it is asked, an expectation
// that held before anything in its step happened, a task whose goal held
// before the learner acted.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mqlab/mqlab/lab/command"
)

// Finding is one problem Audit found, at a line of the lesson file.
type Finding struct {
	Line int
	Text string
}

func (f Finding) String() string { return fmt.Sprintf("%d: %s", f.Line, f.Text) }

// Audit plays les headless, as PlayHeadless does, on a lab of its own
// (or opts.Lab), and reports with line numbers:
//   - a prediction whose revealing expect block (the next in its step)
//     reads the same values when the question is asked as when the block
//     runs: the answer was on screen;
//   - an expect block all of whose conditions held when its step began,
//     after the step's fresh cluster if it starts one, unless the block
//     says why with holds-before: (it would pass with the behaviour
//     broken);
//   - a task whose goal held before the learner was asked for it;
//   - an expectation that did not hold when played (with opts.Alternate,
//     each task done its also: way).
//
// Conditions that read the checker's fields (lost == 0) are read from a
// check that leaves no trace on the lab, and compared like any other; one
// that reads what does not exist yet reads as absent. An error is a
// command that could not run.
//
// With opts.Reading it plays as a screen does instead (see auditReading).
func Audit(ctx context.Context, les *Lesson, opts Options) ([]Finding, error) {
	if opts.Reading > 0 {
		return auditReading(ctx, les, opts)
	}
	r, err := NewRunner(les, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := r.Goto(ctx, 0); err != nil {
		return nil, err
	}
	a := &audit{r: r}
	for step := range les.Steps {
		if err := a.step(ctx, step); err != nil {
			return a.found, err
		}
		if err := r.NextStep(ctx, true); err != nil && !errors.Is(err, ErrEnd) {
			return a.found, err
		}
	}
	return a.found, nil
}

type audit struct {
	r     *Runner
	found []Finding
}

func (a *audit) add(line int, format string, args ...any) {
	a.found = append(a.found, Finding{Line: line, Text: fmt.Sprintf(format, args...)})
}

// step plays one step, reading the expect blocks at its start and each
// revealing block when its question is asked.
func (a *audit) step(ctx context.Context, step int) error {
	blocks := a.r.les.Steps[step].Blocks
	var before map[int][]reading // expect block → its readings at the step's start
	readBefore := func() {
		before = map[int][]reading{}
		for i, b := range blocks {
			if b.Kind == KindExpect {
				before[i] = a.read(ctx, b.Expects)
			}
		}
	}
	startsCluster := len(blocks) > 0 && blocks[0].Kind == KindLab && len(blocks[0].Commands) > 0 && isCluster(blocks[0].Commands[0].Cmd)
	if !startsCluster {
		readBefore()
	}
	asked := map[int]askedAt{} // revealing expect block → the question and its readings when asked
	for {
		ev, err := a.r.Next(ctx)
		if err != nil {
			return err
		}
		switch ev.Kind {
		case KindLab:
			if ev.Block == 0 && startsCluster {
				readBefore()
			}
		case KindTask:
			if held := a.read(ctx, waitExpectations(ev.Task)); allHeld(held) {
				a.add(ev.Task.Line, "the task's goal held before the learner was asked for it (%s): it is done before they act", shownOf(held))
			}
			if _, err := a.r.DoTask(ctx); err != nil {
				return err
			}
		case KindPredict:
			if i := nextExpect(blocks, ev.Block); i >= 0 {
				asked[i] = askedAt{line: ev.Predict.Line, readings: a.read(ctx, blocks[i].Expects)}
			}
			if _, err := a.r.Answer(ctx, -1); err != nil {
				return err
			}
		case KindExpect:
			b := blocks[ev.Block]
			now := a.read(ctx, b.Expects)
			if q, ok := asked[ev.Block]; ok && sameReadings(q.readings, now) {
				a.add(q.line, "the answer was on screen when the question was asked: the expect block at line %d read the same then (%s)", b.Line, shownOf(q.readings))
			}
			if b.HoldsBefore == "" && allHeld(before[ev.Block]) {
				a.add(b.Line, "every condition held when the step began (%s): the block would pass with the behaviour broken; change the scene, or say why with holds-before: REASON", shownOf(before[ev.Block]))
			}
		case KindStepEnd:
			for _, f := range a.r.Failed() {
				a.add(f.Line, "the expectation did not hold when played: %s (%s)", f.Cond, f.Observed)
			}
			return nil
		}
	}
}

type askedAt struct {
	line     int
	readings []reading
}

// reading is one condition as the lab showed it at a moment. ok is false
// when it was not read (it compares with a value the lesson has not kept
// yet): it takes no part in the comparisons. A condition about something
// that does not
// exist yet (a group not started) reads as absent: it does not hold, and
// its becoming present is a change.
type reading struct {
	ok    bool
	held  bool
	shown string
}

// read evaluates conditions against the lab as it is now, with the
// values the lesson has kept so far.
func (a *audit) read(ctx context.Context, exps []Expectation) []reading {
	return readNow(ctx, a.r, exps)
}

// readNow evaluates conditions against r's lab as it is now, with the
// values the lesson has kept so far. Checker fields are read from one
// check that leaves no trace on the lab.
func readNow(ctx context.Context, r *Runner, exps []Expectation) []reading {
	out := make([]reading, len(exps))
	var conds []command.Condition
	var at []int
	for i, e := range exps {
		line, _ := r.recall(command.Line{Num: e.Line, Cmd: command.Expect{Cond: e.Cond}})
		c := line.Cmd.(command.Expect).Cond
		if hasSaved(c) {
			continue // a name not kept yet
		}
		conds, at = append(conds, c), append(at, i)
	}
	for k, rd := range r.lab.Peek(ctx, conds) {
		e := exps[at[k]]
		switch {
		case rd.Err != nil:
			out[at[k]] = reading{ok: true, shown: e.Text + ": absent"}
		default:
			out[at[k]] = reading{ok: true, held: rd.Held, shown: e.Text + ": " + strings.Join(rd.Shown, ", ")}
		}
	}
	return out
}

// allHeld: at least one condition could be read, and every one that could
// held.
func allHeld(rs []reading) bool {
	n := 0
	for _, r := range rs {
		if !r.ok {
			continue
		}
		if !r.held {
			return false
		}
		n++
	}
	return n > 0
}

// sameReadings: at least one condition could be read both times, and each
// such one showed the same values.
func sameReadings(then, now []reading) bool {
	n := 0
	for i := range min(len(then), len(now)) {
		if !then[i].ok || !now[i].ok {
			continue
		}
		if then[i].shown != now[i].shown {
			return false
		}
		n++
	}
	return n > 0
}

func shownOf(rs []reading) string {
	var parts []string
	for _, r := range rs {
		if r.ok {
			parts = append(parts, r.shown)
		}
	}
	return strings.Join(parts, "; ")
}

// nextExpect is the index of the first expect block after block i, or -1.
func nextExpect(blocks []Block, i int) int {
	for j := i + 1; j < len(blocks); j++ {
		if blocks[j].Kind == KindExpect {
			return j
		}
	}
	return -1
}

// waitExpectations are a task's wait: conditions, as expectations.
func waitExpectations(t *Task) []Expectation {
	var out []Expectation
	for _, w := range t.Wait {
		if c, ok := w.Cmd.(command.Wait); ok {
			out = append(out, Expectation{Line: w.Num, Text: c.Cond.String(), Cond: c.Cond})
		}
	}
	return out
}

func isCluster(c command.Command) bool {
	_, ok := c.(command.Cluster)
	return ok
}

func hasSaved(c command.Condition) bool {
	return slices.ContainsFunc([]command.Expr{c.Left, c.Right}, func(e command.Expr) bool { return e.Value.Kind == command.ValSaved })
}
