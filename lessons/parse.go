package lessons

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/mqlab/mqlab/lab/command"
)

// Problem is one thing wrong with a lesson file, at a line (and a column,
// when one is known).
type Problem struct {
	File string
	Line int // 1-based
	Col  int // 1-based, in characters; 0 when it is the whole line
	Msg  string
}

func (p Problem) String() string {
	file := p.File
	if file == "" {
		file = "lesson"
	}
	if p.Col > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", file, p.Line, p.Col, p.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", file, p.Line, p.Msg)
}

// Problems is every problem of a file, in line order. As an error it lists
// them all, one a line, so a teacher fixes them in one pass.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Load reads and parses a lesson file from disk.
func Load(path string) (*Lesson, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, src)
}

// Parse reads a lesson. When anything is wrong the error is Problems,
// with every problem found; the lesson is returned as far as it was read.
func Parse(file string, src []byte) (*Lesson, error) {
	p := &parser{file: file, les: &Lesson{File: file}}
	p.parse(src)
	if len(p.problems) > 0 {
		sort.SliceStable(p.problems, func(i, j int) bool {
			if p.problems[i].Line != p.problems[j].Line {
				return p.problems[i].Line < p.problems[j].Line
			}
			return p.problems[i].Col < p.problems[j].Col
		})
		return p.les, p.problems
	}
	return p.les, nil
}

// Check validates a lesson file and returns every problem, or nil.
func Check(file string, src []byte) Problems {
	_, err := Parse(file, src)
	var ps Problems
	if errors.As(err, &ps) {
		return ps
	}
	return nil
}

type parser struct {
	file     string
	les      *Lesson
	problems Problems

	conceptsLine int // the front matter line naming the concepts
	frontLine    int // the first line of the front matter
}

func (p *parser) problem(line, col int, format string, args ...any) {
	p.problems = append(p.problems, Problem{File: p.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)})
}

// srcLine is one line of the file with its number.
type srcLine struct {
	num  int
	text string
}

func (p *parser) parse(src []byte) {
	text := string(src)
	if !utf8.ValidString(text) {
		for i, l := range strings.Split(text, "\n") {
			if !utf8.ValidString(l) {
				p.problem(i+1, 0, "the line is not valid UTF-8 text")
				return
			}
		}
	}
	text = strings.TrimPrefix(text, "\ufeff")
	raw := strings.Split(text, "\n")
	lines := make([]srcLine, len(raw))
	for i, l := range raw {
		lines[i] = srcLine{num: i + 1, text: strings.TrimSuffix(l, "\r")}
	}
	body, ok := p.frontMatter(lines)
	if !ok {
		return
	}
	p.body(body, lines)
	p.validate()
}

// frontMatter reads the YAML between the first two --- lines and returns
// the lines after it.
func (p *parser) frontMatter(lines []srcLine) ([]srcLine, bool) {
	p.frontLine = 1
	if len(lines) == 0 || strings.TrimSpace(lines[0].text) != "---" {
		p.problem(1, 0, "a lesson starts with front matter: a line ---, then id, title and concepts, then ---")
		p.les.ID, p.les.Title = "", ""
		return lines, true
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if t := strings.TrimRight(lines[i].text, " \t"); t == "---" || t == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		p.problem(1, 0, "the front matter opened here is never closed with a line ---")
		return nil, false
	}
	var fm strings.Builder
	for _, l := range lines[1:end] {
		fm.WriteString(l.text)
		fm.WriteByte('\n')
	}
	p.yaml(fm.String(), end+1)
	return lines[end+1:], true
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

var frontKeys = []string{"id", "title", "summary", "concepts", "minutes"}

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// yaml reads the front matter; closeLine is the line of its closing ---.
// A YAML line n is file line n+1.
func (p *parser) yaml(src string, closeLine int) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		line, msg := 1, err.Error()
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			line, msg = n+1, m[2]
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		p.problem(line, 0, "front matter: %s", msg)
		return
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		p.problem(1, 0, "the front matter is empty; it needs id, title and concepts")
		return
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		p.problem(m.Line+1, 0, "the front matter is a list of key: value lines (id, title, concepts…)")
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		line := k.Line + 1
		key := k.Value
		if seen[key] {
			p.problem(line, 0, "front matter: %s is given twice", key)
			continue
		}
		seen[key] = true
		switch key {
		case "id", "title", "summary":
			if v.Kind != yaml.ScalarNode {
				p.problem(line, 0, "front matter: %s is one line of text", key)
				continue
			}
			val := strings.TrimSpace(v.Value)
			switch key {
			case "id":
				if !idRE.MatchString(val) {
					p.problem(line, 0, "front matter: id %q: use lower-case letters, digits and dashes, like durability", val)
				}
				p.les.ID = val
			case "title":
				p.les.Title = val
			case "summary":
				p.les.Summary = val
			}
		case "concepts":
			p.conceptsLine = line
			if v.Kind != yaml.SequenceNode {
				p.problem(line, 0, "front matter: concepts is a list, like concepts: [acks, replication]")
				continue
			}
			dup := map[string]bool{}
			for _, c := range v.Content {
				name := strings.TrimSpace(c.Value)
				switch {
				case c.Kind != yaml.ScalarNode || name == "":
					p.problem(c.Line+1, 0, "front matter: each concept is a short name")
					continue
				case dup[name]:
					p.problem(c.Line+1, 0, "front matter: concept %q is listed twice", name)
					continue
				}
				dup[name] = true
				p.les.Concepts = append(p.les.Concepts, name)
			}
		case "minutes":
			var n int
			if v.Kind != yaml.ScalarNode || v.Decode(&n) != nil || n <= 0 {
				p.problem(line, 0, "front matter: minutes %q: want a whole number of minutes, like 10", v.Value)
				continue
			}
			p.les.Minutes = n
		default:
			p.problem(line, 0, "front matter: unknown key %q; the keys are %s%s", key, strings.Join(frontKeys, ", "), command.DidYouMean(key, frontKeys))
		}
	}
	for _, req := range []string{"id", "title", "concepts"} {
		if !seen[req] {
			p.problem(1, 0, "the front matter (lines 1–%d) has no %s", closeLine, req)
		}
	}
	if seen["concepts"] && len(p.les.Concepts) == 0 && p.conceptsLine > 0 {
		p.problem(p.conceptsLine, 0, "front matter: concepts is empty; name what the lesson teaches")
	}
}

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
		b.Expects, b.Concept = p.expect(f)
	}
	step.Blocks = append(step.Blocks, b)
}

// command parses one command written at column shift+1 of line num; it
// returns nil for a blank or comment line and for a line with a problem.
func (p *parser) command(num int, text string, shift int) command.Command {
	c, err := command.ParseLine(num, text)
	if err != nil {
		p.parseError(num, shift, 0, err)
		return nil
	}
	return c
}

// parseError reports a parse error of the command language. The text
// parsed began at column shift+1 of the line, after a prefix of skip
// characters the lesson format added ("wait ", "expect ").
func (p *parser) parseError(num, shift, skip int, err error) {
	var ce *command.Error
	if !errors.As(err, &ce) {
		p.problem(num, 0, "%v", err)
		return
	}
	col := ce.Col - skip
	if col < 1 {
		col = 1
	}
	msg := ce.Msg
	if ce.Suggest != "" {
		msg += fmt.Sprintf("; did you mean %q?", ce.Suggest)
	}
	p.problem(num, shift+col, "%s", msg)
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

var wordColonRE = regexp.MustCompile(`^\s*([A-Za-z]+):(\s|$)`)

func (p *parser) task(f *fence) *Task {
	t := &Task{Line: f.start}
	var text []string
	for _, l := range f.lines {
		k, rest, col := key(l.text, "do", "wait", "key")
		switch k {
		case "do":
			if rest == "" {
				p.problem(l.num, 0, "do: names the command the learner would type, like do: kill leader(orders/0)")
				continue
			}
			c := p.command(l.num, rest, col)
			if c == nil {
				continue
			}
			switch c.(type) {
			case command.Wait, command.Expect:
				p.problem(l.num, col+1, "do: is what the learner does; put conditions after wait:")
				continue
			}
			t.Do = append(t.Do, command.Line{Num: l.num, Text: rest, Cmd: c})
		case "wait":
			if rest == "" {
				p.problem(l.num, 0, "wait: needs a condition, like wait: leader(orders/0) != n1")
				continue
			}
			c, err := command.ParseLine(l.num, "wait "+rest)
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
					p.problem(l.num, 0, "%q is not a task key; did you mean %q? (the keys are do:, wait: and key:)", m[1]+":", s+":")
					continue
				}
				switch w {
				case "run", "cmd", "command", "type", "action", "does":
					p.problem(l.num, 0, "%q is not a task key; did you mean \"do:\"? (the keys are do:, wait: and key:)", m[1]+":")
					continue
				case "keys", "hint", "press":
					p.problem(l.num, 0, "%q is not a task key; did you mean \"key:\"? (the keys are do:, wait: and key:)", m[1]+":")
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
	return t
}

var choiceRE = regexp.MustCompile(`^\s*[-*+]\s+\[( |x|X)\]\s*(.*)$`)

var bulletRE = regexp.MustCompile(`^\s*[-*+]\s+`)

func (p *parser) predict(f *fence, step *Step) (*Predict, string) {
	pr := &Predict{Line: f.start, Answer: -1}
	n := 1
	for _, b := range step.Blocks {
		if b.Kind == KindPredict {
			n++
		}
	}
	pr.ID = fmt.Sprintf("s%d.p%d", len(p.les.Steps), n)
	var question, why []string
	inWhy := false
	concept := ""
	for _, l := range f.lines {
		if k, rest, _ := key(l.text, "why", "concept"); k != "" {
			if k == "concept" {
				concept = p.conceptTag(l.num, rest, concept)
				continue
			}
			inWhy = true
			why = append(why, rest)
			continue
		}
		if m := choiceRE.FindStringSubmatch(l.text); m != nil {
			if inWhy {
				p.problem(l.num, 0, "a choice after why: — put the choices before the explanation")
				continue
			}
			choice := strings.TrimSpace(m[2])
			if choice == "" {
				p.problem(l.num, 0, "an empty choice")
				continue
			}
			if m[1] != " " {
				if pr.Answer >= 0 {
					p.problem(l.num, 0, "a second choice marked [x]; a prediction has one right answer")
				} else {
					pr.Answer = len(pr.Choices)
				}
			}
			pr.Choices = append(pr.Choices, choice)
			continue
		}
		switch {
		case inWhy:
			why = append(why, l.text)
		case len(pr.Choices) == 0:
			if bulletRE.MatchString(l.text) {
				p.problem(l.num, 0, "a choice is written - [ ] text, and the right one - [x] text")
				continue
			}
			question = append(question, l.text)
		case strings.TrimSpace(l.text) == "":
		default:
			if bulletRE.MatchString(l.text) {
				p.problem(l.num, 0, "a choice is written - [ ] text, and the right one - [x] text")
			} else {
				p.problem(l.num, 0, "text after the choices: the explanation goes after why:")
			}
		}
	}
	pr.Question = strings.TrimSpace(strings.Join(question, "\n"))
	pr.Why = strings.TrimSpace(strings.Join(why, "\n"))
	if pr.Question == "" {
		p.problem(f.start, 0, "the prediction asks no question: write it above the choices")
	}
	if len(pr.Choices) < 2 {
		p.problem(f.start, 0, "the prediction needs at least two choices, each - [ ] text")
	}
	if pr.Answer < 0 && len(pr.Choices) > 0 {
		p.problem(f.start, 0, "the prediction has no answer: mark the right choice - [x]")
	}
	if pr.Why == "" {
		p.problem(f.start, 0, "the prediction has no why: line explaining the answer, shown after the learner answers")
	}
	return pr, concept
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

func (p *parser) expect(f *fence) ([]Expectation, string) {
	var out []Expectation
	concept := ""
	for _, l := range f.lines {
		if k, rest, _ := key(l.text, "concept"); k != "" {
			concept = p.conceptTag(l.num, rest, concept)
			continue
		}
		c, err := command.ParseLine(l.num, "expect "+l.text)
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
	return out, concept
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

// startsSomething reports whether a line opens a fenced block with an info
// string or starts a step.
func startsSomething(text string) bool {
	if strings.HasPrefix(text, "## ") {
		return true
	}
	m := fenceRE.FindStringSubmatch(text)
	return m != nil && strings.TrimSpace(m[3]) != ""
}
