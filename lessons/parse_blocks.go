package lessons

// The fenced blocks' contents: a lab block's commands, a task's do:,
// wait: and key: lines, a prediction's question, choices and why:, an
// expect block's conditions and their labels.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mqlab/mqlab/lab/command"
)

// block parses a closed fenced block into the step.
func (p *parser) block(step *Step, f *fence) {
	if step == nil {
		return
	}
	b := Block{Kind: f.kind, Line: f.start, src: f.lines}
	empty := true
	for _, l := range f.lines {
		if t := strings.TrimSpace(l.text); t != "" && !strings.HasPrefix(t, "#") {
			empty = false
		}
	}
	if empty {
		p.problem(f.start, 0, "the ```%s block is empty", f.kind)
		return
	}
	switch f.kind {
	case KindLab:
		for _, l := range f.lines {
			if c := p.command(l.num, l.text, 0); c != nil {
				b.Commands = append(b.Commands, command.Line{Num: l.num, Text: l.text, Cmd: c})
			}
		}
	case KindTask:
		b.Task = p.task(f)
	case KindPredict:
		b.Predict, b.Concept = p.predict(f, step)
	case KindExpect:
		b.Expects, b.Concept, b.HoldsBefore = p.expect(f)
	}
	step.Blocks = append(step.Blocks, b)
}

// command parses one command written at column shift+1 of line num; it
// returns nil for a blank or comment line and for a line with a problem.
func (p *parser) command(num int, text string, shift int) command.Command {
	c, err := p.parseLine(num, text)
	if err != nil {
		p.parseError(num, shift, 0, err)
		return nil
	}
	return c
}

// key splits "key: rest" for one of keys (case-insensitive), returning the
// key, the rest and the column where the rest starts.
func key(text string, keys ...string) (string, string, int) {
	t := strings.TrimLeft(text, " \t")
	lead := len(text) - len(t)
	i := strings.IndexByte(t, ':')
	if i <= 0 {
		return "", "", 0
	}
	word := strings.ToLower(t[:i])
	for _, k := range keys {
		if word == k {
			rest := t[i+1:]
			trimmed := strings.TrimLeft(rest, " \t")
			col := utf8.RuneCountInString(text[:lead+i+1+len(rest)-len(trimmed)])
			return k, strings.TrimSpace(trimmed), col
		}
	}
	return "", "", 0
}

// learnerCommand reads a task's do: or also: line: a command the learner
// could type, not a condition. empty is the problem when there is none,
// notCondition when it is a wait or an expect.
func (p *parser) learnerCommand(num int, rest string, col int, empty, notCondition string) (command.Line, bool) {
	if rest == "" {
		p.problem(num, 0, "%s", empty)
		return command.Line{}, false
	}
	c := p.command(num, rest, col)
	if c == nil {
		return command.Line{}, false
	}
	switch c.(type) {
	case command.Wait, command.Expect:
		p.problem(num, col+1, "%s", notCondition)
		return command.Line{}, false
	}
	return command.Line{Num: num, Text: rest, Cmd: c}, true
}

var wordColonRE = regexp.MustCompile(`^\s*([A-Za-z]+):(\s|$)`)

func (p *parser) task(f *fence) *Task {
	t := &Task{Line: f.start}
	var text []string
	for _, l := range f.lines {
		k, rest, col := key(l.text, "do", "wait", "key", "also", "decide")
		switch k {
		case "decide":
			if rest == "" {
				p.problem(l.num, 0, "decide: names what the learner chooses, like decide: the visibility timeout and extend=")
				continue
			}
			t.Decide = rest
		case "also":
			if line, ok := p.learnerCommand(l.num, rest, col,
				"also: names another command that meets the task's goal, like also: worker start w3 queue=orders",
				"also: is another way the learner could meet the goal; put conditions after wait:"); ok {
				t.Also = append(t.Also, line)
			}
		case "do":
			if line, ok := p.learnerCommand(l.num, rest, col,
				"do: names the command the learner would type, like do: kill leader(orders/0)",
				"do: is what the learner does; put conditions after wait:"); ok {
				t.Do = append(t.Do, line)
			}
		case "wait":
			if rest == "" {
				p.problem(l.num, 0, "wait: needs a condition, like wait: leader(orders/0) != n1")
				continue
			}
			c, err := p.parseLine(l.num, "wait "+rest)
			if err != nil {
				p.parseError(l.num, col, len("wait "), err)
				continue
			}
			t.Wait = append(t.Wait, command.Line{Num: l.num, Text: "wait " + rest, Cmd: c})
		case "key":
			t.Key = rest
		default:
			if m := wordColonRE.FindStringSubmatch(l.text); m != nil {
				w := strings.ToLower(m[1])
				if s := command.Nearest(w, []string{"wait"}); s != "" && len(w) >= 3 {
					p.problem(l.num, 0, "%q is not a task key; did you mean %q? (the keys are do:, also:, wait:, key: and decide:)", m[1]+":", s+":")
					continue
				}
				switch w {
				case "run", "cmd", "command", "type", "action", "does":
					p.problem(l.num, 0, "%q is not a task key; did you mean \"do:\"? (the keys are do:, also:, wait:, key: and decide:)", m[1]+":")
					continue
				case "keys", "hint", "press":
					p.problem(l.num, 0, "%q is not a task key; did you mean \"key:\"? (the keys are do:, also:, wait:, key: and decide:)", m[1]+":")
					continue
				}
			}
			text = append(text, l.text)
		}
	}
	t.Text = strings.TrimSpace(strings.Join(text, "\n"))
	if t.Text == "" {
		p.problem(f.start, 0, "the task says nothing to the learner: write what to do above its do: line")
	}
	if len(t.Do) == 0 {
		p.problem(f.start, 0, "the task has no do: line naming the command the learner would type (the runner types it when headless)")
	}
	if len(t.Wait) == 0 {
		p.problem(f.start, 0, "the task has no wait: condition, so it could never be done")
	}
	if t.Decide != "" && len(t.Also) == 0 && len(t.Do) > 0 {
		p.problem(f.start, 0, "the task asks the learner to decide %s but names one answer; add an also: line with another choice the lesson accepts", t.Decide)
	}
	return t
}

// numberAnswerRE reads a numeric prediction's answer: "20 ± 4",
// "1,600 ± 10% a second", "2.5 +- 0.5 s".
var numberAnswerRE = regexp.MustCompile(`^(-?[0-9][0-9,]*(?:\.[0-9]+)?)\s*(?:±|\+-|\+/-)\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*(%?)\s*(.*)$`)

// parseNumberAnswer reads what follows answer: in a predict block.
func parseNumberAnswer(s string) (*Number, error) {
	m := numberAnswerRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return nil, fmt.Errorf("answer: takes a number and how far off is still right, as 20 ± 4 or 1,600 ± 10%%, not %q", s)
	}
	v, err1 := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	tol, err2 := strconv.ParseFloat(strings.ReplaceAll(m[2], ",", ""), 64)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("answer: %q is not a number ± a number", s)
	}
	if tol == 0 {
		return nil, fmt.Errorf("answer: %q allows no error at all; say how far off is still right, as ± 10%%", s)
	}
	return &Number{Value: v, Tol: tol, Percent: m[3] == "%", Unit: strings.TrimSpace(m[4])}, nil
}

var choiceRE = regexp.MustCompile(`^\s*[-*+]\s+\[( |x|X)\]\s*(.*)$`)

var bulletRE = regexp.MustCompile(`^\s*[-*+]\s+`)

// predict reads a ```predict block: the question, then the choices or a
// numeric answer:, then why:; it returns the prediction and the concept
// it counts for.
func (p *parser) predict(f *fence, step *Step) (*Predict, string) {
	r := &predictReader{p: p, pr: &Predict{Line: f.start, Answer: -1}}
	n := 1
	for _, b := range step.Blocks {
		if b.Kind == KindPredict {
			n++
		}
	}
	r.pr.ID = fmt.Sprintf("s%d.p%d", len(p.les.Steps), n)
	for _, l := range f.lines {
		if k, rest, _ := key(l.text, "why", "concept", "answer", "recall"); k != "" {
			r.keyLine(l, k, rest)
		} else if m := choiceRE.FindStringSubmatch(l.text); m != nil {
			r.choice(l, m[1] != " ", strings.TrimSpace(m[2]))
		} else {
			r.text(l)
		}
	}
	r.finish(f)
	return r.pr, r.concept
}

// predictReader is what reading a ```predict block knows between lines.
type predictReader struct {
	p             *parser
	pr            *Predict
	question, why []string
	inWhy         bool // why: has begun
	sawAnswer     bool // an answer: line was read
	concept       string
}

// keyLine reads a concept:, recall:, answer: or why: line.
func (r *predictReader) keyLine(l srcLine, k, rest string) {
	switch {
	case k == "recall":
		r.pr.Recall = rest
	case k == "concept":
		r.concept = r.p.conceptTag(l.num, rest, r.concept)
	case k == "why":
		r.inWhy = true
		r.why = append(r.why, rest)
	case r.inWhy:
		r.p.problem(l.num, 0, "an answer: after why: — put the answer before the explanation")
	case r.sawAnswer:
		r.p.problem(l.num, 0, "a second answer: line; a prediction has one right answer")
	default:
		r.sawAnswer = true
		n, err := parseNumberAnswer(rest)
		if err != nil {
			r.p.problem(l.num, 0, "%s", err)
			return
		}
		r.pr.Number = n
	}
}

// choice reads a - [ ] line, or - [x] for the right one.
func (r *predictReader) choice(l srcLine, right bool, choice string) {
	switch {
	case r.inWhy:
		r.p.problem(l.num, 0, "a choice after why: — put the choices before the explanation")
		return
	case choice == "":
		r.p.problem(l.num, 0, "an empty choice")
		return
	case right && r.pr.Answer >= 0:
		r.p.problem(l.num, 0, "a second choice marked [x]; a prediction has one right answer")
	case right:
		r.pr.Answer = len(r.pr.Choices)
	}
	r.pr.Choices = append(r.pr.Choices, choice)
}

// text reads any other line: the question before the choices, the
// explanation after why:, and nothing between.
func (r *predictReader) text(l srcLine) {
	switch {
	case r.inWhy:
		r.why = append(r.why, l.text)
	case len(r.pr.Choices) == 0:
		if bulletRE.MatchString(l.text) {
			r.p.problem(l.num, 0, "a choice is written - [ ] text, and the right one - [x] text")
			return
		}
		r.question = append(r.question, l.text)
	case strings.TrimSpace(l.text) == "":
	case bulletRE.MatchString(l.text):
		r.p.problem(l.num, 0, "a choice is written - [ ] text, and the right one - [x] text")
	default:
		r.p.problem(l.num, 0, "text after the choices: the explanation goes after why:")
	}
}

// finish sets the question and the explanation, and reports what the
// whole block lacks.
func (r *predictReader) finish(f *fence) {
	pr, p := r.pr, r.p
	pr.Question = strings.TrimSpace(strings.Join(r.question, "\n"))
	pr.Why = strings.TrimSpace(strings.Join(r.why, "\n"))
	if pr.Question == "" {
		p.problem(f.start, 0, "the prediction asks no question: write it above the choices")
	}
	switch {
	case pr.Number != nil && len(pr.Choices) > 0:
		p.problem(f.start, 0, "the prediction has both choices and an answer: line; a number is asked with answer: alone, choices with - [x]")
	case pr.Number != nil, r.sawAnswer && len(pr.Choices) == 0: // a bad answer: line is its own problem
	case len(pr.Choices) < 2:
		p.problem(f.start, 0, "the prediction needs at least two choices, each - [ ] text, or a numeric answer: 20 ± 4")
	case pr.Answer < 0:
		p.problem(f.start, 0, "the prediction has no answer: mark the right choice - [x]")
	}
	if pr.Why == "" {
		p.problem(f.start, 0, "the prediction has no why: line explaining the answer, shown after the learner answers")
	}
}

func (p *parser) conceptTag(num int, name, prev string) string {
	if prev != "" {
		p.problem(num, 0, "a second concept: line; a block teaches one concept")
		return prev
	}
	if name == "" {
		p.problem(num, 0, "concept: needs one of the front matter's concepts")
		return ""
	}
	return name
}

func (p *parser) expect(f *fence) ([]Expectation, string, string) {
	var out []Expectation
	concept, holdsBefore := "", ""
	for _, l := range f.lines {
		switch k, rest, _ := key(l.text, "concept", "holds-before"); k {
		case "concept":
			concept = p.conceptTag(l.num, rest, concept)
			continue
		case "holds-before":
			if rest == "" {
				p.problem(l.num, 0, "holds-before: needs the reason the block may hold before its step, e.g. holds-before: nothing was lost before either")
			}
			holdsBefore = rest
			continue
		}
		c, err := p.parseLine(l.num, "expect "+l.text)
		if err != nil {
			p.parseError(l.num, 0, len("expect "), err)
			continue
		}
		if c == nil {
			continue
		}
		e, ok := c.(command.Expect)
		if !ok {
			p.problem(l.num, 1, "an expect block holds conditions, one a line")
			continue
		}
		cond, label := splitLabel(l.text)
		out = append(out, Expectation{Line: l.num, Text: cond, Label: label, Cond: e.Cond})
	}
	return out, concept, holdsBefore
}

// splitLabel splits "lost == 1   # the acks=1 write is gone" into the
// condition and its label. A # starts the label where the command language
// would start a comment: at the start of a word, outside quotes and
// parentheses.
func splitLabel(text string) (string, string) {
	depth, quoted := 0, false
	prevSpace := true
	for i, r := range text {
		switch {
		case quoted:
			if r == '"' {
				quoted = false
			}
		case r == '"':
			quoted = true
		case r == '(':
			depth++
		case r == ')':
			if depth > 0 {
				depth--
			}
		case r == '#' && depth == 0 && prevSpace:
			return strings.TrimSpace(text[:i]), strings.TrimSpace(text[i+1:])
		}
		prevSpace = r == ' ' || r == '\t'
	}
	return strings.TrimSpace(text), ""
}
