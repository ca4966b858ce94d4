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
	r := (&reader{r: &run{l: l, w: w}, ctx: ctx}).holds(c)
	return r.Held, r.Shown, r.Err
}

// Reading is a condition as Peek read it: whether it held, the values it
// read (formatted), or why it could not be read.
type Reading struct {
	Held  bool
	Shown []string
	Err   error
}

// Peek evaluates conditions now as Holds does, and reads checker fields
// too, all from one check that leaves no trace: no job on screen, no
// report kept as the lab's last check. A check drains, so it can wait up
// to DrainTimeout for leaders. It serves an audit that compares what a
// lesson's expectations read at different moments.
func (l *Lab) Peek(ctx context.Context, conds []command.Condition) []Reading {
	out := make([]Reading, len(conds))
	w, err := l.world()
	if err != nil {
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	rd := &reader{r: &run{l: l, w: w}, ctx: ctx, quiet: true}
	for i, c := range conds {
		out[i] = rd.holds(c)
	}
	return out
}

// holds evaluates c with what rd has read so far.
func (rd *reader) holds(c command.Condition) Reading {
	var vals [2]any
	var shown []string
	for i, e := range []command.Expr{c.Left, c.Right} {
		v, err := rd.expr(e)
		if err != nil {
			return Reading{Err: err}
		}
		vals[i] = v
		if e.Value.Kind == command.ValLab || e.Value.Kind == command.ValField {
			shown = append(shown, show(v))
		}
	}
	return Reading{Held: c.Eval(vals[0], vals[1]), Shown: shown}
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
