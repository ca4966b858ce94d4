package challenge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab"
)

// The timeline around an order names what happened near it; an order lost
// before any was reported gets the first kill's.
func TestChallengeAround(t *testing.T) {
	r := &Record{Keys: []string{"order-1", "order-2", "order-3"}, Timeline: []entry{
		{100 * time.Millisecond, "run 1 of the program starts (pid 7)"},
		{300 * time.Millisecond, "the lab kills run 1 (SIGKILL to its process group): the group has committed 1 orders and the program has reported 0"},
		{2 * time.Second, "run 2 reports processed order-2"},
	}}
	if got := r.around("order-1"); len(got) != 2 || !strings.Contains(got[1], "the lab kills run 1") {
		t.Errorf("around order-1: %q", got)
	}
	if got := r.around("order-3"); len(got) != 1 || !strings.Contains(got[0], "processed order-2") {
		t.Errorf("around order-3: %q", got)
	}
}

// A program that cannot be graded gets a message that says which way it
// went wrong, and neither it nor anything it started is left running.
func TestChallengeBadPrograms(t *testing.T) {
	ch := Find("at-least-once")
	for _, c := range []struct {
		name, script, want string
	}{
		{"exits at once", "exit 3", "the program exited at once (exit status 3"},
		{"garbage", "echo 'hello world'; wait", `run 1 wrote "hello world" to standard output; it may write only lines "processed KEY"`},
		{"never connects", "wait", "the program never connected to 127.0.0.1:"},
		{"has no empty variables", `if [ "${MQLAB_DB+set}" ]; then echo has MQLAB_DB >&2; else echo no MQLAB_DB >&2; fi; exit 3`, "no MQLAB_DB"},
		{"never connects, says why", "echo no broker answers at localhost:9092 >&2; wait", "its last words: no broker answers at localhost:9092"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "child")
			script := "sleep 60 & echo $! > " + pidFile + "; " + c.script
			_, err := Run(ctxFor(t, time.Minute), ch, Options{
				Command: []string{"sh", "-c", script}, Seed: 1, ConnectWithin: 2 * time.Second})
			if !errors.Is(err, ErrNotGraded) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			waitGone(t, pidFile)
		})
	}
	// Stopped from outside (Ctrl-C): the same.
	t.Run("stopped", func(t *testing.T) {
		t.Parallel()
		pidFile := filepath.Join(t.TempDir(), "child")
		ctx, cancel := context.WithCancel(ctxFor(t, time.Minute))
		done := make(chan error, 1)
		go func() {
			_, err := Run(ctx, ch, Options{Command: []string{"sh", "-c", "sleep 60 & echo $! > " + pidFile + "; wait"}, Seed: 1})
			done <- err
		}()
		// The shell makes the file before it writes the pid: wait for the
		// whole line.
		deadline := time.Now().Add(30 * time.Second)
		for b, _ := os.ReadFile(pidFile); !strings.HasSuffix(string(b), "\n"); b, _ = os.ReadFile(pidFile) {
			if time.Now().After(deadline) {
				t.Fatal("the program never started")
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		if err := <-done; err == nil {
			t.Fatal("a stopped run reported no error")
		}
		waitGone(t, pidFile)
	})
}

// waitGone waits for the process whose pid is in file to be gone: ended,
// or a zombie nobody has reaped yet.
func waitGone(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the program's child: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("the program's child: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the program's child %d still runs after the run ended", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A workload with a pause sends each key's last record at the end: what a
// paused run holds, a newer record of the same key follows. Each key's
// records keep their order.
func TestHoldLastBack(t *testing.T) {
	r := func(key, value string) ShopRecord { return ShopRecord{Key: key, Value: value} }
	sent := []ShopRecord{r("a", "1"), r("b", "1"), r("b", "2"), r("a", "2"), r("c", "1"), r("a", "3")}
	got, held := holdLastBack(sent)
	want := []ShopRecord{r("a", "1"), r("b", "1"), r("a", "2"), r("b", "2"), r("c", "1"), r("a", "3")}
	if held != 3 || !slices.Equal(got, want) {
		t.Errorf("holdLastBack(%v) = %v, %d; want %v, 3 (one held back per key)", sent, got, held, want)
	}
}

// The poison grade names each way a program can go wrong with poison,
// in order, with the orders involved and the timeline around them.
func TestGradePoison(t *testing.T) {
	r := &Record{
		Sent: []ShopRecord{
			{"order-1", "order 1 amount=450"}, {"order-2", "order 2 amount=" + poisonAmount},
			{"order-3", "order 3 amount=120"}, {"order-4", "order 4 amount=" + poisonAmount},
		},
		Keys:         []string{"order-1", "order-2", "order-3", "order-4"},
		Processed:    map[string][]string{"order-1": {"run 1"}, "order-4": {"run 1"}},
		Failed:       map[string][]string{"order-2": slices.Repeat([]string{"run 1"}, poisonTries+1)},
		DeadLettered: []lab.TopicRecord{{Key: "order-1"}, {Key: "order-4"}},
		Stalled:      true,
		Timeline:     []entry{{time.Second, "run 1 reports failed order-2"}, {3 * time.Second, "the lab kills run 1 (SIGKILL to its process group)"}},
	}
	got := gradePoison(r)
	want := []struct{ what, items string }{
		{"a poison order was tried without bound", "order-2, tried 6 times by run 1"},
		{"1 poison order was never parked", "order-2"},
		{"1 of 2 good orders was never processed: the partition stopped at a poison order", "order-3"},
		{"a poison order was reported processed", "order-4"},
		{"1 good order was parked in the dead-letter topic", "order-1"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d failures, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		f := got[i]
		if !strings.HasPrefix(f.What, w.what) || f.Kind != "orders" || strings.Join(f.Items, "|") != w.items || len(f.Around) == 0 {
			t.Errorf("failure %d: %+v; want %q about %q, with the timeline around", i, f, w.what, w.items)
		}
	}
	if got := gradeNothingLost(r); len(got) != 1 || !strings.HasPrefix(got[0].What, "2 of 4 orders were never processed") || strings.Join(got[0].Items, "|") != "order-2|order-3" {
		t.Errorf("gradeNothingLost: %+v", got)
	}
}
