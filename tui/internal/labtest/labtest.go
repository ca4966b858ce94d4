// Package labtest holds what the screen's and the sources' tests share:
// a fast lab, checking for leaked goroutines, running orders and waiting
// for the view to show something.
package labtest

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/view"
)

// RaftLeaks are goroutines that outlive a test by design. Raft's
// leadership transfer runs goroutines it does not track; they end within
// an election timeout.
var RaftLeaks = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*Raft).leadershipTransfer"),
	goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*Raft).leaderLoop.func2"),
	// teatest waits for a SIGINT for as long as the test binary runs.
	goleak.IgnoreAnyFunction("github.com/charmbracelet/x/exp/teatest.NewTestModel.func2"),
}

// CheckLeaks fails the test if it leaves goroutines behind; it runs after
// every other cleanup (the lab's Close among them).
func CheckLeaks(t *testing.T) {
	opts := append([]goleak.Option{goleak.IgnoreCurrent()}, RaftLeaks...)
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
}

// NewLab starts a fast lab of three nodes, closed when the test ends.
func NewLab(t testing.TB) *lab.Lab {
	t.Helper()
	l, err := lab.New(lab.Options{Nodes: 3, Timing: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// MustExec runs an order on src, failing the test if it fails.
func MustExec(t testing.TB, src view.Source, o view.Order) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := src.Exec(ctx, o)
	if err != nil {
		t.Fatalf("%s: %v", o.Line, err)
	}
	return out
}

// Eventually polls the source's view until cond holds, and returns it.
func Eventually(t *testing.T, src view.Source, what string, cond func(v view.State) bool) view.State {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		v := src.View()
		if cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %s; last view: nodes %+v partitions %+v", what, v.Nodes, v.Partitions)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// PartitionOf is the partition named name in v, or nil.
func PartitionOf(v view.State, name string) *view.Partition {
	for i := range v.Partitions {
		if v.Partitions[i].Name == name {
			return &v.Partitions[i]
		}
	}
	return nil
}

// NodeOf is the node id in v, or nil.
func NodeOf(v view.State, id string) *view.Node {
	for i := range v.Nodes {
		if v.Nodes[i].ID == id {
			return &v.Nodes[i]
		}
	}
	return nil
}

// Lesson is testdata/kill-the-leader.md: three committed orders; a
// prediction, then a task to kill the leader; a task to restart it.
func Lesson(t testing.TB) *lessons.Lesson {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	les, err := lessons.Load(filepath.Join(filepath.Dir(here), "testdata", "kill-the-leader.md"))
	if err != nil {
		t.Fatal(err)
	}
	return les
}
