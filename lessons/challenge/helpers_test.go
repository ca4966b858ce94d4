package challenge

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Raft's leadership transfer runs goroutines it does not track; they end
// within an election timeout on their own (as in package lab's tests).
// Nothing else of a run, its lab or its program outlives it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*Raft).leadershipTransfer"),
		goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*Raft).leaderLoop.func2"),
	)
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
