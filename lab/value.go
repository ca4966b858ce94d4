package lab

import (
	"context"

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
