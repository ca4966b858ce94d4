package tui

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/draw"
)

func pressKeys(tm *teatest.TestModel, keys ...string) {
	for _, k := range keys {
		switch k {
		case "enter":
			tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
		case "backspace":
			tm.Send(tea.KeyMsg{Type: tea.KeyBackspace})
		default:
			tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
		}
	}
}

// waitLong is waitText with room for a lab to start and a lesson step to
// play on a busy machine.
func waitLong(t *testing.T, tm *teatest.TestModel, texts ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return containsAll(string(b), texts...)
	}, teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

// The whole program as a learner meets it: the picker, a lesson opened
// from it, a step with n, a prediction answered with its letter, the
// leader killed with k once the task's hint is asked for — the task ticks off and
// the cluster shows the new leader at a higher epoch — and back to the
// picker, which shows where the learner is.
func TestEndToEndLessonFromThePicker(t *testing.T) {
	checkLeaks(t)
	// A learner named beforehand, so the order the choices are shown in is
	// known.
	path := filepath.Join(t.TempDir(), "progress.json")
	if err := os.WriteFile(path, []byte(`{"version":1,"lessons":{},"learner":"e2e"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := lessons.OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	les := testLesson(t)
	right := string(rune('a' + slices.Index(lessons.ShownOrder("e2e", les.ID, "s2.p1", 2), 1))) // the file's b
	app, err := NewApp(AppOptions{Lessons: []*lessons.Lesson{les}, Progress: store, Timing: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Close)
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(120, 40))

	waitText(t, tm, "mqlab │ Lessons", "1  Test: the leader dies", "Sandbox — a free lab with no lesson")
	pressKeys(tm, "enter")
	waitLong(t, tm, "Three committed orders", "Step done — n: next step")

	pressKeys(tm, "n")
	waitLong(t, tm, "Your turn: press a–b to predict")
	pressKeys(tm, right)
	waitLong(t, tm, "You chose "+right+") and predicted it.", "[ ] Kill the leader, n1.", "t: a hint, if you want one", "Your turn: the task above — t for a hint")
	pressKeys(tm, "t") // the task is a goal; its commands show when asked for
	waitLong(t, tm, "key: select n1 and press k")

	// n1 is selected (the first node) and leads orders/0.
	pressKeys(tm, "k")
	header := regexp.MustCompile(`orders/0  leader ▲ (n2|n3)  epoch (\d+) \(new, was (\d+)\)`)
	// One wait for all three: WaitFor consumes what it reads, and the
	// screen redraws only the rows that change.
	sawHeader := false
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, sm := range header.FindAllSubmatch(b, -1) {
			now, _ := strconv.Atoi(string(sm[2]))
			was, _ := strconv.Atoi(string(sm[3]))
			sawHeader = sawHeader || now > was
		}
		return sawHeader && containsAll(string(b), "["+draw.SymOK+"] Kill the leader, n1.", "Step done — n: next step")
	}, teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(20*time.Millisecond))

	pressKeys(tm, "backspace")
	waitText(t, tm, "mqlab │ Lessons", "▸ step 2/3")
	if lp, _ := store.Lesson("test-kill-the-leader"); lp.Step != 1 || !lp.Answers["s2.p1"].Correct {
		t.Errorf("progress: %+v", lp)
	}
	pressKeys(tm, "q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// The sandbox opens from the picker with its startup commands; after a
// lesson it starts on a fresh cluster.
func TestEndToEndSandbox(t *testing.T) {
	checkLeaks(t)
	app, err := NewApp(AppOptions{Lessons: []*lessons.Lesson{testLesson(t)}, Timing: "fast",
		Sandbox: []string{"topic create sandbox partitions=1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Close)
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(100, 30))
	waitText(t, tm, "Sandbox — a free lab with no lesson")
	pressKeys(tm, "enter") // the lesson first: the sandbox then needs a fresh cluster
	waitLong(t, tm, "Three committed orders", "Step done — n: next step")
	pressKeys(tm, "backspace", "G", "enter") // the sandbox is last, after the challenges
	waitLong(t, tm, "sandbox/0  leader")
	<-app.labDone
	for _, tp := range app.lab.Snapshot().Cluster.Topics {
		if tp.Config.Name == "orders" {
			t.Error("the sandbox kept the lesson's topic: it did not start on a fresh cluster")
		}
	}
	pressKeys(tm, "?")
	waitText(t, tm, "backspace back to the lessons")
	pressKeys(tm, "q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// An answer pressed 50 ms after enter on a lesson, while the lab is still
// being set up for its first step, waits for the step and is then taken;
// so does one pressed 50 ms after n, while the next step sets up. A
// learner who answers as the question appears loses nothing.
func TestAnswerPressedWhileTheLessonOpens(t *testing.T) {
	checkLeaks(t)
	les, err := lessons.Parse("quick.md", []byte("---\nid: quick\ntitle: Quick question\nconcepts: [acks]\n---\n\n"+
		"## Asked at once\n\n```lab\ncluster nodes=3\ntopic create orders partitions=1\nwait leader(orders/0) != none\n```\n\n"+
		"```predict\nconcept: acks\nHow many partitions does orders have?\n- [x] one\n- [ ] three\nwhy: It was created with one.\n```\n\n"+
		"```expect\nconcept: acks\nleader(orders/0) != none\n```\n\n"+
		"## Asked again\n\n```lab\ntopic create receipts partitions=1\nwait leader(receipts/0) != none\n```\n\n"+
		"```predict\nconcept: acks\nHow many topics are there now?\n- [ ] one\n- [x] two\nwhy: Two were created.\n```\n\n"+
		"```expect\nconcept: acks\nleader(receipts/0) != none\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	app, err := NewApp(AppOptions{Lessons: []*lessons.Lesson{les}, Timing: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Close)
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(100, 30))
	waitText(t, tm, "mqlab │ Lessons", "Quick question")
	pressKeys(tm, "enter")
	time.Sleep(50 * time.Millisecond) // the learner's reaction, not a wait for the lab
	pressKeys(tm, "a")
	waitLong(t, tm, "You chose a) and predicted it.", "Step done — n: next step")
	// The same for the next step: its set-up runs its commands first.
	pressKeys(tm, "n")
	time.Sleep(50 * time.Millisecond)
	pressKeys(tm, "b")
	waitLong(t, tm, "You chose b) and predicted it.")
	pressKeys(tm, "q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}
