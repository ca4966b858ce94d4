package lessons

import (
	"context"
	"strconv"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/command"
)

// readExpr reads a lab value for a placeholder through the lab, the same
// way the lab's own wait and expect read it.
func readExpr(ctx context.Context, l *lab.Lab, e command.Expr) (string, error) {
	return l.Value(ctx, e)
}

// recall puts the numbers the lesson kept ({{epoch(orders/0) as before}})
// into a line's condition where it compares with one (epoch(orders/0) >
// before), and says which it used: "before is 3". A line without one is
// returned as it is; a name nothing has kept yet stays, and the lab says
// so when it reads it.
func (r *Runner) recall(line command.Line) (command.Line, []string) {
	var used []string
	fill := func(c command.Condition) command.Condition {
		for _, e := range []*command.Expr{&c.Left, &c.Right} {
			if e.Value.Kind != command.ValSaved {
				continue
			}
			s, ok := r.kept[e.Value.Word]
			if !ok {
				continue
			}
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				used = append(used, e.Value.Word+" is "+s)
				e.Value = command.Value{Kind: command.ValNumber, Num: f}
			}
		}
		return c
	}
	switch c := line.Cmd.(type) {
	case command.Expect:
		c.Cond = fill(c.Cond)
		line.Cmd = c
	case command.Wait:
		c.Cond = fill(c.Cond)
		line.Cmd = c
	}
	return line, used
}
