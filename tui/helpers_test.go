package tui

import (
	"context"
	"strings"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/tui/internal/labtest"
	"github.com/mqlab/mqlab/tui/internal/screentest"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

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

func TestMain(m *testing.M) { screentest.Main(m) }

// What the screen's tests draw: the recorded scene and hand-made states.
var (
	golden            = screentest.Golden
	checkSize         = screentest.CheckSize
	scene             = screentest.Scene
	sceneEnd          = screentest.End
	sceneView         = screentest.View
	sceneFrame        = screentest.FrameOf
	demoStart         = labtest.DemoStart
	labShapedState    = screentest.LabShaped
	lessonBlocksState = screentest.LessonBlocks
	flashSale         = labtest.FlashSale
	outboxSnapshot    = labtest.Outbox
	bigState          = screentest.Big
)
