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
	var step *Step
	var text []srcLine // narrative collected since the last block
	var open *fence
	warnedPreface := false

	flush := func() {
		if step == nil {
			text = nil
			return
		}
		for len(text) > 0 && strings.TrimSpace(text[0].text) == "" {
			text = text[1:]
		}
		for len(text) > 0 && strings.TrimSpace(text[len(text)-1].text) == "" {
			text = text[:len(text)-1]
		}
		if len(text) == 0 {
			return
		}
		parts := make([]string, len(text))
		for i, l := range text {
			parts[i] = l.text
		}
		step.Blocks = append(step.Blocks, Block{Kind: KindText, Line: text[0].num, Text: strings.Join(parts, "\n")})
		text = nil
	}
	addText := func(l srcLine) {
		if step == nil {
			if strings.TrimSpace(l.text) != "" && !warnedPreface {
				p.problem(l.num, 0, "text before the first ## step: every part of a lesson belongs to a step")
				warnedPreface = true
			}
			return
		}
		text = append(text, l)
	}

	for _, l := range body {
		if open != nil && open.special && startsSomething(l.text) {
			// A fence with an info string or a step heading cannot be in
			// a lab, task, predict or expect block: the block was left open.
			p.problem(open.start, 0, "the ```%s block opened here is not closed before line %d", open.kind, l.num)
			p.block(step, open)
			open = nil
		}
		if open != nil {
			if open.closes(l.text) {
				if open.special {
					p.block(step, open)
				} else {
					addText(l)
				}
				open = nil
				continue
			}
			if open.special {
				open.lines = append(open.lines, l)
			} else {
				addText(l)
			}
			continue
		}
		if m := fenceRE.FindStringSubmatch(l.text); m != nil && !(m[2][0] == '`' && strings.Contains(m[3], "`")) {
			info := strings.TrimSpace(m[3])
			word := ""
			if fields := strings.Fields(info); len(fields) > 0 {
				word = strings.ToLower(fields[0])
			}
			f := &fence{char: m[2][0], n: len(m[2]), info: info, start: l.num}
			if k, ok := blockKinds[word]; ok {
				f.kind, f.special = k, true
				flush()
				if step == nil && !warnedPreface {
					p.problem(l.num, 0, "a ```%s block before the first ## step: every part of a lesson belongs to a step", word)
					warnedPreface = true
				}
			} else {
				if word != "" && len(word) >= 3 {
					if s := command.Nearest(word, blockNames); s != "" {
						p.problem(l.num, 4, "unknown block kind %q; did you mean %q? (the blocks are lab, task, predict and expect)", word, s)
					}
				}
				addText(l)
			}
			open = f
			continue
		}
		if strings.HasPrefix(l.text, "## ") || strings.TrimRight(l.text, " ") == "##" {
			flush()
			title := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(l.text[2:]), "#"))
			if title == "" {
				p.problem(l.num, 0, "a step heading needs a title: ## What the leader holds")
			}
			p.les.Steps = append(p.les.Steps, Step{Title: title, Line: l.num})
			step = &p.les.Steps[len(p.les.Steps)-1]
			continue
		}
		if strings.HasPrefix(l.text, "# ") || strings.TrimSpace(l.text) == "#" {
			p.problem(l.num, 0, "a # heading: steps are ## headings, and the lesson's title belongs in the front matter")
			continue
		}
		addText(l)
	}
	if open != nil {
		what := "code block"
		if open.special {
			what = "```" + open.kind.String() + " block"
		}
		p.problem(open.start, 0, "the %s opened here is never closed", what)
	}
	flush()
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
