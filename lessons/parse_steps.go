package lessons

// A lesson's body: ## steps, the narrative between blocks, and fenced
// blocks found and closed, those of the four lesson kinds told apart from
// a narrative's code blocks.

import (
	"regexp"
	"strings"

	"github.com/mqlab/mqlab/lab/command"
)

// The four fenced block kinds.
var blockKinds = map[string]Kind{"lab": KindLab, "task": KindTask, "predict": KindPredict, "expect": KindExpect}

var blockNames = []string{"lab", "task", "predict", "expect"}

var fenceRE = regexp.MustCompile("^( {0,3})(`{3,}|~{3,})(.*)$")

// fence is an open fenced block.
type fence struct {
	char    byte
	n       int
	kind    Kind // KindText for a narrative code block
	special bool
	info    string
	start   int
	lines   []srcLine
}

func (f *fence) closes(text string) bool {
	t := strings.TrimLeft(text, " ")
	if len(text)-len(t) > 3 {
		return false
	}
	n := 0
	for n < len(t) && t[n] == f.char {
		n++
	}
	return n >= f.n && strings.TrimSpace(t[n:]) == ""
}

// body reads the steps: ## headings, narrative, fenced blocks.
func (p *parser) body(body []srcLine, all []srcLine) {
	r := &bodyReader{p: p}
	for _, l := range body {
		r.line(l)
	}
	r.end()
	p.checkSteps(body, all)
}

// bodyReader is what reading a lesson's body knows between its lines.
type bodyReader struct {
	p             *parser
	step          *Step     // the step being read; nil before the first
	text          []srcLine // narrative collected since the last block
	open          *fence    // the fenced block being read, if any
	warnedPreface bool      // text before the first step was reported
}

// line reads one line of the body.
func (r *bodyReader) line(l srcLine) {
	if r.open != nil && r.open.special && startsSomething(l.text) {
		// A fence with an info string or a step heading cannot be in
		// a lab, task, predict or expect block: the block was left open.
		r.p.problem(r.open.start, 0, "the ```%s block opened here is not closed before line %d", r.open.kind, l.num)
		r.p.block(r.step, r.open)
		r.open = nil
	}
	if r.open != nil {
		r.inFence(l)
		return
	}
	if m := fenceRE.FindStringSubmatch(l.text); m != nil && !(m[2][0] == '`' && strings.Contains(m[3], "`")) {
		r.openFence(l, m)
		return
	}
	if strings.HasPrefix(l.text, "## ") || strings.TrimRight(l.text, " ") == "##" {
		r.startStep(l)
		return
	}
	if strings.HasPrefix(l.text, "# ") || strings.TrimSpace(l.text) == "#" {
		r.p.problem(l.num, 0, "a # heading: steps are ## headings, and the lesson's title belongs in the front matter")
		return
	}
	r.addText(l)
}

// inFence reads a line inside the open fenced block: its content, or the
// fence that closes it. A narrative code block's lines are narrative.
func (r *bodyReader) inFence(l srcLine) {
	closes := r.open.closes(l.text)
	switch {
	case r.open.special && closes:
		r.p.block(r.step, r.open)
	case r.open.special:
		r.open.lines = append(r.open.lines, l)
	default:
		r.addText(l)
	}
	if closes {
		r.open = nil
	}
}

// openFence opens a fenced block at l, whose fence is m: one of the four
// lesson kinds ends the narrative before it; anything else is a code block
// in the narrative (a near miss of a kind's name is reported).
func (r *bodyReader) openFence(l srcLine, m []string) {
	info := strings.TrimSpace(m[3])
	word := ""
	if fields := strings.Fields(info); len(fields) > 0 {
		word = strings.ToLower(fields[0])
	}
	f := &fence{char: m[2][0], n: len(m[2]), info: info, start: l.num}
	if k, ok := blockKinds[word]; ok {
		f.kind, f.special = k, true
		r.flush()
		if r.step == nil && !r.warnedPreface {
			r.p.problem(l.num, 0, "a ```%s block before the first ## step: every part of a lesson belongs to a step", word)
			r.warnedPreface = true
		}
	} else {
		if word != "" && len(word) >= 3 {
			if s := command.Nearest(word, blockNames); s != "" {
				r.p.problem(l.num, 4, "unknown block kind %q; did you mean %q? (the blocks are lab, task, predict and expect)", word, s)
			}
		}
		r.addText(l)
	}
	r.open = f
}

// startStep starts the step whose ## heading is l.
func (r *bodyReader) startStep(l srcLine) {
	r.flush()
	title := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(l.text[2:]), "#"))
	if title == "" {
		r.p.problem(l.num, 0, "a step heading needs a title: ## What the leader holds")
	}
	r.p.les.Steps = append(r.p.les.Steps, Step{Title: title, Line: l.num})
	r.step = &r.p.les.Steps[len(r.p.les.Steps)-1]
}

// addText adds a line to the narrative; before the first step, text that
// is not blank is reported once.
func (r *bodyReader) addText(l srcLine) {
	if r.step == nil {
		if strings.TrimSpace(l.text) != "" && !r.warnedPreface {
			r.p.problem(l.num, 0, "text before the first ## step: every part of a lesson belongs to a step")
			r.warnedPreface = true
		}
		return
	}
	r.text = append(r.text, l)
}

// flush ends the narrative collected since the last block: without its
// blank lines at either end, it becomes the step's next text block.
func (r *bodyReader) flush() {
	if r.step == nil {
		r.text = nil
		return
	}
	for len(r.text) > 0 && strings.TrimSpace(r.text[0].text) == "" {
		r.text = r.text[1:]
	}
	for len(r.text) > 0 && strings.TrimSpace(r.text[len(r.text)-1].text) == "" {
		r.text = r.text[:len(r.text)-1]
	}
	if len(r.text) == 0 {
		return
	}
	parts := make([]string, len(r.text))
	for i, l := range r.text {
		parts[i] = l.text
	}
	r.step.Blocks = append(r.step.Blocks, Block{Kind: KindText, Line: r.text[0].num, Text: strings.Join(parts, "\n")})
	r.text = nil
}

// end reports a block never closed, and ends the last narrative.
func (r *bodyReader) end() {
	if r.open != nil {
		what := "code block"
		if r.open.special {
			what = "```" + r.open.kind.String() + " block"
		}
		r.p.problem(r.open.start, 0, "the %s opened here is never closed", what)
	}
	r.flush()
}

// checkSteps reports a lesson with no steps, and every step with nothing
// in it.
func (p *parser) checkSteps(body, all []srcLine) {
	if len(p.les.Steps) == 0 {
		line := 1
		if len(all) > 0 {
			line = all[len(all)-1].num
		}
		if len(body) > 0 {
			line = body[0].num
		}
		p.problem(line, 0, "the lesson has no steps: start one with a ## heading")
	}
	for _, s := range p.les.Steps {
		if len(s.Blocks) == 0 {
			p.problem(s.Line, 0, "step %q has nothing in it", s.Title)
		}
	}
}

// startsSomething reports whether a line opens a fenced block with an info
// string or starts a step.
func startsSomething(text string) bool {
	if strings.HasPrefix(text, "## ") {
		return true
	}
	m := fenceRE.FindStringSubmatch(text)
	return m != nil && strings.TrimSpace(m[3]) != ""
}
