package lessons

// Problems in a lesson file and where they stand: the line and column a
// teacher is sent to, and how a parse error of the command language inside
// a block becomes a column of the lesson's own line.

import (
	"errors"
	"fmt"
	"strings"

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

func (p *parser) problem(line, col int, format string, args ...any) {
	p.problems = append(p.problems, Problem{File: p.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)})
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
