package lab

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mqlab/mqlab/lab/command"
)

// LineError is a script line that failed: a command that could not run,
// a wait that timed out, or an expect that did not hold.
type LineError struct {
	Line int
	Text string // the line as written
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Expectation reports whether the line failed only because an expect did
// not hold (the script went on after it).
func (e *LineError) Expectation() bool {
	var ee *ExpectationError
	return errors.As(e.Err, &ee)
}

// RunScript runs parsed lines in order. An expect that does not hold is
// recorded and the script goes on; any other failure stops it. each, when
// not nil, is called after every line with what it said.
func (l *Lab) RunScript(ctx context.Context, lines []command.Line, each func(command.Line, Result, error)) []*LineError {
	var failed []*LineError
	for _, line := range lines {
		res, err := l.exec(ctx, line.Cmd, line.Num)
		if each != nil {
			each(line, res, err)
		}
		if err == nil {
			continue
		}
		le := &LineError{Line: line.Num, Text: line.Text, Err: err}
		failed = append(failed, le)
		if !le.Expectation() {
			break
		}
	}
	return failed
}

// ScriptError sums up the failed lines of a script, naming each.
func ScriptError(failed []*LineError) error {
	switch len(failed) {
	case 0:
		return nil
	case 1:
		return failed[0]
	}
	nums := make([]string, len(failed))
	msgs := make([]string, len(failed))
	for i, f := range failed {
		nums[i] = strconv.Itoa(f.Line)
		msgs[i] = f.Error()
	}
	return fmt.Errorf("lines %s failed:\n%s", strings.Join(nums, ", "), strings.Join(msgs, "\n"))
}
