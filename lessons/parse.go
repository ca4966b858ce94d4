package lessons

// The lesson parser's entry points (Load, Parse, Check) and its state:
// the file read as lines, then the front matter (parse_front.go), the
// steps (parse_steps.go) and the blocks in them (parse_blocks.go), and at
// last what needs the whole lesson (validate.go).

import (
	"errors"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mqlab/mqlab/lab/command"
)

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
	p := &parser{file: file, les: &Lesson{File: file}, kept: keptNames(string(src))}
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

// conflictMarker says whether a line is one of the lines a merge leaves
// around a conflict: a lesson never needs one, and a learner would read
// both sides.
func conflictMarker(l string) bool {
	for _, m := range []string{"<<<<<<<", ">>>>>>>"} {
		if l == m || strings.HasPrefix(l, m+" ") {
			return true
		}
	}
	return l == "======="
}

type parser struct {
	file     string
	les      *Lesson
	problems Problems

	conceptsLine int // the front matter line naming the concepts
	frontLine    int // the first line of the front matter

	// kept are the names the lesson keeps values under anywhere
	// ({{… as NAME}}): a condition may compare with them. Validate checks
	// that each is kept before it is used.
	kept map[string]bool
}

// keptNames finds every name a lesson's placeholders keep a value under.
func keptNames(src string) map[string]bool {
	out := map[string]bool{}
	phs, errs := placeholders(src)
	for i, ph := range phs {
		if errs[i] == nil && ph.as != "" {
			out[ph.as] = true
		}
	}
	return out
}

// parseLine parses a command of the lesson, knowing the names it keeps.
func (p *parser) parseLine(num int, text string) (command.Command, error) {
	return command.ParseLineSaved(num, text, func(name string) bool { return p.kept[name] })
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
		if conflictMarker(lines[i].text) {
			p.problem(i+1, 1, "an unresolved merge conflict: keep one side of it and remove the <<<<<<<, ======= and >>>>>>> lines")
		}
	}
	body, ok := p.frontMatter(lines)
	if !ok {
		return
	}
	p.body(body, lines)
	p.validate()
}
