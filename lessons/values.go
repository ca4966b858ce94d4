package lessons

import (
	"context"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/command"
)

// readExpr reads a lab value for a placeholder through the lab, the same
// way the lab's own wait and expect read it.
func readExpr(ctx context.Context, l *lab.Lab, e command.Expr) (string, error) {
	return l.Value(ctx, e)
}
