package lab

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mqlab/mqlab/internal/parallel"
)

// Raft's leadership transfer runs goroutines it does not track; they end
// within an election timeout on their own.
var leakOptions = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*Raft).leadershipTransfer"),
	goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*Raft).leaderLoop.func2"),
}

func TestMain(m *testing.M) {
	// Tests that wait on lab time, a few at a time. Under the race
	// detector they still mostly wait (under half a core at four at a
	// time), so six at a time.
	n := "8"
	if raceEnabled {
		n = "6"
	}
	parallel.Raise(n)
	goleak.VerifyTestMain(m, leakOptions...)
}

// newLab starts a fast-timing lab closed at the end of the test.
func newLab(t testing.TB) *Lab {
	t.Helper()
	l, err := New(Options{})
	if err != nil {
		t.Fatalf("new lab: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// mustRun executes lines that must all succeed.
func mustRun(t testing.TB, l *Lab, lines ...string) []Result {
	t.Helper()
	var out []Result
	for _, line := range lines {
		res, err := l.Exec(ctxFor(t, 60*time.Second), line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out = append(out, res)
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
