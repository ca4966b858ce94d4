package tui

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/tui/internal/labtest"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

// updating says whether -update was given: rewrite testdata/*.golden from
// the current output. teatest's golden package defines the flag; define it
// here only if it is not there.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func TestMain(m *testing.M) {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite testdata/*.golden from the current output")
	}
	// Goldens must not depend on the terminal running the tests, or on CI.
	lipgloss.SetColorProfile(termenv.Ascii)
	lipgloss.SetHasDarkBackground(true)
	os.Exit(m.Run())
}

// golden compares got with testdata/name.golden, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -run %s -update to create it)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs from %s (rerun with -update if the change is meant):\n--- got\n%s\n--- want\n%s", t.Name(), path, got, want)
	}
}

// demoStart is the fixed clock of the hand-built states some tests draw.
var demoStart = time.Date(2025, 3, 14, 12, 3, 30, 0, time.UTC)

// fakeSource shows a fixed state and records every command line.
type fakeSource struct {
	mu    sync.Mutex
	state view.State
	lines []string
	ch    chan struct{}
	// reply, when set, answers Exec.
	reply func(line string) (string, error)
}

func newFakeSource(v view.State) *fakeSource {
	return &fakeSource{state: v, ch: make(chan struct{}, 1)}
}

func (f *fakeSource) View() view.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state
}

func (f *fakeSource) Exec(_ context.Context, o view.Order) (string, error) {
	line := o.Line
	f.mu.Lock()
	f.lines = append(f.lines, line)
	reply := f.reply
	f.mu.Unlock()
	if reply != nil {
		return reply(line)
	}
	return "done", nil
}

func (f *fakeSource) Changes() <-chan struct{} { return f.ch }

func (f *fakeSource) got() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.lines...)
}

func (f *fakeSource) has(line string) bool {
	for _, l := range f.got() {
		if l == line {
			return true
		}
	}
	return false
}

// bigState is 3 nodes and 12 partitions whose logs each hold a million
// retained messages, of which the source sends a window.
func bigState(window int) view.State {
	const leo = 1_000_000
	v := view.State{Time: demoStart, Clock: view.Clock{Speed: 1}, Timing: "classroom"}
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
		v.Timeline = append(v.Timeline, view.TimelineLine{Time: demoStart.Add(time.Duration(i) * time.Second), Kind: "append",
			Text: fmt.Sprintf("n1 stored offsets %d–%d of orders/%d", i*10, i*10+9, i%12)})
	}
	return v
}

func lines(s string) []string { return strings.Split(s, "\n") }

func teaSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

// set changes the state the fake source reports.
func (f *fakeSource) set(change func(*view.State)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(&f.state)
}

// newTestLab starts a fast lab, runs lines on it, and watches it with a
// LabSource; both are closed when the test ends.
func newTestLab(t testing.TB, lines ...string) (*lab.Lab, *source.LabSource) {
	t.Helper()
	l := labtest.NewLab(t)
	src := source.NewLabSource(l)
	t.Cleanup(src.Close)
	for _, line := range lines {
		mustExec(t, src, line)
	}
	return l, src
}

// mustExec runs a line as the prompt would.
func mustExec(t testing.TB, src view.Source, line string) string {
	t.Helper()
	return labtest.MustExec(t, src, ParseOrder(line))
}

var (
	checkLeaks  = labtest.CheckLeaks
	eventually  = labtest.Eventually
	partitionOf = labtest.PartitionOf
	nodeOf      = labtest.NodeOf
)

var testLesson = labtest.Lesson

// newLessonSource plays the test lesson on a fast lab; everything is
// closed, and checked for leaks, when the test ends.
func newLessonSource(t *testing.T, opts source.LessonOptions) *source.LessonSource {
	t.Helper()
	checkLeaks(t)
	_, labSrc := newTestLab(t)
	src, err := source.NewLessonSource(testLesson(t), labSrc, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	return src
}
