package lab

import (
	"context"
	"fmt"

	"github.com/mqlab/mqlab/lab/command"
)

// Value reads one lab value exactly as wait and expect read it (a partition's
// leader or mark, a group's lag, a table's rows, a checker field…) and
// formats it for a reader. The lessons fill their {{…}} placeholders with it.
func (l *Lab) Value(ctx context.Context, e command.Expr) (string, error) {
	w, err := l.world()
	if err != nil {
		return "", err
	}
	rd := &reader{r: &run{l: l, w: w}, ctx: ctx}
	v, err := rd.expr(e)
	if err != nil {
		return "", err
	}
	return show(v), nil
}

// Holds evaluates a condition now, as expect does, and returns the lab
// values it read, formatted ("1500"). A condition on a checker field
// needs a check, which drains the cluster: Holds refuses it.
func (l *Lab) Holds(ctx context.Context, c command.Condition) (bool, []string, error) {
	if readsChecker(c) {
		return false, nil, fmt.Errorf("%s: %w", c, ErrNeedsCheck)
	}
	w, err := l.world()
	if err != nil {
		return false, nil, err
	}
	rd := &reader{r: &run{l: l, w: w}, ctx: ctx}
	var vals [2]any
	var shown []string
	for i, e := range []command.Expr{c.Left, c.Right} {
		v, err := rd.expr(e)
		if err != nil {
			return false, nil, err
		}
		vals[i] = v
		if e.Value.Kind == command.ValLab {
			shown = append(shown, show(v))
		}
	}
	return c.Eval(vals[0], vals[1]), shown, nil
}

// Resolve names the node a reference means now: leader(orders/0) is
// whoever leads it, follower(orders/0) its first live follower.
func (l *Lab) Resolve(ctx context.Context, ref command.NodeRef) (string, error) {
	w, err := l.world()
	if err != nil {
		return "", err
	}
	return w.resolve(ref)
}
