package command

import (
	"fmt"
	"strings"
)

// Error is a parse error at one place in one line: what was wrong, what
// would be right and, when a known word is close, a suggestion.
type Error struct {
	Line    int    // 1-based
	Col     int    // 1-based, in characters (not bytes)
	Msg     string // what was wrong and what was expected
	Suggest string // the nearest known word, or ""
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "line %d, col %d: %s", e.Line, e.Col, e.Msg)
	if e.Suggest != "" {
		fmt.Fprintf(&b, "; did you mean %q?", e.Suggest)
	}
	return b.String()
}

// Errors is every parse error of a script, in line order.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// posError is an error without a line number yet; the parser adds it.
type posError struct {
	col     int
	msg     string
	suggest string
}

func (e *posError) Error() string { return fmt.Sprintf("col %d: %s", e.col, e.msg) }

func errAt(col int, format string, args ...any) *posError {
	return &posError{col: col, msg: fmt.Sprintf(format, args...)}
}

func (e *posError) withSuggest(s string) *posError {
	e.suggest = s
	return e
}
