// Package screentest holds what the screen's and the panels' tests draw:
// a real lab's scene, recorded once and played back frame by frame, a few
// hand-made lab snapshots, and golden files.
package screentest

import (
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/internal/labtest"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

// The screen's tests draw a real lab: testdata/scene.mqlab, recorded once
// into testdata/scene.jsonl.gz and played back through the replay
// source's frames. To record it again (and then the goldens):
//
//	go test ./tui/internal/screentest -run TestRecordScene -record
//	go test ./tui/... -update

// dir is this package's folder, where the scene is kept.
func dir() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Dir(here)
}

// Recording is the recorded scene's file.
func Recording() string { return filepath.Join(dir(), "testdata", "scene.jsonl.gz") }

// Script is the scene's script.
func Script() string { return filepath.Join(dir(), "testdata", "scene.mqlab") }

var sceneOnce struct {
	sync.Once
	src *source.ReplaySource
	err error
}

// Scene is the recorded scene, read once.
func Scene(t testing.TB) *source.ReplaySource {
	t.Helper()
	sceneOnce.Do(func() {
		f, err := os.Open(Recording())
		if err != nil {
			sceneOnce.err = err
			return
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			sceneOnce.err = err
			return
		}
		sceneOnce.src, sceneOnce.err = source.ReadReplay(zr)
	})
	if sceneOnce.err != nil {
		t.Fatalf("the recorded scene: %v (TestRecordScene -record records it)", sceneOnce.err)
	}
	return sceneOnce.src
}

// View draws frame i of the scene afresh: the caller may change it.
func View(t testing.TB, i int) view.State {
	v := Scene(t).Frame(i)
	v.Clock = view.Clock{Speed: 1}
	return v
}

// End is the scene's last frame: the leader of orders/0 killed and
// replaced at a higher epoch, and back with its uncommitted tail cut.
// Each call returns a copy the caller may change.
func End(t testing.TB) view.State { return View(t, Scene(t).Frames()-1) }

// FrameOf is the index of the first frame whose timeline has a line
// of kind that contains text.
func FrameOf(t testing.TB, kind, text string) int {
	t.Helper()
	for i := range Scene(t).Frames() {
		for _, l := range View(t, i).Timeline {
			if l.Kind == kind && strings.Contains(l.Text, text) {
				return i
			}
		}
	}
	t.Fatalf("no frame of the scene ends its timeline with %s %q", kind, text)
	return 0
}

// Big is 3 nodes and 12 partitions whose logs each hold a million
// retained messages, of which the source sends a window.
func Big(window int) view.State {
	const leo = 1_000_000
	v := view.State{Time: labtest.DemoStart, Clock: view.Clock{Speed: 1}, Timing: "classroom"}
	for i := 1; i <= 3; i++ {
		v.Nodes = append(v.Nodes, view.Node{ID: fmt.Sprintf("n%d", i), Up: true})
	}
	for p := 0; p < 12; p++ {
		name := fmt.Sprintf("orders/%d", p)
		leader := p % 3
		v.Nodes[leader].Leads = append(v.Nodes[leader].Leads, name)
		pt := view.Partition{Name: name, Leader: v.Nodes[leader].ID, Epoch: 8}
		for n := 0; n < 3; n++ {
			end := int64(leo)
			if n != leader {
				end -= int64(n + 1)
			}
			r := view.Replica{Node: v.Nodes[n].ID, Role: "follower", Epoch: 8, LogStart: 0, HWM: leo - 3, LEO: end}
			if n == leader {
				r.Role = "leader"
			}
			for o := end - int64(window); o < end; o++ {
				e := uint64(8)
				if o < leo-20 {
					e = 7
				}
				r.Entries = append(r.Entries, view.Entry{Offset: o, Epoch: e, Key: "k", Value: "v", Committed: o < r.HWM})
			}
			pt.Replicas = append(pt.Replicas, r)
		}
		v.Partitions = append(v.Partitions, pt)
	}
	for i := 0; i < 200; i++ {
		v.Timeline = append(v.Timeline, view.TimelineLine{Time: labtest.DemoStart.Add(time.Duration(i) * time.Second), Kind: "append",
			Text: fmt.Sprintf("n1 stored offsets %d–%d of orders/%d", i*10, i*10+9, i%12)})
	}
	return v
}

// LabShaped is what the lab adapter gives after the leader of
// orders/0 was killed: the dead node reports nothing (its memory is gone),
// and a check has run.
func LabShaped() view.State {
	entries := func(epoch uint64) []view.Entry {
		return []view.Entry{{Offset: 0, Epoch: epoch, Committed: true}, {Offset: 1, Epoch: epoch, Committed: true}, {Offset: 2, Epoch: epoch, Committed: true}}
	}
	return view.State{
		Time: labtest.DemoStart, Clock: view.Clock{Speed: 1}, Timing: "classroom",
		Nodes: []view.Node{{ID: "n1"}, {ID: "n2", Up: true, Leads: []string{"controller", "orders/0"}}, {ID: "n3", Up: true}},
		Partitions: []view.Partition{{Name: "orders/0", Leader: "n2", Epoch: 4, Replicas: []view.Replica{
			{Node: "n1", Role: "down"},
			{Node: "n2", Role: "leader", Epoch: 4, HWM: 3, LEO: 3, Entries: entries(3)},
			{Node: "n3", Role: "follower", Epoch: 4, HWM: 3, LEO: 3, Entries: entries(3)},
		}}},
		Checker: view.Checker{At: labtest.DemoStart.Add(-time.Minute), Fields: []view.CheckField{
			{Name: "confirmed", Value: 9, OK: true},
			{Name: "lost", Value: 0, OK: true},
			{Name: "unknown", Value: 0, OK: true},
		}},
	}
}

// LessonBlocks is a step as a LessonSource shows it, played to its
// end: narrative, the lab's commands, a wrong prediction revealed, a task
// done, expectations of which one failed, and the notice that says so.
func LessonBlocks() *view.Lesson {
	return &view.Lesson{
		ID: "failover", Title: "Leader failover: epochs, truncation and the repeat",
		Step: 2, Steps: 5, StepTitle: "A batch only the leader holds",
		Status: lessons.StatusFailed,
		Notice: "This step did not go as the lesson expects: hwm(orders/0) == 2000 (hwm(orders/0) is 1500) does not hold. " +
			"During this step you ran: kill n2. :lesson reset starts the step again on a fresh cluster.",
		Blocks: []view.LessonBlock{
			{Kind: view.BlockText, Text: "The next batch, offsets **1,500 to 1,999**, reaches n1 at the worst\nmoment: n1 has just lost contact with both followers."},
			{Kind: view.BlockPrediction, Prediction: &view.Prediction{Question: "What becomes of the batch?",
				Choices: []string{"both are lost", "0 to 1,499 survive; the batch is lost", "0 to 1,499 survive; the checkout retries the batch"},
				Chosen:  1, Answer: 2, Why: "Everything below the high-water mark is on a majority."}},
			{Kind: view.BlockCommands, Commands: []view.CommandLine{{Text: "partition n1 | n2,n3", OK: true},
				{Text: "wait hwm(orders/0) == 2000", Note: "timed out after 10s"}}},
			{Kind: view.BlockTask, Task: &view.Task{Text: "Kill n1.", Hint: "key: select n1 and press k · or type: kill n1", Done: true}},
			{Kind: view.BlockText, Text: "| acks | told \"ok\" | lost |\n|---|---|---|\n| 1 | 500 | 12 |"},
			{Kind: view.BlockExpect, Expectations: []view.Expectation{
				{Text: "hwm(orders/0) == 2000", Label: "the retried batch is committed", Checked: true, Got: "hwm(orders/0) is 1500"},
				{Text: "leo(orders/0@n1) == 2000", Label: "n1 holds its own copy of it", Checked: true, OK: true, Got: "leo(orders/0@n1) is 2000"},
				{Text: "confirmed == 1500", Checked: true, OK: true, Got: "confirmed is 1500"},
			}},
		},
	}
}
