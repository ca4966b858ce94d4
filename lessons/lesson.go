package lessons

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mqlab/mqlab/lab/command"
)

// Lesson is one parsed lesson file: its front matter and its steps.
type Lesson struct {
	ID       string
	Title    string
	Summary  string
	Concepts []string
	Minutes  int    // 0 when the front matter does not say
	File     string // where it was read from: a path, or curriculum/NAME.md
	Steps    []Step
}

// Step is one ## section: a title and its blocks in the order they play.
type Step struct {
	Title  string
	Line   int
	Blocks []Block
}

// Kind says what a block is.
type Kind int

// Kinds of block, and KindStepEnd for the event that closes a step.
const (
	KindText    Kind = iota // narrative Markdown, {{…}} placeholders filled when it is shown
	KindLab                 // ```lab: commands the lab runs
	KindTask                // ```task: something the learner does, ended by wait conditions
	KindPredict             // ```predict: a multiple-choice question asked before the reveal
	KindExpect              // ```expect: conditions shown as ✓ or ✗
	KindStepEnd             // not a block: the event Runner.Next returns after a step's last block
)

func (k Kind) String() string {
	switch k {
	case KindText:
		return "text"
	case KindLab:
		return "lab"
	case KindTask:
		return "task"
	case KindPredict:
		return "predict"
	case KindExpect:
		return "expect"
	case KindStepEnd:
		return "step end"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Block is one piece of a step. Which field is set follows Kind.
type Block struct {
	Kind     Kind
	Line     int            // the first line: the fence, for fenced blocks
	Text     string         // KindText: Markdown
	Commands []command.Line // KindLab, with their lines in the lesson file
	Task     *Task
	Predict  *Predict
	Expects  []Expectation
	Concept  string // KindPredict, KindExpect: the concept it teaches, or ""
	// HoldsBefore is, for an expect block, why it may already hold when
	// its step begins ("nothing was lost" holds before and after); ""
	// when it must not (see Audit).
	HoldsBefore string

	src []srcLine // a fenced block's lines, for checks by line
}

// Task is a goal the learner reaches: Text says what to achieve, and the
// task is done when every Wait condition has held, in order, after the
// learner has acted. Do names one way there, the commands a learner
// could type (a key in the TUI runs the same command), shown as a hint
// when asked for; each Also line is another way that meets the same goal.
// Played headless, the runner types the Do commands itself (or the Also
// ones, with Options.Alternate).
type Task struct {
	Line int
	Text string         // the goal, Markdown
	Key  string         // how to do it with a key in the TUI, or ""
	Do   []command.Line // each a command
	Also []command.Line // together, another way to meet the goal
	Wait []command.Line // each a command.Wait
	// Decide names the values the learner chooses, when the task is a
	// design decision graded by what the lab then does ("" otherwise).
	Decide string
}

// Hint names the key and the command, for a learner who is stuck, and
// any other way to the goal.
func (t *Task) Hint() string {
	var cmds []string
	for _, d := range t.Do {
		cmds = append(cmds, d.Cmd.String())
	}
	hint := "type: " + strings.Join(cmds, "; then ")
	if t.Key != "" {
		hint = "key: " + t.Key + " · or " + hint
	}
	if len(t.Also) > 0 {
		var other []string
		for _, a := range t.Also {
			other = append(other, a.Cmd.String())
		}
		hint += " · or instead: " + strings.Join(other, "; then ")
	}
	return hint
}

// Predict is a question asked before the reveal: multiple choice, where
// Answer is the index of the right choice, or a number (Number set, no
// choices). Why is shown after the learner answers.
type Predict struct {
	ID       string // "s2.p1": step 2's first prediction; progress keys answers by it
	Line     int
	Question string
	Choices  []string
	Answer   int // -1 for a number
	Number   *Number
	Why      string
	Recall   string // why recalling the answer is the point, or "" (see FindRecall)
}

// Number is the answer to a numeric prediction: a value, and how far
// from it an answer may be and still be right.
type Number struct {
	Value   float64
	Tol     float64 // absolute, or a percentage of Value when Percent
	Percent bool
	Unit    string // "a second", "s": words after the number, or ""
}

// Within says whether x is right: no further from Value than the
// tolerance allows.
func (n *Number) Within(x float64) bool {
	tol := n.Tol
	if n.Percent {
		tol = math.Abs(n.Value) * n.Tol / 100
	}
	return math.Abs(x-n.Value) <= tol*(1+1e-9)
}

// String is the answer as the reveal says it: "20 a second (± 4)",
// "1,600 (± 10 %)", and for a count that only a whole number can be,
// "7 records (exact)": a learner reads "± 0.5" as a measurement's error.
func (n *Number) String() string {
	s := FormatNumber(n.Value)
	if n.Unit != "" {
		s += " " + n.Unit
	}
	if n.Exact() {
		return s + " (exact)"
	}
	tol := FormatNumber(n.Tol)
	if n.Percent {
		tol += " %"
	}
	return s + " (± " + tol + ")"
}

// Exact says whether only the whole number Value itself is right: a
// count such as 7 ± 0.5, whose tolerance rounds to it. A duration (a unit
// of s or ms) keeps its ± however small: 2 ± 0.5 s is a measurement.
func (n *Number) Exact() bool {
	if n.Percent || n.Tol >= 1 || n.Value != math.Trunc(n.Value) {
		return false
	}
	switch strings.ToLower(n.Unit) {
	case "s", "ms", "second", "seconds", "milliseconds", "minutes", "min":
		return false
	}
	return true
}

// FormatNumber writes x as a lesson does: thousands grouped with commas,
// at most two decimals.
func FormatNumber(x float64) string {
	s := strconv.FormatFloat(math.Round(x*100)/100, 'f', -1, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := b.String()
	if frac != "" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

// ParseNumber reads a learner's numeric answer: "1600", "1,600",
// "2.5", "20/s" (a unit after the number is ignored).
func ParseNumber(s string) (float64, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	end := 0
	for end < len(t) && (t[end] >= '0' && t[end] <= '9' || t[end] == '.' || (end == 0 && (t[end] == '-' || t[end] == '+'))) {
		end++
	}
	x, err := strconv.ParseFloat(t[:end], 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, fmt.Errorf("the answer is a number, such as 20 or 1,600, not %q", s)
	}
	return x, nil
}

// Expectation is one condition of an expect block.
type Expectation struct {
	Line  int
	Text  string // the condition as written, without its label
	Label string // what it shows, from a trailing # comment, or ""
	Cond  command.Condition
}

// ExpectationCount is how many expectations the lesson checks, in its
// expect blocks and its lab blocks' expect lines.
func (l *Lesson) ExpectationCount() int {
	n := 0
	for _, s := range l.Steps {
		for _, b := range s.Blocks {
			n += len(b.Expects)
			for _, line := range b.Commands {
				if _, ok := line.Cmd.(command.Expect); ok {
					n++
				}
			}
		}
	}
	return n
}

// Predictions returns every prediction of the lesson, in order.
func (l *Lesson) Predictions() []*Predict {
	var out []*Predict
	for _, s := range l.Steps {
		for _, b := range s.Blocks {
			if b.Predict != nil {
				out = append(out, b.Predict)
			}
		}
	}
	return out
}
